// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The sequential schedule (aitune's): each backend timed alone, one after another - warm-up
/// calls, then timed calls until the stop rule is satisfied.

#include "aitune/core/error.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/measure/stop_rules.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/message_sink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

namespace aitune::detail {

/// A safety net for user-written stop rules that never finish.
inline constexpr std::size_t max_timed_calls = 1'000'000;

/// What timing one backend alone produced.
struct TimedCalls {
  std::vector<double> measured_ms;  ///< the calls the stop rule selected
  std::size_t first_measured = 0;   ///< the number of the first of them among the timed calls
  std::size_t calls = 0;            ///< every call, warm-up included
  double time_ms = 0.0;             ///< time spent in those calls
};

/// Times `call(index)` alone: the rule's warm-up calls, then timed calls until the rule is
/// satisfied. Throws MeasurementError when the calls take longer than `budget_ms` in all.
template <Timer T>
[[nodiscard]] TimedCalls time_calls(const std::function<void(std::size_t)>& call,
                                    const StopRule& rule, T& timer,
                                    double budget_ms = std::numeric_limits<double>::infinity()) {
  TimedCalls result;
  const auto call_once = [&](std::size_t index) {
    if (result.calls >= max_timed_calls) {
      throw MeasurementError(fmt::format("stop rule {} did not finish after {} calls",
                                         rule.describe(), max_timed_calls));
    }
    const double ms = timer.measure([&] { call(index); }).ms();
    ++result.calls;
    result.time_ms += ms;
    if (result.time_ms > budget_ms) {
      throw MeasurementError(fmt::format("over its time budget: {:.1f} s spent measuring it",
                                         result.time_ms / 1000.0));
    }
    return ms;
  };
  for (int call_index = 0; call_index < rule.warmup_calls(); ++call_index)
    (void)call_once(static_cast<std::size_t>(call_index));
  std::vector<double> times_ms;
  for (std::size_t call_index = 0;; ++call_index) {
    times_ms.push_back(call_once(call_index));
    if (rule.is_finished(times_ms)) break;
  }
  const auto measured = rule.measured(times_ms);
  result.measured_ms.assign(measured.begin(), measured.end());
  // A rule selects a run of the timed calls (its span into them): where it starts says which
  // shape each selected call ran.
  if (!measured.empty() && measured.data() >= times_ms.data() &&
      measured.data() < times_ms.data() + times_ms.size()) {
    result.first_measured = static_cast<std::size_t>(measured.data() - times_ms.data());
  }
  return result;
}

/// The sequential schedule over `entrants`: each timed alone by `rule`, within its own budget
/// and the tuning's deadline. A failure is its lane's, never the measurement's. With several
/// shapes in `mix`, the calls go round the shapes, and each lane keeps its calls by shape.
template <Timer T>
[[nodiscard]] Measurement measure_alone(std::vector<Entrant>& entrants, const StopRule& rule,
                                        T& timer, const Logger& log, double deadline_ms,
                                        const SampleMix* mix = nullptr) {
  Measurement measurement;
  measurement.lanes.assign(entrants.size(), Lane{});
  for (std::size_t i = 0; i < entrants.size(); ++i) {
    Lane& lane = measurement.lanes[i];
    const double budget_ms = std::min(entrants[i].time_budget_ms, deadline_ms - timer.now_ms());
    try {
      TimedCalls timed;
      try {
        timed = time_calls(entrants[i].call, rule, timer, budget_ms);
      } catch (...) {
        end_calls_after_failure(entrants[i].after_calls);
        throw;
      }
      if (entrants[i].after_calls) entrants[i].after_calls();
      if (mix != nullptr && mix->mixed()) {
        lane.kept_by_shape_ms.resize(mix->timed().size());
        for (std::size_t k = 0; k < timed.measured_ms.size(); ++k) {
          lane.kept_by_shape_ms[mix->shape_of_call(timed.first_measured + k)].push_back(
              timed.measured_ms[k]);
        }
      }
      lane.kept_calls_ms = std::move(timed.measured_ms);
      lane.calls = timed.calls;
      lane.time_ms = timed.time_ms;
    } catch (const CancelledError&) {
      // The whole tuning stops, not this lane; the lanes timed before it are kept.
      measurement.stop_reason = StopReason::cancelled;
      measurement.stop_detail = fmt::format("cancelled while timing backend {} of {}; the "
                                            "figures are those measured until then",
                                            i + 1, entrants.size());
      throw MeasurementCancelled(std::move(measurement));
    } catch (...) {
      lane.failure = detail::current_exception_message();
      log.warn(2, fmt::format("{}: measure failed: {}", entrants[i].name, *lane.failure));
    }
  }
  measurement.stop_reason = StopReason::stop_rule;
  measurement.stop_detail = fmt::format("each backend timed alone by {}", rule.describe());
  return measurement;
}

}  // namespace aitune::detail
