// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What profiling a backend produces, and the performance-validation verdicts.

#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/stats/paired_rounds.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace aitune {

/// What every profiling result carries: the batch size it was taken at and the full
/// latency statistics of the timed calls (milliseconds).
struct BackendProfilingResult {
  int selected_batch_size = 1;
  LatencyStats stats{};
};

/// The result MinLatencyStrategy ranks: latency at batch size 1, in milliseconds (the median
/// of the timed calls, a statistic the tail of the distribution does not drag).
struct MinLatencyProfilingResult : BackendProfilingResult {
  double latency = 0.0;
  std::vector<double> samples_ms{};  ///< the timed calls the statistics describe
  /// The same calls on the host clock, when a device clock (CUDA events) timed them.
  std::vector<double> host_samples_ms{};
  RoundSeries rounds{};  ///< per-round block values (interleaved schedule)
  /// Per-round block values in the race's steady-state final, timed as a server calls it (a
  /// finalist only; RaceConfig::set_steady_final): two finalists rank by these.
  RoundSeries steady_rounds{};
  std::size_t calls = 0;  ///< all calls made to measure it (warm-up included)
  /// Its median per timed shape (SampleMix::timed order), when several were timed: `latency` is
  /// then their mean weighted by the mix.
  std::vector<double> shape_medians_ms{};

  MinLatencyProfilingResult() = default;
  explicit MinLatencyProfilingResult(double latency_ms, LatencyStats latency_stats = {})
      : BackendProfilingResult{1, latency_stats}, latency(latency_ms) {}

  [[nodiscard]] double metric() const noexcept { return latency; }

  /// The host clock's statistics, when a device clock timed the calls (else none).
  [[nodiscard]] std::optional<LatencyStats> host_stats() const {
    if (host_samples_ms.empty()) return std::nullopt;
    return LatencyStats::from_samples(host_samples_ms);
  }
};

/// Serialises the comparable part: `{"latency": 5.0, "selected_batch_size": 1}`.
inline void to_json(nlohmann::json& json, const MinLatencyProfilingResult& result) {
  json = nlohmann::json{{"latency", result.latency},
                        {"selected_batch_size", result.selected_batch_size}};
}

/// One candidate measured against the baseline: passed when it is at least as fast.
struct PerfValidationResult {
  std::string backend;
  double metric = 0.0;
  double baseline_metric = 0.0;
  double speedup = 0.0;
  bool passed = false;
};

}  // namespace aitune
