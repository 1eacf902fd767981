// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The report as a table for people (render_table), as the command line and the logs show it.

#include "aitune/core/report/detail/rows.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

/// The report as a table for people: one row per backend (median, p90, coefficient of
/// variation, the paired ratio to the selected backend with its interval, the speedup over the
/// baseline chained through the selected one, calls, the precision it computes in and its worst
/// output error as a share of the tolerance, or "budget" where the accuracy budget judged it),
/// then the reasons and notes, the measurement, and
/// the decision. The ratios and speedups order the rows as the decision did.
[[nodiscard]] inline std::string render_table(const TuneReport& report) {
  std::size_t name_width = 7;  // "backend"
  const auto widen = [&](const CandidateReport& row) {
    name_width = std::max(name_width, row.backend.size() + (row.selected ? 2 : 0));
  };
  if (report.baseline) widen(*report.baseline);
  for (const auto& candidate : report.candidates)
    widen(candidate);
  name_width += 2;

  std::string out =
      fmt::format("{} - module '{}' (batch size 1)\n", report.strategy, report.module);
  constexpr std::string_view row_format =
      "{:<{}}{:<10}{:<16}{:>12}{:>12}{:>8}{:>28}{:>9}{:>7}{:>11}{:>11}{:>19}\n";
  out += fmt::format(row_format, "backend", name_width, "role", "status", "median", "p90", "cv",
                     detail::ratio_header(report), "speedup", "calls", "precision", "error/tol",
                     detail::memory_header(report));
  const std::vector<detail::ReportRow> rows = detail::report_rows(report);
  for (const detail::ReportRow& r : rows) {
    const CandidateReport& row = *r.backend;
    const auto cell = [&](double LatencyStats::*field) {
      return row.latency ? format_ms((*row.latency).*field) : std::string("-");
    };
    const detail::RowCells& cells = r.cells;
    out += fmt::format(row_format, fmt::format("{}{}", row.selected ? "* " : "", row.backend),
                       name_width, r.role, to_label(row.status), cell(&LatencyStats::median),
                       cell(&LatencyStats::p90), cells.cv, cells.ratio, cells.speedup, cells.calls,
                       cells.precision, cells.error, cells.memory);
  }

  std::string notes;
  for (const detail::ReportRow& r : rows) {
    const CandidateReport& row = *r.backend;
    if (!row.reason.empty()) {
      notes +=
          fmt::format("  {} {}: {}: {}\n", r.role, row.backend, to_label(row.status), row.reason);
    }
    if (!row.note.empty()) notes += fmt::format("  {} {}: {}\n", r.role, row.backend, row.note);
    if (const std::string accuracy = detail::accuracy_note(row); !accuracy.empty())
      notes += fmt::format("  {} {}: {}\n", r.role, row.backend, accuracy);
  }
  if (!notes.empty()) out += "notes:\n" + notes;
  const MeasurementReport& m = report.measurement;
  switch (m.schedule) {
    case Schedule::interleaved:
      out += fmt::format("measurement: interleaved schedule, {} rule, {} rounds, {} looks, {} "
                         "calls; {}\n",
                         to_label(m.decision_rule), m.rounds, m.looks, m.calls,
                         m.stop_detail.empty() ? to_label(m.stop_reason) : m.stop_detail);
      break;
    case Schedule::sequential:
      out += fmt::format("measurement: sequential schedule, {} rule, {} calls\n",
                         to_label(m.decision_rule), m.calls);
      break;
  }
  if (!m.screening.empty()) out += fmt::format("screening before the checks: {}\n", m.screening);
  if (m.steady_final) out += detail::describe_steady_final(report) + "\n";
  if (m.callers > 1) out += detail::describe_callers(report) + "\n";
  if (const std::string shapes = detail::describe_shapes(report); !shapes.empty())
    out += shapes + "\n";
  if (!report.accuracy_budget.empty())
    out += fmt::format("accuracy budget (reduced precision): {}\n", report.accuracy_budget);
  if (!report.decision.empty()) out += fmt::format("why: {}\n", report.decision);
  if (report.cache_hit) {
    out += fmt::format("from the tuning cache '{}' (measured {}): the selected backend was rebuilt "
                       "and passed its correctness check again in {:.1f} s{}; nothing was "
                       "measured now\n",
                       report.cache_hit->file, report.cache_hit->created,
                       report.cache_hit->check_time_ms / 1000.0,
                       detail::checked_against(*report.cache_hit));
  }
  out += fmt::format("selected: {}{}\n", report.selected.empty() ? "none" : report.selected,
                     report.baseline_selected ? " (the baseline)" : "");
  return out;
}

}  // namespace aitune
