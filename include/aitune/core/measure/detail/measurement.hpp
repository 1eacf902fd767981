// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a measurement takes and gives, the same for both schedules (measure/detail/measure.hpp):
/// entrants in, one lane per entrant and how it ended out.

#include "aitune/core/decision/results.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/measure/stop_reason.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/stats/paired_rounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

namespace detail {

/// One backend to be measured.
struct Entrant {
  std::string name;
  bool is_baseline = false;
  /// One inference, measurement call `index` (the sample SampleMix::sample_of_call gives it; with
  /// one shape, sample `index % samples`), timed as a whole (the output's release included, as a
  /// server pays for it). The race gives every backend the same indices in a round, so paired
  /// rounds compare the same samples.
  std::function<void(std::size_t)> call;
  /// After each run of `call`s (a warm-up, a block, a measurement alone), untimed: puts back
  /// what the calls changed for the whole process (aitune::after_calls). May be empty.
  std::function<void()> after_calls{};
  double time_budget_ms = std::numeric_limits<double>::infinity();  ///< what it may still spend
};

/// Runs `after_calls` (if any) once a call of the same backend has failed: the process is put
/// back all the same, and the call's failure, told already, is the one reported.
inline void end_calls_after_failure(const std::function<void()>& after_calls) noexcept {
  if (!after_calls) return;
  try {
    after_calls();
  } catch (...) {  // NOLINT(bugprone-empty-catch): the first failure is the backend's verdict
  }
}

/// One run of an entrant's calls (a warm-up, a block): its after_calls runs once when the run
/// is left by an exception, whichever it is (a backend's, a message sink's, an allocation's), so
/// a run that set the process to a candidate's settings (a thread count) never outlives the race.
/// `release()` when the run ends normally: the caller runs after_calls itself.
class AfterCallsGuard {
 public:
  explicit AfterCallsGuard(const std::function<void()>& after_calls) noexcept
      : after_calls_(&after_calls) {}
  AfterCallsGuard(const AfterCallsGuard&) = delete;
  AfterCallsGuard& operator=(const AfterCallsGuard&) = delete;
  ~AfterCallsGuard() {
    if (armed_) end_calls_after_failure(*after_calls_);
  }
  void release() noexcept { armed_ = false; }

 private:
  const std::function<void()>* after_calls_;
  bool armed_ = true;
};

/// How the interleaved race stands, told after each round and at each look, outside any timed
/// call: the rounds and calls so far (of every entrant, warm-up included), the entrant leading at
/// the last look (its name; empty before the first) and its median ratio to the baseline, when
/// known. For progress reports.
struct Look {
  std::size_t rounds = 0;
  std::size_t calls = 0;
  std::string leader{};
  std::optional<double> leader_ratio{};
};
using LookObserver = std::function<void(const Look&)>;

/// What the measurement produced for one backend.
struct Lane {
  RoundSeries rounds;                 ///< block value per round (ms); interleaved only
  std::vector<double> kept_calls_ms;  ///< every timed call that counts
  /// The same calls by timed shape (SampleMix::timed order), when the mix has several.
  std::vector<std::vector<double>> kept_by_shape_ms{};
  std::vector<double>
      kept_host_ms;  ///< the same calls on the host clock, when a device clock timed them
  std::size_t warmup_calls = 0;
  std::size_t calls = 0;  ///< all calls, warm-up and discarded ones included
  double time_ms = 0.0;   ///< time spent in those calls
  bool dropped = false;   ///< left the race early (racing)
  std::string drop_reason{};
  std::optional<std::string> failure;
  /// A finalist's block values in the steady-state final, and their median (none when it was
  /// not a finalist, or the final was cut short).
  RoundSeries steady_rounds{};
  std::optional<double> steady_median_ms{};
};

/// The result `lane` measured; none when it failed, measured nothing, or its times make no
/// statistics (then its failure says why). With several shapes timed (`mix`), its latency is the
/// mean of its per-shape medians weighted by the mix, and the statistics those of all its calls.
[[nodiscard]] inline std::optional<MinLatencyProfilingResult>
result_of(Lane& lane, const SampleMix* mix = nullptr) {
  if (lane.failure || lane.kept_calls_ms.empty()) return std::nullopt;
  try {
    const LatencyStats stats = LatencyStats::from_samples(lane.kept_calls_ms);
    MinLatencyProfilingResult result(stats.median, stats);
    if (mix != nullptr && mix->mixed()) {
      for (const std::vector<double>& calls : lane.kept_by_shape_ms) {
        result.shape_medians_ms.push_back(calls.empty() ? std::nan("")
                                                        : LatencyStats::from_samples(calls).median);
      }
      result.latency = mix->weighted(result.shape_medians_ms);
    }
    result.samples_ms = lane.kept_calls_ms;
    result.host_samples_ms = lane.kept_host_ms;
    result.rounds = lane.rounds;
    result.steady_rounds = lane.steady_rounds;
    result.calls = lane.calls;
    return result;
  } catch (...) {
    lane.failure = current_exception_message();
    return std::nullopt;
  }
}

/// What the race's last look (and its confirmation) decided about switching: the entrant it
/// judged faster than the baseline with confidence and by at least the minimum gain, if any,
/// and, when the baseline left the race, every entrant it left it for (each was judged so at
/// that look). Only those entrants may displace the baseline.
struct SwitchByLooks {
  std::optional<std::size_t> entrant{};
  std::vector<std::size_t> baseline_parked_for{};

  [[nodiscard]] bool may_displace(std::size_t i) const {
    return entrant == i || std::find(baseline_parked_for.begin(), baseline_parked_for.end(), i) !=
                               baseline_parked_for.end();
  }
};

/// What the race's steady-state final did (RaceConfig::set_steady_final): its finalists (lane
/// indices, the race's leader first), the lane it selected (the leader where it was cut short),
/// the rounds it ran, and why it stopped early, if it did.
struct SteadyFinal {
  std::string settings;  ///< RaceConfig::describe_final()
  std::vector<std::size_t> finalists{};
  std::size_t pick = 0;
  std::size_t rounds = 0;
  std::string cut_short{};
};

/// The verdict of one measurement: the lanes, in the order of the entrants, and the level the
/// decision compares with the baseline at.
struct Measurement {
  std::vector<Lane> lanes;
  std::size_t rounds = 0;
  int looks = 0;
  StopReason stop_reason = StopReason::not_measured;
  std::string stop_detail{};  ///< the stop reason for people, with its figures
  /// The error each bound of a comparison with the baseline may make
  /// (DecisionConfig::baseline_tail at the last look's share).
  double baseline_tail_alpha = 0.0;
  /// The race's answer to "switch?", when its looks judged it (the confident rule): empty for
  /// the sequential schedule and the aitune rule, whose results the decider tests itself.
  std::optional<SwitchByLooks> switch_verdict{};
  std::optional<SteadyFinal> steady_final{};  ///< when the race ran one
};

/// A measurement stopped through the stop token: what it measured until then travels with the
/// cancellation (its stop_reason `cancelled`), so the report so far keeps the rounds, calls and
/// latencies a signal would otherwise throw away.
class MeasurementCancelled : public CancelledError {
 public:
  explicit MeasurementCancelled(Measurement so_far)
      : CancelledError("cancelled"), measurement(std::move(so_far)) {}
  Measurement measurement;
};

}  // namespace detail

}  // namespace aitune
