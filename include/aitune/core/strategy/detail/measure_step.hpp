// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The measure step of a tuning (core/strategy/min_latency_strategy.hpp): what is waiting measured
/// by the schedule (the interleaved race, or each backend alone), each lane settled on its row
/// (strategy/detail/settle.hpp), the baseline kept as the fallback and the best candidate so far
/// by the decider (decision/latency_decider.hpp). It takes the standing so far and hands back the
/// next; a stop keeps what was measured on the rows.

#include "aitune/core/backend.hpp"
#include "aitune/core/decision/latency_decider.hpp"
#include "aitune/core/decision/results.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/detail/measure.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/strategy/detail/flow_parts.hpp"
#include "aitune/core/strategy/detail/settle.hpp"
#include "aitune/core/strategy/detail/tuning_values.hpp"

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace aitune::detail {

template <Backend B, Timer T>
class MeasureStep {
 public:
  using Result = MinLatencyProfilingResult;

  explicit MeasureStep(FlowParts<B, T> parts) : parts_(parts) {}

  /// Measures what is waiting (the baseline first) and settles each lane on its row: the baseline
  /// becomes the fallback, a candidate competes with the best so far.
  Standing<B> measure(const TuneInputs<B>& in, const Reference<B>& reference, Waiting<B> waiting,
                      Standing<B> standing, TuneReport& report, LookObserver on_look) {
    const GuardedCalls<B>& guard = parts_.guard;
    // Variants of one graph share its verdict (strategy/detail/graph_verdicts.hpp).
    std::erase_if(waiting.candidates, [&](Prepared<B>& p) {
      return guard.refused_for_graph(report, report.candidates[p.index], p.backend);
    });
    if (standing.best && guard.refused_for_graph(report, report.candidates[standing.best->index],
                                                 standing.best->backend)) {
      standing.best.reset();
    }
    // At a server's load, each timed call is every caller's at once (detail::CallerPool).
    std::optional<CallerPool> callers;
    if (in.profiling.callers() > 1) callers.emplace(in.profiling.callers());
    report.measurement.callers = in.profiling.callers();
    std::vector<Entrant> entrants = entrants_of(
        waiting, report, guard, in.samples, in.mix, in.profiling.candidate_time_budget_ms(),
        parts_.config.stop_token(), callers ? &*callers : nullptr);
    if (entrants.empty()) return standing;
    Measurement measured;
    try {
      measured = guard.measured(entrants.size(), [&] {
        return measure_backends(entrants, in.profiling, parts_.config.decision(), parts_.timer,
                                parts_.log, reference.deadline_ms, parts_.candidates,
                                std::move(on_look), &in.mix);
      });
    } catch (MeasurementCancelled& stopped) {
      // A stop keeps what was measured: the rows get it, then the tuning ends with them.
      settle_cancelled(stopped.measurement, waiting, entrants, in.mix, report);
      throw CancelledError("cancelled");
    }
    standing.evidence = evidence_of(measured, waiting);
    const LatencyDecider decider = decider_of(standing.evidence);
    const bool raced = parts_.config.profiling().schedule() == Schedule::interleaved;
    add_measurement(report.measurement, measured,
                    raced ? std::optional(decider.confidence()) : std::nullopt, entrants);
    std::size_t lane = 0;
    if (waiting.baseline) {  // measured alone, it is freed until it is selected (activate())
      standing.baseline_result =
          settle_baseline_lane(*report.baseline, measured.lanes[lane++], in.mix, parts_.log);
      if (!standing.baseline_result) guard.warn_baseline_failed(*report.baseline);
      if (!standing.baseline_result || !raced) guard.release(*waiting.baseline);
      if (standing.baseline_result) standing.baseline = std::move(waiting.baseline);
    }
    for (Prepared<B>& prepared : waiting.candidates) {
      Lane& measured_lane = measured.lanes[lane++];
      std::optional<Result> result =
          settle_candidate_lane(report.candidates[prepared.index], measured_lane, prepared.spent_ms,
                                standing.baseline_result, decider, in.mix, parts_.log);
      if (!result || measured_lane.dropped) {
        guard.release(prepared.backend);
        continue;
      }
      standing.best = better_of(std::move(standing.best),
                                {prepared.index, std::move(prepared.backend), std::move(*result)});
    }
    return standing;
  }

  [[nodiscard]] LatencyDecider decider_of(const SwitchEvidence& evidence) const {
    return detail::decider_of(parts_.config.decision(), evidence);
  }

 private:
  /// The lanes of a measurement a stop cut short, on their rows (`waiting`'s, in the lanes'
  /// order): what each measured until then, nothing decided; a backend not measured yet says the
  /// stop came first.
  void settle_cancelled(Measurement& measured, const Waiting<B>& waiting,
                        const std::vector<Entrant>& entrants, const SampleMix& mix,
                        TuneReport& report) const {
    add_measurement(report.measurement, measured, std::nullopt, entrants);
    const auto unmeasured = [](CandidateReport& row) {
      row.status = CandidateStatus::skipped;
      row.reason = "not measured: the tuning was stopped first";
    };
    std::size_t lane = 0;
    std::optional<Result> baseline;
    if (waiting.baseline) {
      Lane& measured_lane = measured.lanes[lane++];
      baseline = settle_baseline_lane(*report.baseline, measured_lane, mix, parts_.log);
      if (!baseline && !measured_lane.failure) unmeasured(*report.baseline);
    }
    const LatencyDecider decider = decider_of({measured.baseline_tail_alpha});
    for (const Prepared<B>& prepared : waiting.candidates) {
      CandidateReport& row = report.candidates[prepared.index];
      Lane& measured_lane = measured.lanes[lane++];
      if (!settle_candidate_lane(row, measured_lane, prepared.spent_ms, baseline, decider, mix,
                                 parts_.log) &&
          !measured_lane.failure) {
        unmeasured(row);
      }
    }
  }

  /// The better of the best so far and `next` (a near tie keeps the one listed first); the other
  /// is released.
  std::optional<Contender<B>> better_of(std::optional<Contender<B>> best, Contender<B> next) {
    if (best && !decider_of({}).is_better(next.result, best->result)) {
      parts_.guard.release(next.backend);
      return best;
    }
    if (best) parts_.guard.release(best->backend);
    return next;
  }

  FlowParts<B, T> parts_;
};

}  // namespace aitune::detail
