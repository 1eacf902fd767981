// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Per-round latencies of the interleaved schedule, and paired ratios between two backends.
///
/// In round r every backend still racing runs one block of calls; its round value is the median
/// of the block's kept calls. Two backends' values in the same round saw the same machine state
/// (clock, thermal, neighbours), so their ratio cancels drift that separate measurements would
/// attribute to whoever ran later.

#include "aitune/core/stats/median_interval.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace aitune {

/// A backend's value per round (ms); NaN where it did not run in that round.
struct RoundSeries {
  std::vector<double> values;

  void set(std::size_t round, double value) {
    if (values.size() <= round) values.resize(round + 1, std::numeric_limits<double>::quiet_NaN());
    values[round] = value;
  }
  [[nodiscard]] bool has(std::size_t round) const {
    return round < values.size() && !std::isnan(values[round]);
  }
  [[nodiscard]] std::size_t count() const {
    std::size_t n = 0;
    for (double value : values)
      n += std::isnan(value) ? 0 : 1;
    return n;
  }
};

/// The median of the values of the rounds that ran (NaN: did not); none when none ran.
[[nodiscard]] inline std::optional<double> median_of_rounds(const RoundSeries& rounds) {
  std::vector<double> ran;
  for (double value : rounds.values) {
    if (!std::isnan(value)) ran.push_back(value);
  }
  if (ran.empty()) return std::nullopt;
  return median_of(ran);
}

/// a / b in every round where both ran.
[[nodiscard]] inline std::vector<double> paired_ratios(const RoundSeries& a, const RoundSeries& b) {
  std::vector<double> ratios;
  const std::size_t rounds = std::min(a.values.size(), b.values.size());
  for (std::size_t r = 0; r < rounds; ++r) {
    if (!a.has(r) || !b.has(r)) continue;
    const double x = a.values[r];
    const double y = b.values[r];
    if (y > 0.0) {
      ratios.push_back(x / y);
    } else {
      ratios.push_back(x > 0.0 ? std::numeric_limits<double>::infinity() : 1.0);
    }
  }
  return ratios;
}

/// The median of a / b over common rounds, with its sign-test interval.
[[nodiscard]] inline MedianInterval paired_ratio(const RoundSeries& a, const RoundSeries& b,
                                                 double tail_alpha) {
  return median_interval(paired_ratios(a, b), tail_alpha);
}

}  // namespace aitune
