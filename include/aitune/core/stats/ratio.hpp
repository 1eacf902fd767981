// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// RatioReport: a latency ratio to the baseline with its interval, as the decision states it
/// and the report shows it.

#include <cstddef>

namespace aitune {

/// A backend's latency relative to the baseline's: the median of the paired per-round ratios
/// (this / baseline) and its sign-test interval.
struct RatioReport {
  double ratio = 1.0;
  double low = 0.0;
  double high = 0.0;
  double confidence = 0.0;  ///< two-sided level of [low, high]
  std::size_t rounds = 0;   ///< paired rounds behind it
};

}  // namespace aitune
