// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The checks every config setter makes on its values: a ConfigError that names the setting.
/// At the ground floor, so that the decision's and the measurement's settings share them
/// without one including the other.

#include "aitune/core/error.hpp"

#include <fmt/format.h>

namespace aitune::detail {

inline int require_at_least(int value, int minimum, const char* what) {
  if (value < minimum) {
    throw ConfigError(fmt::format("{} must be at least {}, got {}", what, minimum, value));
  }
  return value;
}

inline double require_ratio(double value, const char* what) {
  if (!(value >= 0.0 && value <= 1.0)) {
    throw ConfigError(fmt::format("{} must be within [0, 1], got {}", what, value));
  }
  return value;
}

}  // namespace aitune::detail
