// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a tuning's flow (core/strategy/min_latency_strategy.hpp) lends the steps that live beside
/// it (strategy/detail/measure_step.hpp, strategy/detail/screening_step.hpp): its settings, its
/// timer, its log and its guarded calls, by reference. A step is made for one call of the flow and
/// never outlives it, so that a strategy moved between tunings leaves no step pointing at it.

#include "aitune/core/backend.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/strategy/detail/guarded_calls.hpp"
#include "aitune/core/strategy/strategy_config.hpp"

#include <cstddef>

namespace aitune::detail {

template <Backend B, Timer T>
struct FlowParts {
  const StrategyConfig& config;
  T& timer;
  const Logger& log;
  const GuardedCalls<B>& guard;
  std::size_t candidates;  ///< how many the strategy was given
};

}  // namespace aitune::detail
