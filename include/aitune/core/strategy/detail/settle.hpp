// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// A measured lane, settled on its report row: the calls it took, its latency (on the host clock
/// too where a device clock timed it), a candidate's ratio to the baseline, or why it has no
/// result. What becomes of the backend itself is the strategy's to decide (measure).

#include "aitune/core/decision/latency_decider.hpp"
#include "aitune/core/decision/results.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report/detail/summary.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/strategy/detail/guarded_calls.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace aitune::detail {

/// The baseline's lane on its row: its result (over `mix`'s shapes), or none when it failed (the
/// row says why).
[[nodiscard]] inline std::optional<MinLatencyProfilingResult>
settle_baseline_lane(CandidateReport& row, Lane& lane, const SampleMix& mix, const Logger& log) {
  row.calls = lane.calls;
  row.tuning_time_ms += lane.time_ms;
  std::optional<MinLatencyProfilingResult> result = result_of(lane, &mix);
  if (!result) {
    fail(row, PrepareStep::run_samples,
         fmt::format("measure: {}", lane.failure.value_or("not measured")));
    return result;
  }
  record_latency(row, *result);
  row.speedup = 1.0;
  log.info(2, fmt::format("baseline {}: latency {}", row.backend, format_ms(result->metric())));
  return result;
}

/// A candidate's lane on its row (`spent_ms`: on its build and check), with its ratio to the
/// `baseline`'s result where there is one, and why the race dropped it if it did: its result
/// (over `mix`'s shapes), or none when it failed or was never measured (the row says why).
[[nodiscard]] inline std::optional<MinLatencyProfilingResult>
settle_candidate_lane(CandidateReport& row, Lane& lane, double spent_ms,
                      const std::optional<MinLatencyProfilingResult>& baseline,
                      const LatencyDecider& decider, const SampleMix& mix, const Logger& log) {
  row.calls = lane.calls;
  row.tuning_time_ms = spent_ms + lane.time_ms;
  std::optional<MinLatencyProfilingResult> result = result_of(lane, &mix);
  if (!result) {  // failed while measured, or never measured because the race ended first
    row.status = lane.failure ? CandidateStatus::measure_failed : CandidateStatus::skipped;
    row.reason = lane.failure.value_or("not measured: the race ended first");
    log.warn(2, fmt::format("{}: {}", to_label(row.status), row.reason));
    return result;
  }
  record_latency(row, *result);
  row.steady_median_ms = lane.steady_median_ms;
  if (baseline && result->metric() > 0.0 && baseline->metric() > 0.0) {
    // With paired rounds the speedup is the paired ratio's inverse, so the table's columns
    // never disagree; measured apart, it is the ratio of the medians.
    row.vs_baseline = decider.ratio_to_baseline(*result, *baseline);
    row.speedup = row.vs_baseline && row.vs_baseline->ratio > 0.0
                      ? 1.0 / row.vs_baseline->ratio
                      : baseline->metric() / result->metric();
  }
  log.info(2,
           fmt::format("{}: latency {}{}", row.backend, format_ms(result->metric()),
                       row.speedup ? fmt::format(" ({} vs baseline)", format_speedup(*row.speedup))
                                   : std::string()));
  if (lane.dropped) {
    row.note =
        fmt::format("left the race after {} rounds: {}", lane.rounds.count(), lane.drop_reason);
  }
  return result;
}

/// A measurement added to the report's account of it (the sequential schedule measures several
/// times); `confidence`: the level of its comparisons with the baseline, for a race.
inline void add_measurement(MeasurementReport& account, const Measurement& measured,
                            std::optional<double> confidence,
                            const std::vector<Entrant>& entrants) {
  if (const auto& final = measured.steady_final) {
    SteadyFinalReport& shown = account.steady_final.emplace();
    shown.settings = final->settings;
    for (const std::size_t i : final->finalists)
      shown.finalists.push_back(entrants[i].name);
    shown.pick = entrants[final->pick].name;
    shown.rounds = final->rounds;
    shown.cut_short = final->cut_short;
  }
  account.rounds += measured.rounds;
  account.looks += measured.looks;
  account.stop_reason = measured.stop_reason;
  account.stop_detail = measured.stop_detail;
  if (confidence) account.confidence = *confidence;
}

}  // namespace aitune::detail
