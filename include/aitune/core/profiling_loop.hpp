// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The sequential profiling loop: warm one backend up, then time its calls until the stop rule
/// is satisfied.

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/stop_rules.hpp"
#include "aitune/core/timer.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace aitune {

/// A safety net for user-written stop rules that never finish.
inline constexpr std::size_t max_timed_calls = 1'000'000;

/// Times `backend` on the samples (cycling through them) and returns the measured latencies in
/// milliseconds, as selected by the rule. Each call's output is destroyed after its timing
/// ends, so freeing it is not counted.
template <Backend B, Timer T>
[[nodiscard]] std::vector<double> time_backend(B& backend,
                                               std::span<const typename B::sample_type> samples,
                                               const StopRule& rule, T& timer) {
  if (samples.empty()) throw Error("profiling needs at least one sample");
  for (int call = 0; call < rule.warmup_calls(); ++call) {
    (void)backend.infer(samples[static_cast<std::size_t>(call) % samples.size()]);
  }
  std::vector<double> times_ms;
  for (std::size_t call = 0;; ++call) {
    if (call >= max_timed_calls) {
      throw MeasurementError(fmt::format("stop rule {} did not finish after {} timed calls",
                                         rule.describe(), max_timed_calls));
    }
    const auto& sample = samples[call % samples.size()];
    std::optional<typename B::output_type> output;
    times_ms.push_back(timer.measure([&] { output.emplace(backend.infer(sample)); }).ms());
    output.reset();
    if (rule.is_finished(times_ms)) break;
  }
  const auto measured = rule.measured(times_ms);
  return {measured.begin(), measured.end()};
}

}  // namespace aitune
