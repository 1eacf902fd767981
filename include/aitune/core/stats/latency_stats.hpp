// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Summary statistics of latency samples (milliseconds).

#include "aitune/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <vector>

namespace aitune {

/// The value at quantile `q` (0..1) of already sorted values, interpolating linearly between
/// the two closest ranks (the "type 7" definition used by NumPy and R).
[[nodiscard]] inline double quantile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw Error("quantile of an empty set of samples");
  if (!(q >= 0.0 && q <= 1.0)) throw ConfigError("quantile must be within [0, 1]");
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + fraction * (sorted[upper] - sorted[lower]);
}

/// The median of unsorted values (copies them).
[[nodiscard]] inline double median_of(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return quantile_of_sorted(sorted, 0.5);
}

struct LatencyStats {
  std::size_t n = 0;
  double mean = 0.0;
  double median = 0.0;
  double p90 = 0.0;
  double p99 = 0.0;
  double min = 0.0;
  double max = 0.0;
  double stddev = 0.0;  ///< sample standard deviation (n - 1); 0 for one sample
  double cv = 0.0;      ///< coefficient of variation, stddev / mean

  /// Throws aitune::Error for no samples or a sample that is negative or not finite.
  [[nodiscard]] static LatencyStats from_samples(std::span<const double> samples_ms) {
    if (samples_ms.empty()) throw Error("latency statistics need at least one sample");
    for (double sample : samples_ms) {
      if (!std::isfinite(sample) || sample < 0.0) {
        throw Error("latency samples must be finite and non-negative");
      }
    }
    std::vector<double> sorted(samples_ms.begin(), samples_ms.end());
    std::sort(sorted.begin(), sorted.end());

    LatencyStats stats;
    stats.n = sorted.size();
    stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(stats.n);
    stats.median = quantile_of_sorted(sorted, 0.5);
    stats.p90 = quantile_of_sorted(sorted, 0.9);
    stats.p99 = quantile_of_sorted(sorted, 0.99);
    stats.min = sorted.front();
    stats.max = sorted.back();
    if (stats.n > 1) {
      double sum_sq = 0.0;
      for (double sample : sorted)
        sum_sq += (sample - stats.mean) * (sample - stats.mean);
      stats.stddev = std::sqrt(sum_sq / static_cast<double>(stats.n - 1));
    }
    stats.cv = stats.mean > 0.0 ? stats.stddev / stats.mean : 0.0;
    return stats;
  }
};

}  // namespace aitune
