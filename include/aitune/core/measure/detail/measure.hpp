// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The one measurement interface: entrants in, a Measurement out, by the configured schedule -
/// the interleaved race (measure/detail/race.hpp) or each backend alone
/// (measure/detail/sequential_schedule.hpp).

#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/measure/detail/race.hpp"
#include "aitune/core/measure/detail/sequential_schedule.hpp"
#include "aitune/core/measure/profiling_config.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/message_sink.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace aitune::detail {

/// Measures `entrants` (at most one of them the baseline) until the schedule's rule, a budget or
/// `deadline_ms` ends it. `candidates_in_tuning` is how many candidates the whole tuning
/// compares with the baseline: the sequential schedule sees them one at a time, yet its one
/// decision per candidate must share alpha among all of them. `on_look` is told of each round and
/// look of the interleaved race. `mix`: the samples' shapes and weights (none: one shape).
template <Timer T>
[[nodiscard]] Measurement
measure_backends(std::vector<Entrant>& entrants, const ProfilingConfig& profiling,
                 const DecisionConfig& decision, T& timer, const Logger& log, double deadline_ms,
                 std::size_t candidates_in_tuning, LookObserver on_look = {},
                 const SampleMix* mix = nullptr) {
  switch (profiling.schedule()) {
    case Schedule::interleaved:
      return LatencyRace<T>(profiling.race(), profiling.warmup(), decision, timer, log, deadline_ms,
                            std::move(on_look), mix)
          .run(entrants);
    case Schedule::sequential: {
      Measurement measurement =
          measure_alone(entrants, profiling.stop_rule(), timer, log, deadline_ms, mix);
      measurement.baseline_tail_alpha = decision.baseline_tail(1.0, candidates_in_tuning);
      return measurement;
    }
  }
  throw Error("unknown schedule");
}

}  // namespace aitune::detail
