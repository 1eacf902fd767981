// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// A busy machine, named. Another process on the machine can make a measurement useless: with
/// one core taken, LibTorch's threads spin for one that was descheduled and a few calls in a
/// hundred take 10x to 80x. When the baseline's calls spread out far beyond an idle machine's,
/// the report says so with the figures and what to try: a race that then ended without a
/// decision (a budget or its looks ran out) and kept the baseline was too busy to decide; a
/// decided one holds at its level, but its latencies are not an idle machine's.

#include "aitune/core/measure/stop_reason.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

namespace aitune::detail {

/// Where noise becomes "too busy". On an idle machine a baseline's p90 stays within about 1.1x
/// of its median and a look's interval within about 1.4x (docs/measurement.md); with LibTorch's
/// threads spinning for one descheduled by another process, the p90 came to 2x to 8x and a few
/// calls in a hundred took 10x to 80x. (The p99, not the coefficient of variation: one stray
/// call can make the cv of an idle machine's 300 calls look busy.)
struct BusyThresholds {
  double baseline_spread = 1.5;  ///< the baseline's p90 / median, at or above which it is busy
  double baseline_tail = 5.0;    ///< its p99 / median, the same
  double ratio_span = 2.0;       ///< the best candidate's interval high / low, the same
};

/// Whether a measurement ended without its decision settling: a budget or its looks ran out.
[[nodiscard]] constexpr bool ended_undecided(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::time_budget:
    case StopReason::round_budget:
    case StopReason::call_budget:
    case StopReason::looks_used: return true;
    default: return false;
  }
}

/// The verdict for a tuning whose measurement is `measurement`, its `baseline` measured (`best`:
/// the best candidate measured, or null; `kept`: whether the baseline was kept). Set when the
/// baseline's spread or tail is at or above its threshold, or, for a race that ended undecided
/// and kept the baseline, when the best candidate's interval is that wide.
[[nodiscard]] inline std::optional<BusyMachine>
judge_busy_machine(const MeasurementReport& measurement, const CandidateReport& baseline,
                   const CandidateReport* best, bool kept, const BusyThresholds& thresholds = {}) {
  if (!baseline.latency || !(baseline.latency->median > 0.0)) return std::nullopt;
  const LatencyStats& stats = *baseline.latency;
  BusyMachine busy;
  busy.undecided = kept && ended_undecided(measurement.stop_reason);
  busy.baseline_spread = stats.p90 / stats.median;
  busy.baseline_tail = stats.p99 / stats.median;
  busy.baseline_cv = stats.cv;
  const RatioReport* ratio = best && best->vs_baseline ? &*best->vs_baseline : nullptr;
  // Too few rounds for the level leave a bound infinite: no span then.
  if (ratio && std::isfinite(ratio->low) && std::isfinite(ratio->high) && ratio->low > 0.0) {
    busy.ratio_span = ratio->high / ratio->low;
  }
  const bool spread_out = busy.baseline_spread >= thresholds.baseline_spread ||
                          busy.baseline_tail >= thresholds.baseline_tail;
  // A wide interval is noise only where it left the race undecided.
  const bool wide = busy.undecided && busy.ratio_span && *busy.ratio_span >= thresholds.ratio_span;
  if (!spread_out && !wide) return std::nullopt;
  std::string figures =
      fmt::format("the baseline's p90 was {:.1f}x its median and its p99 {:.1f}x (cv {:.0f} %)",
                  busy.baseline_spread, busy.baseline_tail, busy.baseline_cv * 100.0);
  if (wide) {
    figures += fmt::format(", and {}'s ratio to it anywhere in [{}, {}]", best->backend,
                           format_fixed(ratio->low), format_fixed(ratio->high));
  }
  busy.text = busy.undecided
                  ? fmt::format("the machine was too busy to decide: {}; measure on an idle "
                                "machine, or with fewer threads than it has cores free",
                                figures)
                  : fmt::format("the machine was busy while measuring: {}; the decision holds "
                                "at its level, but these latencies are not an idle machine's: "
                                "tune on one to confirm them",
                                figures);
  return busy;
}

/// Judges `report`'s measurement (judge_busy_machine; `best`: the best candidate's row, or
/// null; `kept`: the baseline is handed back), records the verdict in the report, and returns the
/// clause the decision gains ("; the machine was ...", or empty when it was not busy).
[[nodiscard]] inline std::string note_busy_machine(TuneReport& report, const CandidateReport* best,
                                                   bool kept) {
  if (!report.baseline) return {};
  MeasurementReport& measurement = report.measurement;
  measurement.busy = judge_busy_machine(measurement, *report.baseline, best, kept);
  return measurement.busy ? "; " + measurement.busy->text : std::string();
}

}  // namespace aitune::detail
