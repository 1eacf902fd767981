// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// MinLatencyStrategy: selects the backend with the lowest latency at batch size 1.
///
/// The baseline (TorchEager for LibTorch backends, from aitune::baseline_traits) is profiled in
/// pre_tune when performance validation is on; it is not added to the candidates. With
/// validation on, the strategy falls back to the baseline when no candidate beats it. With
/// validation off, the best candidate wins and tuning throws when every candidate fails.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/format.hpp"
#include "aitune/core/latency_stats.hpp"
#include "aitune/core/profiling_config.hpp"
#include "aitune/core/profiling_loop.hpp"
#include "aitune/core/profiling_tune_strategy.hpp"
#include "aitune/core/results.hpp"
#include "aitune/core/strategy_config.hpp"
#include "aitune/core/timer.hpp"

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

 public:
  static constexpr std::string_view title = "Min Latency Strategy";
  static constexpr std::string_view metric_label = "latency";
  static constexpr std::string_view metric_unit = "ms";

  explicit MinLatencyStrategy(std::vector<B> candidates,
                              StrategyConfig config = {}) requires std::default_initializable<T>
      : Base(std::move(candidates), std::move(config), T{}) {}

  MinLatencyStrategy(std::vector<B> candidates, StrategyConfig config, T timer)
      : Base(std::move(candidates), std::move(config), std::move(timer)) {}

  /// Lower latency is better; equal latencies are not.
  [[nodiscard]] static bool is_better(const MinLatencyProfilingResult& result,
                                      const MinLatencyProfilingResult& other) noexcept {
    return result.latency < other.latency;
  }

  /// How many times faster `result` is than `baseline`.
  [[nodiscard]] static double speedup(const MinLatencyProfilingResult& result,
                                      const MinLatencyProfilingResult& baseline) noexcept {
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

  /// Profiles `backend` at batch size 1; the latency is the median of the timed calls.
  [[nodiscard]] static MinLatencyProfilingResult
  measure(B& backend, std::span<const typename B::sample_type> samples,
          const ProfilingConfig& config, T& timer) {
    const std::vector<double> times_ms = time_backend(backend, samples, config.stop_rule(), timer);
    const LatencyStats stats = LatencyStats::from_samples(times_ms);
    return MinLatencyProfilingResult(stats.median, stats);
  }
};

}  // namespace aitune
