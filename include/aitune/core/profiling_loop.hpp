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
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace aitune {

/// A safety net for user-written stop rules that never finish.
inline constexpr std::size_t max_timed_calls = 1'000'000;

/// What timing one backend alone produced.
struct TimedCalls {
  std::vector<double> measured_ms;  ///< the calls the stop rule selected
  std::size_t calls = 0;            ///< every call, warm-up included
};

/// Times `backend` alone on the samples (cycling through them): the rule's warm-up calls, then
/// timed calls until the rule is satisfied. Each call's output is destroyed after its timing
/// ends, so freeing it is not counted. Throws MeasurementError when the calls take longer than
/// `budget_ms` in all.
template <Backend B, Timer T>
[[nodiscard]] TimedCalls time_backend(B& backend, std::span<const typename B::sample_type> samples,
                                      const StopRule& rule, T& timer,
                                      double budget_ms = std::numeric_limits<double>::infinity()) {
  if (samples.empty()) throw Error("profiling needs at least one sample");
  TimedCalls result;
  double spent_ms = 0.0;
  const auto call_once = [&](std::size_t index) {
    if (result.calls >= max_timed_calls) {
      throw MeasurementError(fmt::format("stop rule {} did not finish after {} calls",
                                         rule.describe(), max_timed_calls));
    }
    std::optional<typename B::output_type> output;
    const double ms =
        timer.measure([&] { output.emplace(backend.infer(samples[index % samples.size()])); }).ms();
    output.reset();
    ++result.calls;
    spent_ms += ms;
    if (spent_ms > budget_ms) {
      throw MeasurementError(
          fmt::format("over its time budget: {:.1f} s spent measuring it", spent_ms / 1000.0));
    }
    return ms;
  };
  for (int call = 0; call < rule.warmup_calls(); ++call)
    (void)call_once(static_cast<std::size_t>(call));
  std::vector<double> times_ms;
  for (std::size_t call = 0;; ++call) {
    times_ms.push_back(call_once(call));
    if (rule.is_finished(times_ms)) break;
  }
  const auto measured = rule.measured(times_ms);
  result.measured_ms.assign(measured.begin(), measured.end());
  return result;
}

}  // namespace aitune
