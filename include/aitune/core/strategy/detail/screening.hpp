// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The screening before the checks (ScreeningConfig), as MinLatencyStrategy runs it: the race it
/// times with, the order it checks in, and who it screens out. A candidate is only ever screened
/// out against a backend whose outputs were checked (or the baseline, whose outputs are the
/// reference): a fast candidate that fails its check screens nobody out.

#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/decision/detail/rules.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/measure/race_config.hpp"
#include "aitune/core/measure/screening_config.hpp"
#include "aitune/core/stats/paired_rounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::detail {

/// The screen's race: the tuning's race settings, its rounds only (no looks, no confirmation, no
/// steady-state final); with a decision rule that takes no decision, it runs them and stops.
[[nodiscard]] inline RaceConfig screening_race(const RaceConfig& race,
                                               const ScreeningConfig& screening) {
  return RaceConfig{race}
      .set_looks(screening.rounds(), race.look_growth(), 1)
      .set_max_rounds(screening.rounds())
      .set_confirmation_rounds(0)
      .set_steady_final(0, race.final_settle_ms(), race.final_settle_calls(),
                        race.final_timed_calls());
}
[[nodiscard]] inline DecisionConfig screening_decision(const DecisionConfig& decision) {
  return DecisionConfig{decision}.set_rule(DecisionRule::aitune_mean);
}

/// The level of each screening bound: that of the race's first look between candidates.
[[nodiscard]] inline double screening_level(const DecisionConfig& decision,
                                            const RaceConfig& race) {
  return decision.alpha() * race.look_share(1);
}

/// The median of a lane's block values (infinity with none): the order the checks go in.
[[nodiscard]] inline double screened_median(const RoundSeries& rounds) {
  return median_of_rounds(rounds).value_or(std::numeric_limits<double>::infinity());
}

/// Every call the screen made, warm-up included.
[[nodiscard]] inline std::size_t total_calls_of(const Measurement& screen) {
  std::size_t calls = 0;
  for (const Lane& lane : screen.lanes)
    calls += lane.calls;
  return calls;
}

/// A backend the screen found a candidate clearly slower than, and by how much.
struct ScreenedBy {
  std::size_t checked;   ///< its position among the checked rounds given
  MedianInterval ratio;  ///< candidate / it, paired over the screen's rounds
};

/// Whether `candidate`'s rounds are clearly slower than one of the `checked` backends' (the
/// paired ratio's lower bound at `level` above 1, its median above 1 + margin); the one it is
/// slowest against if so.
[[nodiscard]] inline std::optional<ScreenedBy>
screened_out_by(const RoundSeries& candidate, const std::vector<const RoundSeries*>& checked,
                double level, double margin) {
  std::optional<ScreenedBy> strongest;
  for (std::size_t i = 0; i < checked.size(); ++i) {
    const MedianInterval ratio = paired_ratio(candidate, *checked[i], level);
    if (ratio.n == 0 || !(ratio.low > 1.0) || !(ratio.median > 1.0 + margin)) continue;
    if (!strongest || ratio.median > strongest->ratio.median) strongest = ScreenedBy{i, ratio};
  }
  return strongest;
}

/// A screened-out row's reason.
[[nodiscard]] inline std::string screened_out_reason(const ScreenedBy& by, std::string_view name,
                                                     double margin) {
  return fmt::format("{} to {} (checked) in {} interleaved rounds: slower with confidence and "
                     "by over 1 + the {:g} margin, left unchecked and unraced",
                     labelled_ratio(by.ratio), name, by.ratio.n, margin);
}

}  // namespace aitune::detail
