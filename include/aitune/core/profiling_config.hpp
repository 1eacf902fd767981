// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// How a strategy profiles each backend.

#include "aitune/core/error.hpp"
#include "aitune/core/stop_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <concepts>
#include <memory>
#include <utility>
#include <vector>

namespace aitune {

/// Settings of the profiling loop, with sensible defaults and fluent setters.
class ProfilingConfig {
 public:
  ProfilingConfig() = default;

  /// Any StopRule; the config keeps an immutable shared copy.
  template <std::derived_from<StopRule> Rule>
  ProfilingConfig& set_stop_rule(Rule rule) {
    stop_rule_ = std::make_shared<const Rule>(std::move(rule));
    return *this;
  }
  ProfilingConfig& set_stop_rule(std::shared_ptr<const StopRule> rule) {
    if (!rule) throw ConfigError("the stop rule must not be null");
    stop_rule_ = std::move(rule);
    return *this;
  }
  [[nodiscard]] const StopRule& stop_rule() const noexcept { return *stop_rule_; }
  [[nodiscard]] const std::shared_ptr<const StopRule>& shared_stop_rule() const noexcept {
    return stop_rule_;
  }

  /// Batch sizes to profile at. A strategy may override them (MinLatencyStrategy uses [1]).
  ProfilingConfig& set_batch_sizes(std::vector<int> batch_sizes) {
    if (batch_sizes.empty()) throw ConfigError("batch sizes must not be empty");
    if (std::any_of(batch_sizes.begin(), batch_sizes.end(), [](int b) { return b < 1; })) {
      throw ConfigError(
          fmt::format("batch sizes must be positive, got [{}]", fmt::join(batch_sizes, ", ")));
    }
    batch_sizes_ = std::move(batch_sizes);
    return *this;
  }
  [[nodiscard]] const std::vector<int>& batch_sizes() const noexcept { return batch_sizes_; }

 private:
  std::shared_ptr<const StopRule> stop_rule_ = std::make_shared<const NumSteps>();
  std::vector<int> batch_sizes_{1};
};

}  // namespace aitune
