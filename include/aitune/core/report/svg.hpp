// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The report as an SVG chart, viewable in any browser with no other tool: one row per backend
/// with its latency distribution, the baseline's median as a dashed line across every row, and
/// the selected backend highlighted, so a reader sees at a glance who won and by how much.
///
/// With the timed calls (CandidateReport::samples_ms) a row is a box from the 25th to the 75th
/// percentile, whiskers from the 5th to the 95th, the median as a bar and the calls as a strip
/// of dots; without them (a report read back from a tuning cache) the whisker runs from the
/// minimum to the 99th percentile, with the median and the 90th percentile marked.

#include "aitune/core/report/detail/rows.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

namespace detail {

/// `text` with the five XML special characters escaped.
inline std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

/// A step of 1, 2 or 5 times a power of ten that cuts [0, span] into about `parts` pieces.
inline double nice_step(double span, int parts) {
  const double raw = span / parts;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10.0 * power;
}

/// What one row of the chart draws, in milliseconds.
struct ChartRow {
  const CandidateReport* row;
  std::string role;
  bool is_baseline = false;
  bool measured = false;
  double whisker_low = 0.0, box_low = 0.0, median = 0.0, box_high = 0.0, whisker_high = 0.0;
  std::vector<double> dots{};  ///< the calls shown as a strip (at most 400, evenly picked)
};

inline ChartRow chart_row(const ReportRow& report_row) {
  const CandidateReport& row = *report_row.backend;
  ChartRow chart{&row, report_row.role, report_row.is_baseline};
  if (!row.latency) return chart;
  chart.measured = true;
  if (!row.samples_ms.empty()) {
    std::vector<double> sorted = row.samples_ms;
    std::sort(sorted.begin(), sorted.end());
    chart.whisker_low = quantile_of_sorted(sorted, 0.05);
    chart.box_low = quantile_of_sorted(sorted, 0.25);
    chart.median = quantile_of_sorted(sorted, 0.5);
    chart.box_high = quantile_of_sorted(sorted, 0.75);
    chart.whisker_high = quantile_of_sorted(sorted, 0.95);
    const std::size_t step = std::max<std::size_t>(1, row.samples_ms.size() / 400);
    for (std::size_t i = 0; i < row.samples_ms.size(); i += step)
      chart.dots.push_back(row.samples_ms[i]);
  } else {
    const LatencyStats& stats = *row.latency;
    chart.whisker_low = stats.min;
    chart.box_low = stats.median;
    chart.median = stats.median;
    chart.box_high = stats.p90;
    chart.whisker_high = stats.p99;
  }
  return chart;
}

}  // namespace detail

/// The report as a standalone SVG document (see the file's comment). `subtitle` is a line
/// under the title, e.g. the device and the LibTorch version (empty: none).
[[nodiscard]] inline std::string render_svg(const TuneReport& report,
                                            std::string_view subtitle = {}) {
  using detail::xml_escape;
  std::vector<detail::ChartRow> rows;
  for (const detail::ReportRow& row : detail::report_rows(report))
    rows.push_back(detail::chart_row(row));

  double high = 0.0;
  for (const auto& row : rows) {
    if (!row.measured) continue;
    high = std::max(high, row.whisker_high);
    for (const double dot : row.dots)
      high = std::max(high, dot);
  }
  const bool any_measured = high > 0.0;
  const double step = any_measured ? detail::nice_step(high, 6) : 1.0;
  const double axis_max = any_measured ? std::ceil(high * 1.02 / step) * step : 1.0;

  constexpr double label_width = 300.0;
  constexpr double plot_width = 520.0;
  constexpr double note_width = 200.0;
  constexpr double row_height = 34.0;
  constexpr double top = 66.0;
  const double width = label_width + plot_width + note_width;
  const double plot_bottom = top + row_height * static_cast<double>(rows.size());
  const double height = plot_bottom + 58.0;
  const auto x_of = [&](double ms) { return label_width + plot_width * ms / axis_max; };

  std::string svg =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
                  "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
                  "font-size=\"13\">\n"
                  "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
                  width, height);
  svg += fmt::format("<text x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{} - module "
                     "'{}': latency at batch size 1</text>\n",
                     xml_escape(report.strategy), xml_escape(report.module));
  svg += fmt::format("<text x=\"12\" y=\"44\" fill=\"#555555\">{}</text>\n",
                     xml_escape(subtitle.empty() ? std::string_view(report.decision) : subtitle));

  // Grid and axis.
  for (double tick = 0.0; tick <= axis_max + step / 2; tick += step) {
    const double x = x_of(tick);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#e5e5e5\"/>\n",
                       x, top - 4, plot_bottom);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
                       "fill=\"#555555\">{}</text>\n",
                       x, plot_bottom + 18, format_fixed(tick, step < 1.0 ? 2 : 0));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
                     "fill=\"#555555\">latency (ms)</text>\n",
                     label_width + plot_width / 2, plot_bottom + 38);

  for (std::size_t i = 0; i < rows.size(); ++i) {
    const detail::ChartRow& chart = rows[i];
    const CandidateReport& row = *chart.row;
    const double y = top + row_height * static_cast<double>(i) + row_height / 2;
    if (row.selected) {
      svg += fmt::format("<rect x=\"4\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" "
                         "fill=\"#e8f5e9\"/>\n",
                         y - row_height / 2 + 1, width - 8, row_height - 2);
    }
    svg += fmt::format("<text x=\"12\" y=\"{:.1f}\"{}>{}{} {}</text>\n", y + 4,
                       row.selected ? " font-weight=\"bold\"" : "", row.selected ? "&#9733; " : "",
                       xml_escape(chart.role), xml_escape(row.backend));
    std::string note;
    if (!chart.measured) {
      note = std::string(to_label(row.status));
    } else {
      const char* colour = row.selected ? "#2e7d32" : chart.is_baseline ? "#616161" : "#1565c0";
      for (const double dot : chart.dots) {
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"1.3\" fill=\"{}\" "
                           "fill-opacity=\"0.25\"/>\n",
                           x_of(dot), y + 10, colour);
      }
      svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                         "stroke=\"{}\"/>\n",
                         x_of(chart.whisker_low), y - 3, x_of(chart.whisker_high), y - 3, colour);
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"12\" "
                         "fill=\"{}\" fill-opacity=\"0.35\" stroke=\"{}\"/>\n",
                         x_of(chart.box_low), y - 9,
                         std::max(1.0, x_of(chart.box_high) - x_of(chart.box_low)), colour, colour);
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
                         "stroke=\"{3}\" stroke-width=\"3\"/>\n",
                         x_of(chart.median), y - 11, y + 5, colour);
      note = format_ms(row.latency->median);
      if (const auto speedup = detail::chained_speedup(report, row);
          speedup && !chart.is_baseline) {
        note += " (" + format_speedup(*speedup) + ")";
      }
    }
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\"{}>{}</text>\n", label_width + plot_width + 12, y + 4,
        row.selected ? " font-weight=\"bold\"" : " fill=\"#333333\"", xml_escape(note));
  }

  if (report.baseline && report.baseline->latency) {
    const double x = x_of(report.baseline->latency->median);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
                       "stroke=\"#c62828\" stroke-dasharray=\"5,4\"/>\n",
                       x, top - 8, plot_bottom);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#c62828\" "
                       "font-size=\"11\">baseline median</text>\n",
                       x, top - 11);
  }
  svg += fmt::format("<text x=\"12\" y=\"{:.1f}\" fill=\"#555555\" font-size=\"11\">{}</text>\n",
                     height - 8,
                     std::none_of(rows.begin(), rows.end(),
                                  [](const detail::ChartRow& row) { return !row.dots.empty(); })
                         ? "whiskers: min to p99; box: median to p90"
                         : "box: 25th-75th percentile; whiskers: 5th-95th; bar: median; dots: "
                           "timed calls");
  svg += "</svg>\n";
  return svg;
}

}  // namespace aitune
