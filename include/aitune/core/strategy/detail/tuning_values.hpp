// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The values a tuning's steps hand each other (core/strategy/min_latency_strategy.hpp), in the
/// order the steps make them: what the tuning is given, what pre_tune leaves (the baseline and the
/// reference), what prepare leaves for the measurement, and what the measurements leave for
/// resolve. Nothing here is shared or changed behind a step's back: each step takes these by value
/// or const reference and returns the next.

#include "aitune/core/backend.hpp"
#include "aitune/core/decision/latency_decider.hpp"
#include "aitune/core/decision/results.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/measure/profiling_config.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/strategy/detail/guarded_calls.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

namespace aitune::detail {

/// What one tuning is given, constant from its start to its end.
template <Backend B>
struct TuneInputs {
  const typename B::model_type& model;
  std::span<const typename B::sample_type> samples;
  const ProfilingConfig& profiling;
  double start_ms;
  SampleMix mix;  ///< the samples by shape, with their weights
};

/// What the candidates are checked against, and until when they may be prepared.
template <Backend B>
struct Reference {
  std::vector<typename B::output_type> outputs{};  ///< the baseline's, one per checked sample
  std::size_t checked = 0;  ///< outputs are checked on the first `checked` samples
  double deadline_ms = std::numeric_limits<double>::infinity();  ///< the time budget ends here
  /// Why there are no outputs to check a candidate against although the check is on (the
  /// baseline failed to build or to run a sample): no candidate is then tried, for none could be
  /// selected unchecked. Empty when the reference is there (or the check is off).
  std::string missing{};
};

/// What pre_tune leaves: the baseline, built and run (none when it failed), and the reference.
template <Backend B>
struct PreTuned {
  std::optional<B> baseline;
  Reference<B> reference;
};

/// A candidate built and checked, waiting for its measurement.
template <Backend B>
struct Prepared {
  std::size_t index;
  B backend;
  double spent_ms;  ///< on its build and check
};

/// What the next measurement takes.
template <Backend B>
struct Waiting {
  std::optional<B> baseline{};
  std::vector<Prepared<B>> candidates{};
};

/// A measured candidate still in the running.
template <Backend B>
struct Contender {
  std::size_t index;
  B backend;
  MinLatencyProfilingResult result;
};

/// The level of comparisons with the baseline, and, where the race's looks judged the switch, the
/// candidates (their indices) they found may displace it.
struct SwitchEvidence {
  double baseline_tail_alpha = 0.0;
  std::optional<std::vector<std::size_t>> by_looks{};

  /// Whether the looks found candidate `index` may displace the baseline; none when they did not
  /// judge the switch (the decider then tests the results itself).
  [[nodiscard]] std::optional<bool> judged(std::size_t index) const {
    if (!by_looks) return std::nullopt;
    return std::find(by_looks->begin(), by_looks->end(), index) != by_looks->end();
  }
};

/// `waiting` as the entrants of a measurement, the baseline first: each named as its row in
/// `report`, a candidate with what is left of its `candidate_budget_ms`, its calls on `samples`
/// as `mix` numbers them; each call made by every caller of `callers` at once, when there is a
/// pool.
template <Backend B>
[[nodiscard]] std::vector<Entrant>
entrants_of(Waiting<B>& waiting, const TuneReport& report, const GuardedCalls<B>& guard,
            std::span<const typename B::sample_type> samples, const SampleMix& mix,
            double candidate_budget_ms, const std::stop_token& stop,
            CallerPool* callers = nullptr) {
  std::vector<Entrant> entrants;
  if (waiting.baseline) {
    entrants.push_back(guard.entrant(*waiting.baseline, samples, mix, report.baseline->backend,
                                     true, std::numeric_limits<double>::infinity(), stop, callers));
  }
  for (Prepared<B>& prepared : waiting.candidates) {
    entrants.push_back(guard.entrant(prepared.backend, samples, mix,
                                     report.candidates[prepared.index].backend, false,
                                     candidate_budget_ms - prepared.spent_ms, stop, callers));
  }
  return entrants;
}

/// What `measured`, a measurement of `waiting` (the baseline first, when it was there), says about
/// switching.
template <Backend B>
[[nodiscard]] SwitchEvidence evidence_of(const Measurement& measured, const Waiting<B>& waiting) {
  SwitchEvidence evidence{measured.baseline_tail_alpha};
  if (measured.switch_verdict) {
    std::vector<std::size_t>& displacing = evidence.by_looks.emplace();
    for (std::size_t i = 0; i < waiting.candidates.size(); ++i) {
      if (measured.switch_verdict->may_displace(i + (waiting.baseline ? 1 : 0))) {
        displacing.push_back(waiting.candidates[i].index);
      }
    }
  }
  return evidence;
}

/// The decision at the level `evidence` holds comparisons with the baseline to.
[[nodiscard]] inline LatencyDecider decider_of(const DecisionConfig& decision,
                                               const SwitchEvidence& evidence) {
  return LatencyDecider(decision, evidence.baseline_tail_alpha);
}

/// What the measurements so far leave for resolve: the measured baseline (the fallback), its
/// result, the best candidate, and the evidence on switching.
template <Backend B>
struct Standing {
  std::optional<B> baseline{};
  std::optional<MinLatencyProfilingResult> baseline_result{};
  std::optional<Contender<B>> best{};
  SwitchEvidence evidence{};
};

}  // namespace aitune::detail
