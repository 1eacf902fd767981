// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Small helpers shared by the benchmark programs: JSON output written atomically, and a
// distribution-free confidence interval of a median.

#include <aitune/aitune.hpp>
#include <aitune/core/io/atomic_file.hpp>
#include <aitune/core/io/cpu_info.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace aitune::bench {

/// Writes `json` to `path` without leaving half a file (aitune::write_json_file).
inline void write_json(const std::filesystem::path& path, const nlohmann::json& json) {
  write_json_file(path, json);
}

/// The machine, as far as a program can tell, for every benchmark's JSON: the CPU's model, the
/// instruction sets that decide reduced precision, and its hardware threads.
inline nlohmann::json machine_json() {
  return {{"cpu", cpu_model_name()},
          {"cpu_features", cpu_features()},
          {"hardware_threads", std::thread::hardware_concurrency()}};
}

/// The order statistics bounding the median of n values with at least 95 % confidence
/// (binomial, normal approximation with a continuity margin): 0-based ranks [lo, hi].
inline std::pair<std::size_t, std::size_t> median_ci_ranks(std::size_t n) {
  if (n < 6) return {0, n == 0 ? 0 : n - 1};
  const double half_width = 1.96 * std::sqrt(static_cast<double>(n)) / 2.0;
  const auto lo = static_cast<std::size_t>(
      std::max(0.0, std::floor(static_cast<double>(n) / 2.0 - half_width - 0.5)));
  const auto hi = std::min(
      n - 1, static_cast<std::size_t>(std::ceil(static_cast<double>(n) / 2.0 + half_width)));
  return {lo, hi};
}

struct MedianWithInterval {
  double median = 0.0;
  double low = 0.0;
  double high = 0.0;
};

inline MedianWithInterval median_with_interval(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto [lo, hi] = median_ci_ranks(values.size());
  return {quantile_of_sorted(values, 0.5), values[lo], values[hi]};
}

}  // namespace aitune::bench
