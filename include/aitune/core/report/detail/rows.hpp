// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The rows the table, the markdown and the SVG chart share: each backend's role and the cells
/// of figures they format alike.

#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

namespace detail {

/// What a cache hit's check compared the rebuilt choice with, for the table and the markdown.
[[nodiscard]] inline std::string_view checked_against(const CacheHit& hit) {
  return hit.stored_reference ? ", against the baseline's outputs stored with the decision" : "";
}

/// The cells of one backend's row that the table and the markdown share (the latencies apart:
/// the table gives each its unit, the markdown names it in the header). "-" where there is
/// nothing to show.
struct RowCells {
  std::string cv;  ///< coefficient of variation, in %
  /// The ratio to the selected backend with its interval (vs_selected); measured apart (no paired
  /// rounds), the ratio of the medians.
  std::string ratio;
  std::string speedup;  ///< over the baseline, chained through the selected (chained_speedup)
  std::string calls;
  std::string precision;
  std::string error;   ///< the worst output's error as a share of its tolerance, in %
  std::string memory;  ///< kept / peak MiB, the device's where the report has device figures
};

/// Whether the memory column shows device memory (some row has device figures) or the host's.
inline bool memory_on_device(const TuneReport& report) {
  const auto on_device = [](const CandidateReport& row) {
    return row.memory && row.memory->has_device();
  };
  return (report.baseline && on_device(*report.baseline)) ||
         std::any_of(report.candidates.begin(), report.candidates.end(), on_device);
}

inline std::string memory_header(const TuneReport& report) {
  return memory_on_device(report) ? "GPU MiB kept/peak" : "MiB kept/peak";
}

inline std::string format_mib(std::int64_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  return format_fixed(mib, std::abs(mib) < 10.0 ? 1 : 0);
}

inline std::string memory_cell(const CandidateReport& row, bool on_device) {
  if (!row.memory) return "-";
  const MemoryUse& m = *row.memory;
  const auto& kept = on_device ? m.device_kept_bytes : m.host_kept_bytes;
  const auto& peak = on_device ? m.device_peak_bytes : m.host_peak_bytes;
  if (!kept && !peak) return "-";
  return fmt::format("{} / {}", kept ? format_mib(*kept) : "-", peak ? format_mib(*peak) : "-");
}

/// A row's ratio to the selected backend: with its interval where it has paired rounds.
inline std::string ratio_cell(const CandidateReport& row) {
  if (!row.vs_selected) return "-";
  const RatioReport& r = *row.vs_selected;
  if (row.selected || r.rounds == 0) return format_fixed(r.ratio);
  return format_ratio(r.ratio, r.low, r.high);
}

/// A row's speedup over the baseline, chained through the selected backend (the selected one's
/// paired speedup over the baseline, divided by the row's ratio to it), so that the speedups
/// order the rows as the race did; the baseline's is 1. Without a ratio to the selected (a
/// report read from a cache written before it), the row's own speedup.
inline std::optional<double> chained_speedup(const TuneReport& report, const CandidateReport& row) {
  if (report.baseline && &row == &*report.baseline) return row.speedup;
  const CandidateReport* selected =
      report.baseline_selected && report.baseline ? &*report.baseline : report.selected_candidate();
  if (selected == nullptr || !selected->speedup || !row.vs_selected) return row.speedup;
  if (!(row.vs_selected->ratio > 0.0)) return std::nullopt;
  return *selected->speedup / row.vs_selected->ratio;
}

inline RowCells row_cells(const TuneReport& report, const CandidateReport& row,
                          bool memory_on_device) {
  const OutputAccuracy* worst = worst_accuracy(row);
  const std::optional<double> speedup = chained_speedup(report, row);
  return RowCells{row.latency && std::isfinite(row.latency->cv)
                      ? format_fixed(row.latency->cv * 100.0, 1) + " %"
                      : std::string("-"),
                  ratio_cell(row),
                  speedup ? format_speedup(*speedup) : std::string("-"),
                  row.calls > 0 ? fmt::format("{}", row.calls) : std::string("-"),
                  computed_in(row).empty() ? std::string("-") : computed_in(row),
                  row.judged_by_budget ? std::string("budget")
                  : worst              ? format_fixed(worst->worst_error_ratio * 100.0, 0) + " %"
                                       : std::string("-"),
                  memory_cell(row, memory_on_device)};
}

/// The note of a row the accuracy budget judged and admitted: its figures against the budget
/// (a row it refused says why in its reason). Empty for any other row.
inline std::string accuracy_note(const CandidateReport& row) {
  if (!row.judged_by_budget || row.status != CandidateStatus::ok) return {};
  return "within the accuracy budget: " + row.accuracy_verdict;
}

/// The ratio column's header: the ratio to the selected backend, with the level of its intervals
/// when the decision used some.
inline std::string ratio_header(const TuneReport& report) {
  return report.measurement.confidence > 0.0
             ? fmt::format("vs selected [{} CI]", format_level(report.measurement.confidence))
             : std::string("vs selected");
}

/// One row of a rendering: the backend, its role ("baseline", or "#1" for the first candidate)
/// and its shared cells.
struct ReportRow {
  std::string role;
  bool is_baseline = false;
  const CandidateReport* backend = nullptr;
  RowCells cells;
};

/// The rows every renderer shows, in order: the baseline (if any), then each candidate.
inline std::vector<ReportRow> report_rows(const TuneReport& report) {
  const bool on_device = memory_on_device(report);
  std::vector<ReportRow> rows;
  if (report.baseline)
    rows.push_back(ReportRow{"baseline", true, &*report.baseline,
                             row_cells(report, *report.baseline, on_device)});
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    const CandidateReport& candidate = report.candidates[i];
    rows.push_back(ReportRow{fmt::format("#{}", i + 1), false, &candidate,
                             row_cells(report, candidate, on_device)});
  }
  return rows;
}

/// What the race's steady-state final decided on, in one sentence: the finalist it selected with
/// its median as a server calls it beside the race's interleaved one, and the race's own leader
/// where that differs. Empty without a final.
[[nodiscard]] inline std::string describe_steady_final(const TuneReport& report) {
  const std::optional<SteadyFinalReport>& final = report.measurement.steady_final;
  if (!final) return {};
  const auto medians = [&](const std::string& name) {
    const auto row = std::find_if(report.candidates.begin(), report.candidates.end(),
                                  [&](const CandidateReport& r) { return r.backend == name; });
    if (row == report.candidates.end() || !row->latency) return name;
    return fmt::format("{} ({} steady, {} interleaved)", name,
                       row->steady_median_ms ? format_ms(*row->steady_median_ms) : "-",
                       format_ms(row->latency->median));
  };
  std::string text = fmt::format("steady-state final over {} finalist(s), {} round(s){}: {}",
                                 final->finalists.size(), final->rounds,
                                 final->cut_short.empty() ? "" : ", cut short: " + final->cut_short,
                                 medians(final->pick));
  if (!final->finalists.empty() && final->finalists.front() != final->pick) {
    text += fmt::format(", ahead of the race's leader {}", medians(final->finalists.front()));
  }
  return text;
}

/// The shapes a tuning decided on, with their weights and the selected backend's median at each,
/// and the range the module serves; empty when there was one shape and nothing was checked only.
[[nodiscard]] inline std::string describe_shapes(const TuneReport& report) {
  const MeasurementReport& m = report.measurement;
  std::string text;
  if (!m.shapes.empty()) {
    const CandidateReport* selected = report.baseline_selected && report.baseline
                                          ? &*report.baseline
                                          : report.selected_candidate();
    std::vector<std::string> timed;
    std::vector<std::string> checked;
    for (const ShapeShare& share : m.shapes) {
      const std::string shape = share.shape.empty() ? std::string("(one shape)") : share.shape;
      if (share.weight == 0.0) {
        checked.push_back(shape);
        continue;
      }
      std::string entry = fmt::format("{} weight {:.3g} ({} sample{})", shape, share.weight,
                                      share.samples, share.samples == 1 ? "" : "s");
      const std::size_t at = timed.size();
      if (selected != nullptr && at < selected->shape_medians_ms.size())
        entry += fmt::format(", selected {}", format_ms(selected->shape_medians_ms[at]));
      timed.push_back(std::move(entry));
    }
    text = fmt::format("shapes: {}", fmt::join(timed, "; "));
    if (timed.size() > 1) text += "; each median is the shapes' medians weighted";
    if (!checked.empty()) text += fmt::format("; checked, not timed: {}", fmt::join(checked, ", "));
  }
  if (!m.serves.empty()) {
    text += fmt::format("{}serves: {}", text.empty() ? "" : "\n", m.serves);
  }
  return text;
}

/// The load a tuning at a server's load measured at, in one sentence, with what the selected
/// backend serves there: its latency per call at that load (median, p99) and the requests per
/// second that follow (callers over the median). Empty at one caller.
[[nodiscard]] inline std::string describe_callers(const TuneReport& report) {
  const int callers = report.measurement.callers;
  if (callers <= 1) return {};
  std::string text = fmt::format("load: {} callers at once, each timed call their {} calls, until "
                                 "the last ended",
                                 callers, callers);
  const CandidateReport* selected =
      report.baseline && report.baseline->backend == report.selected ? &*report.baseline : nullptr;
  for (const CandidateReport& row : report.candidates) {
    if (row.backend == report.selected) selected = &row;
  }
  if (selected != nullptr && selected->latency && selected->latency->median > 0.0) {
    text += fmt::format("; the selected serves them at {} per call (p99 {}), {:.1f} requests/s",
                        format_ms(selected->latency->median), format_ms(selected->latency->p99),
                        1000.0 * callers / selected->latency->median);
  }
  return text;
}

}  // namespace detail

}  // namespace aitune
