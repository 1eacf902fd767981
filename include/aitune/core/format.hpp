// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// How numbers are written for people: latencies with 3 decimals and their unit.

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace aitune {

/// `5.123 ms`
[[nodiscard]] inline std::string format_ms(double latency_ms) {
  return fmt::format("{:.3f} ms", latency_ms);
}

/// `2.41x`
[[nodiscard]] inline std::string format_speedup(double speedup) {
  return fmt::format("{:.2f}x", speedup);
}

/// `ratio 0.712 [0.690, 0.731]`; a bound the data cannot give yet (too few rounds for the
/// level) is written `-`.
[[nodiscard]] inline std::string format_ratio(double ratio, double low, double high) {
  const auto bound = [](double value) {
    return std::isfinite(value) ? fmt::format("{:.3f}", value) : std::string("-");
  };
  return fmt::format("{:.3f} [{}, {}]", ratio, bound(low), bound(high));
}

}  // namespace aitune
