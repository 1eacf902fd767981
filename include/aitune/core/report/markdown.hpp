// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The report as GitHub-flavoured markdown, for pull requests and issue comments: the decision
/// first, then one table row per backend, the reasons, how it was measured and, when given, the
/// environment.

#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/report/detail/rows.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

namespace detail {

/// `text` made safe inside a markdown table cell.
inline std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace detail

/// The report as markdown. `environment` (an object of scalars, e.g. the device and versions)
/// is listed at the end when it is not null.
[[nodiscard]] inline std::string render_markdown(const TuneReport& report,
                                                 const nlohmann::json& environment = nullptr) {
  using detail::markdown_cell;
  std::string md = fmt::format("### {}: module `{}` (batch size 1)\n\n", report.strategy,
                               markdown_cell(report.module));
  const CandidateReport* selected = report.selected_candidate();
  if (report.selected.empty()) {
    md += "**No backend was selected.**";
  } else if (report.baseline_selected) {
    md += fmt::format("**Selected `{}`, the baseline.**", markdown_cell(report.selected));
  } else if (selected != nullptr && selected->speedup && report.baseline) {
    md += fmt::format("**Selected `{}`: {} faster than the baseline `{}`.**",
                      markdown_cell(report.selected), format_speedup(*selected->speedup),
                      markdown_cell(report.baseline->backend));
  } else {
    md += fmt::format("**Selected `{}`.**", markdown_cell(report.selected));
  }
  if (!report.decision.empty()) md += fmt::format(" Why: {}.", markdown_cell(report.decision));
  md += "\n\n";
  md += fmt::format("| | backend | role | status | median (ms) | p90 (ms) | cv | {} | speedup | "
                    "calls | precision | error/tol | {} |\n",
                    detail::ratio_header(report), detail::memory_header(report));
  md += "|---|---|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|\n";
  const std::vector<detail::ReportRow> rows = detail::report_rows(report);
  for (const detail::ReportRow& r : rows) {
    const CandidateReport& row = *r.backend;
    const auto ms = [&](double LatencyStats::*field) {
      return row.latency ? format_fixed((*row.latency).*field) : std::string("-");
    };
    const detail::RowCells& cells = r.cells;
    md += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                      row.selected ? "**&#9733;**" : "", markdown_cell(row.backend), r.role,
                      to_label(row.status), ms(&LatencyStats::median), ms(&LatencyStats::p90),
                      cells.cv, markdown_cell(cells.ratio), cells.speedup, cells.calls,
                      cells.precision, cells.error, cells.memory);
  }

  std::string notes;
  for (const detail::ReportRow& r : rows) {
    const CandidateReport& row = *r.backend;
    if (!row.reason.empty()) {
      notes += fmt::format("- `{}`: {}: {}\n", markdown_cell(row.backend), to_label(row.status),
                           row.reason);
    }
    if (!row.note.empty())
      notes += fmt::format("- `{}`: {}\n", markdown_cell(row.backend), row.note);
    if (const std::string accuracy = detail::accuracy_note(row); !accuracy.empty())
      notes += fmt::format("- `{}`: {}\n", markdown_cell(row.backend), accuracy);
  }
  if (!notes.empty()) md += "\n" + notes;

  const MeasurementReport& m = report.measurement;
  md += fmt::format("\nMeasured by the {} schedule and the {} rule: {} calls", to_label(m.schedule),
                    to_label(m.decision_rule), m.calls);
  if (m.schedule == Schedule::interleaved) {
    md += fmt::format(" in {} rounds; {}", m.rounds,
                      m.stop_detail.empty() ? std::string(to_label(m.stop_reason)) : m.stop_detail);
  }
  md += fmt::format(". Tuning took {:.1f} s.\n", report.tuning_time_ms / 1000.0);
  if (!m.screening.empty()) {
    md += fmt::format("\nScreening before the checks: {}.\n", markdown_cell(m.screening));
  }
  if (m.steady_final) md += fmt::format("\nThe {}.\n", detail::describe_steady_final(report));
  if (m.callers > 1) md += fmt::format("\n{}.\n", detail::describe_callers(report));
  if (const std::string shapes = detail::describe_shapes(report); !shapes.empty())
    md += fmt::format("\n{}.\n", markdown_cell(shapes));
  if (!report.accuracy_budget.empty()) {
    md += fmt::format("\nReduced-precision candidates were judged by the accuracy budget: {}.\n",
                      markdown_cell(report.accuracy_budget));
  }
  if (report.cache_hit) {
    md += fmt::format("\nFrom the tuning cache `{}` (measured {}); the selected backend was "
                      "rebuilt and passed its correctness check again in {:.1f} s{}.\n",
                      report.cache_hit->file, report.cache_hit->created,
                      report.cache_hit->check_time_ms / 1000.0,
                      detail::checked_against(*report.cache_hit));
  }
  if (environment.is_object() && !environment.empty()) {
    md += "\n<details><summary>Environment</summary>\n\n| | |\n|---|---|\n";
    for (const auto& [name, value] : environment.items()) {
      md += fmt::format(
          "| {} | {} |\n", markdown_cell(name),
          markdown_cell(value.is_string() ? value.get<std::string>() : json_text(value)));
    }
    md += "\n</details>\n";
  }
  return md;
}

}  // namespace aitune
