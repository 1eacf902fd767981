// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// How a strategy profiles each backend.

#include "aitune/core/error.hpp"
#include "aitune/core/measure/race_config.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/measure/sample_names.hpp"
#include "aitune/core/measure/screening_config.hpp"
#include "aitune/core/measure/stop_rules.hpp"

#include <fmt/format.h>

#include <concepts>
#include <cstddef>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace aitune {

/// The default bound of a whole tuning, for the library and the aitune-tune command alike:
/// ties between identical backends may otherwise measure for a long time.
inline constexpr double default_time_budget_ms = 60'000.0;

/// Settings of the measurement (schedule, race, warm-up, stop rule, budgets), with sensible
/// defaults and fluent setters.
class ProfilingConfig {
 public:
  ProfilingConfig() = default;

  /// Interleaved (the default) or sequential (aitune's; for candidates that cannot all be
  /// resident at once).
  ProfilingConfig& set_schedule(Schedule schedule) {
    schedule_ = schedule;
    return *this;
  }
  [[nodiscard]] Schedule schedule() const noexcept { return schedule_; }

  /// The interleaved race's settings.
  ProfilingConfig& set_race(RaceConfig race) {
    race_ = std::move(race);
    return *this;
  }
  [[nodiscard]] const RaceConfig& race() const noexcept { return race_; }
  /// The screening before the checks (interleaved schedule only).
  ProfilingConfig& set_screening(ScreeningConfig screening) {
    screening_ = screening;
    return *this;
  }
  [[nodiscard]] const ScreeningConfig& screening() const noexcept { return screening_; }

  /// The interleaved schedule's adaptive warm-up.
  ProfilingConfig& set_warmup(WarmupConfig warmup) {
    warmup_ = warmup;
    return *this;
  }
  [[nodiscard]] const WarmupConfig& warmup() const noexcept { return warmup_; }

  /// The whole tuning may take this long (ms); when it runs out the race stops and decides on
  /// what it has, and candidates not yet measured are marked failed. Default: 60 s
  /// (default_time_budget_ms); infinity for no limit.
  ProfilingConfig& set_time_budget_ms(double budget_ms) {
    time_budget_ms_ = require_budget(budget_ms, "time budget");
    return *this;
  }
  [[nodiscard]] double time_budget_ms() const noexcept { return time_budget_ms_; }

  /// One candidate may take this long (ms) to build, check and measure; a candidate over it is
  /// marked failed with that reason. Default: no limit.
  ProfilingConfig& set_candidate_time_budget_ms(double budget_ms) {
    candidate_time_budget_ms_ = require_budget(budget_ms, "candidate time budget");
    return *this;
  }
  [[nodiscard]] double candidate_time_budget_ms() const noexcept {
    return candidate_time_budget_ms_;
  }

  /// The server's load to tune at: each timed call is `callers` calls at once, one per caller
  /// thread (the tuning's thread and callers - 1 of its own), on the tuning's samples, timed until
  /// the last ends - a closed-loop server's per-call latency at that load, which its throughput
  /// follows (callers / latency). A backend that is not thread-safe (no `thread_safe()` that says
  /// true) takes the calls in turn, as TunedModule serves it. 1 (the default): one call at a time.
  ProfilingConfig& set_callers(int callers) {
    if (callers < 1 || callers > max_callers) {
      throw ConfigError(
          fmt::format("the callers to tune at are 1 to {}, got {}", max_callers, callers));
    }
    callers_ = callers;
    return *this;
  }
  [[nodiscard]] int callers() const noexcept { return callers_; }
  static constexpr int max_callers = 256;

  /// How much of the server's traffic each sample stands for, one weight per sample (none, the
  /// default: the same for each). Samples of one shape (aitune::sample_shape) are timed together
  /// and their weights add up; the decision is on the mean latency weighted so
  /// (core/measure/sample_mix.hpp). A sample of weight 0 is checked, never timed. Checked against
  /// the samples when a tuning starts.
  ProfilingConfig& set_sample_weights(std::vector<double> weights) {
    for (std::size_t i = 0; i < weights.size(); ++i)
      (void)require_weight(i, weights[i]);
    sample_weights_ = std::move(weights);
    return *this;
  }
  [[nodiscard]] const std::vector<double>& sample_weights() const noexcept {
    return sample_weights_;
  }

  /// What the reasons call each sample (SampleNames; by default "sample 2 of 3", counted from
  /// 1). A layer that puts samples of its own before the caller's names them here (lt::tune:
  /// the range's bounds). Text only: it changes no measurement and no cache key.
  ProfilingConfig& set_sample_names(SampleNames names) {
    sample_names_ = std::move(names);
    return *this;
  }
  [[nodiscard]] const SampleNames& sample_names() const noexcept { return sample_names_; }

  /// The sequential schedule's StopRule; the config keeps an immutable shared copy.
  template <std::derived_from<StopRule> Rule>
  ProfilingConfig& set_stop_rule(Rule rule) {
    stop_rule_ = std::make_shared<const Rule>(std::move(rule));
    return *this;
  }
  ProfilingConfig& set_stop_rule(std::shared_ptr<const StopRule> rule) {
    if (!rule) throw ConfigError("the stop rule must not be null");
    stop_rule_ = std::move(rule);
    return *this;
  }
  [[nodiscard]] const StopRule& stop_rule() const noexcept { return *stop_rule_; }

 private:
  static double require_budget(double budget_ms, const char* what) {
    if (!(budget_ms > 0.0)) {
      throw ConfigError(
          fmt::format("the {} must be a positive number of ms, got {}", what, budget_ms));
    }
    return budget_ms;
  }

  Schedule schedule_ = Schedule::interleaved;
  RaceConfig race_{};
  ScreeningConfig screening_{};
  WarmupConfig warmup_{};
  double time_budget_ms_ = default_time_budget_ms;
  double candidate_time_budget_ms_ = std::numeric_limits<double>::infinity();
  int callers_ = 1;
  std::vector<double> sample_weights_{};
  SampleNames sample_names_{};
  std::shared_ptr<const StopRule> stop_rule_ = std::make_shared<const NumSteps>();
};

}  // namespace aitune
