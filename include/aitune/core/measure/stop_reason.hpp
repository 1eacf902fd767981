// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Why a measurement ended, as the report says it (TuneReport::measurement.stop_reason).

#include "aitune/core/text/enum_text.hpp"

namespace aitune {

/// Why a measurement ended.
enum class StopReason {
  not_measured,  ///< nothing was measured
  settled,       ///< the race's decision settled and was confirmed
  looks_used,    ///< every look was used without settling
  fixed_rounds,  ///< the aitune rule: the first look's rounds, no looks; the caller decides
  time_budget,   ///< the tuning's time budget was spent
  round_budget,  ///< the race's round budget was spent
  call_budget,   ///< the race's call budget was spent
  nothing_left,  ///< every backend failed or was dropped
  stop_rule,     ///< the sequential schedule: each backend timed alone by the stop rule
  cancelled,     ///< a stop was requested (the stop token): what was measured so far is kept
};

[[nodiscard]] constexpr EnumText enum_text(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::not_measured: return {"not_measured", "nothing measured"};
    case StopReason::settled: return {"settled", "the decision settled"};
    case StopReason::looks_used: return {"looks_used", "every look used"};
    case StopReason::fixed_rounds: return {"fixed_rounds", "fixed rounds"};
    case StopReason::time_budget: return {"time_budget", "time budget spent"};
    case StopReason::round_budget: return {"round_budget", "round budget spent"};
    case StopReason::call_budget: return {"call_budget", "call budget spent"};
    case StopReason::nothing_left: return {"nothing_left", "nothing left to measure"};
    case StopReason::stop_rule: return {"stop_rule", "the stop rule"};
    case StopReason::cancelled: return {"cancelled", "cancelled"};
  }
  return {};
}

}  // namespace aitune
