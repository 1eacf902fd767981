// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// MinLatencyStrategy: selects the backend with the lowest latency at batch size 1.
///
/// The baseline (TorchEager for LibTorch backends, from aitune::baseline_traits) is measured
/// when performance validation is on; it is not added to the candidates. With validation on,
/// the strategy keeps the baseline unless a candidate displaces it; with validation off, the
/// best candidate wins and tuning throws when every candidate fails.
///
/// By default backends are measured together in interleaved rounds (latency_race.hpp) and
/// compared with the noise-aware rule of latency_decision.hpp; the sequential schedule and the
/// aitune rule (mean, strict <) remain available.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/format.hpp"
#include "aitune/core/latency_decision.hpp"
#include "aitune/core/latency_race.hpp"
#include "aitune/core/latency_stats.hpp"
#include "aitune/core/profiling_config.hpp"
#include "aitune/core/profiling_loop.hpp"
#include "aitune/core/profiling_tune_strategy.hpp"
#include "aitune/core/results.hpp"
#include "aitune/core/strategy_config.hpp"
#include "aitune/core/timer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune {

template <Backend B, Timer T = default_timer_t<B>>
class MinLatencyStrategy
    : public ProfilingTuneStrategy<MinLatencyStrategy<B, T>, B, MinLatencyProfilingResult, T> {
  using Base = ProfilingTuneStrategy<MinLatencyStrategy<B, T>, B, MinLatencyProfilingResult, T>;
  friend Base;
  using Result = MinLatencyProfilingResult;

 public:
  static constexpr std::string_view title = "Min Latency Strategy";
  static constexpr std::string_view metric_label = "latency";
  static constexpr std::string_view metric_unit = "ms";

  explicit MinLatencyStrategy(std::vector<B> candidates,
                              StrategyConfig config = {}) requires std::default_initializable<T>
      : MinLatencyStrategy(std::move(candidates), std::move(config), T{}) {}

  MinLatencyStrategy(std::vector<B> candidates, StrategyConfig config, T timer)
      : Base(std::move(candidates), std::move(config), std::move(timer)),
        // The sequential schedule decides once: alpha split over the candidates (Bonferroni);
        // the race replaces this with its last look's share.
        decision_tail_alpha_(
            this->config().profiling().race().alpha() /
            static_cast<double>(std::max<std::size_t>(this->candidate_descriptions().size(), 1))) {}

  /// Does `result` (listed later) rank above `other`? Confident rule: its paired median ratio
  /// to `other` is below 1 - tie_margin (a near tie keeps the one listed first). aitune rule:
  /// a lower mean.
  [[nodiscard]] bool is_better(const Result& result, const Result& other) const {
    if (rule() == DecisionRule::aitune_mean) return result.stats.mean < other.stats.mean;
    return displaces_leader(result.rounds, result.latency, other.rounds, other.latency,
                            race().tie_margin());
  }

  /// Does `result` displace the baseline? Confident rule: faster with confidence and by at
  /// least the minimum gain. aitune rule: a strictly lower mean.
  [[nodiscard]] bool displaces_baseline(const Result& result, const Result& baseline) const {
    if (rule() == DecisionRule::aitune_mean) return result.stats.mean < baseline.stats.mean;
    if (result.judged_faster == false) return false;  // no look of the race said so
    return aitune::displaces_baseline(result.rounds, result.samples_ms, baseline.rounds,
                                      baseline.samples_ms, decision_tail_alpha_, race().min_gain());
  }

  /// How many times faster `result` is than `baseline` (medians).
  [[nodiscard]] static double speedup(const Result& result, const Result& baseline) noexcept {
    return baseline.latency / result.latency;
  }

  /// Latency is a batch-size-1 property: whatever batch sizes were configured, profile at 1.
  [[nodiscard]] static ProfilingConfig adjust_profiling_config(ProfilingConfig config) {
    config.set_batch_sizes({1});
    return config;
  }

  [[nodiscard]] static std::string format_metric(double latency_ms) {
    return format_ms(latency_ms);
  }

 private:
  [[nodiscard]] DecisionRule rule() const { return this->config().decision_rule(); }
  [[nodiscard]] const RaceConfig& race() const { return this->config().profiling().race(); }

  [[nodiscard]] static Result make_result(std::vector<double> samples_ms, RoundSeries rounds,
                                          std::size_t calls) {
    const LatencyStats stats = LatencyStats::from_samples(samples_ms);
    Result result(stats.median, stats);
    result.samples_ms = std::move(samples_ms);
    result.rounds = std::move(rounds);
    result.calls = calls;
    return result;
  }

  /// The sequential schedule: `backend` alone, by the stop rule; the latency is the median.
  [[nodiscard]] Result measure(B& backend, std::span<const typename B::sample_type> samples,
                               const ProfilingConfig& config, T& timer, double budget_ms) const {
    TimedCalls timed = time_backend(backend, samples, config.stop_rule(), timer, budget_ms);
    return make_result(std::move(timed.measured_ms), {}, timed.calls);
  }

  /// The interleaved schedule: every entrant in one race.
  void race(std::vector<RaceEntrant>& entrants, std::vector<RaceLane>& lanes, double deadline_ms,
            MeasurementReport& report) {
    const ProfilingConfig& profiling = this->config().profiling();
    // aitune's rule compares means: no looks or racing, the first look's rounds for everyone.
    LatencyRace<T> latency_race(profiling.race(), profiling.warmup(), this->timer(), this->log(),
                                deadline_ms, rule() == DecisionRule::confident_median);
    const RaceSummary summary = latency_race.run(entrants, lanes);
    decision_tail_alpha_ = summary.baseline_tail_alpha;
    report.rounds = summary.rounds;
    report.looks = summary.looks;
    report.stop_reason = summary.stop_reason;
    report.confidence = 1.0 - 2.0 * summary.baseline_tail_alpha;
  }

  [[nodiscard]] static Result result_from_lane(const RaceLane& lane) {
    Result result = make_result(lane.kept_calls_ms, lane.rounds, lane.calls);
    result.host_samples_ms = lane.kept_host_ms;
    result.judged_faster = lane.judged_faster;
    return result;
  }

  /// The paired ratio to the baseline at the decision's level (interleaved schedule only).
  [[nodiscard]] std::optional<RatioReport> compare_with_baseline(const Result& result,
                                                                 const Result& baseline) const {
    const std::vector<double> ratios = paired_ratios(result.rounds, baseline.rounds);
    if (ratios.empty()) return std::nullopt;
    const MedianInterval ci = median_interval(ratios, decision_tail_alpha_);
    return RatioReport{ci.median, ci.low, ci.high, 1.0 - 2.0 * decision_tail_alpha_, ci.n};
  }

  [[nodiscard]] std::string explain_candidate_selected(const Result& winner, const Result& baseline,
                                                       const std::string& name) const {
    if (rule() == DecisionRule::aitune_mean) {
      return fmt::format("{} has the lowest mean ({} < the baseline's {}; aitune rule)", name,
                         format_ms(winner.stats.mean), format_ms(baseline.stats.mean));
    }
    if (const auto ratio = compare_with_baseline(winner, baseline)) {
      return fmt::format(
          "{} is faster than the baseline with confidence and by at least {:.1f} %: its latency "
          "is {}x the baseline's, {:.1f} % interval [{}, {}] over {} paired rounds",
          name, race().min_gain() * 100.0, format_fixed(ratio->ratio), ratio->confidence * 100.0,
          format_fixed(ratio->low), format_fixed(ratio->high), ratio->rounds);
    }
    return fmt::format("{} is faster than the baseline with confidence and by at least {:.1f} % "
                       "(medians {} vs {}, measured apart)",
                       name, race().min_gain() * 100.0, format_ms(winner.latency),
                       format_ms(baseline.latency));
  }

  [[nodiscard]] std::string explain_baseline_kept(const Result& best, const Result& baseline,
                                                  const std::string& name) const {
    if (rule() == DecisionRule::aitune_mean) {
      return fmt::format("no candidate had a lower mean; the best, {}, has {} vs {} (aitune rule)",
                         name, format_ms(best.stats.mean), format_ms(baseline.stats.mean));
    }
    if (const auto ratio = compare_with_baseline(best, baseline)) {
      return fmt::format(
          "no candidate was faster with confidence by at least {:.1f} %; the best, {}, is {}x "
          "the baseline, {:.1f} % interval [{}, {}] over {} paired rounds",
          race().min_gain() * 100.0, name, format_fixed(ratio->ratio), ratio->confidence * 100.0,
          format_fixed(ratio->low), format_fixed(ratio->high), ratio->rounds);
    }
    return fmt::format("no candidate was faster with confidence by at least {:.1f} %; the best, "
                       "{}, has a median of {} vs the baseline's {}",
                       race().min_gain() * 100.0, name, format_ms(best.latency),
                       format_ms(baseline.latency));
  }

  double decision_tail_alpha_;
};

}  // namespace aitune
