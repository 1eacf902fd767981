// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// A distribution-free confidence interval for a median: the sign-test (binomial
/// order-statistic) interval.
///
/// For n independent values from any continuous distribution, the k-th smallest and k-th
/// largest bracket the true median with probability 1 - 2 P(Binomial(n, 1/2) < k), whatever the
/// shape of the distribution: heavy tails and latency spikes do not break it. It is exact, needs
/// no resampling (a bootstrap would be approximate, random, and slow at the thousands of
/// tunings the selection benchmark runs), and is invariant under monotone transforms, so the
/// interval of ratios is the exponent of the interval of log-ratios.

#include "aitune/core/error.hpp"
#include "aitune/core/stats/latency_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace aitune {

struct MedianInterval {
  std::size_t n = 0;
  double median = std::numeric_limits<double>::quiet_NaN();
  double low = -std::numeric_limits<double>::infinity();  ///< lower bound
  double high = std::numeric_limits<double>::infinity();  ///< upper bound
  double tail_alpha = 0.0;  ///< each bound errs with at most this probability
};

/// The largest k (1-based) with P(Binomial(n, 1/2) <= k - 1) <= tail_alpha, or 0 when even the
/// extreme values are not far enough out (too few values for this level).
[[nodiscard]] inline std::size_t sign_test_rank(std::size_t n, double tail_alpha) {
  if (!(tail_alpha > 0.0 && tail_alpha < 0.5)) {
    throw ConfigError("a sign-test tail probability must be within (0, 0.5)");
  }
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double log_choose = 0.0;  // log C(n, i)
  double cdf = 0.0;         // P(X <= i)
  for (std::size_t i = 0; i <= n / 2; ++i) {
    if (i > 0) log_choose += std::log(static_cast<double>(n - i + 1) / static_cast<double>(i));
    cdf += std::exp(log_choose + log_half_n);
    if (cdf > tail_alpha) return i;  // P(X <= i - 1) <= alpha < P(X <= i): k = i
  }
  return n / 2;
}

/// The median of `values` with an interval whose two bounds each fail with probability at most
/// `tail_alpha` (a two-sided interval at level 1 - 2 tail_alpha). NaN values are ignored.
[[nodiscard]] inline MedianInterval median_interval(std::span<const double> values,
                                                    double tail_alpha) {
  std::vector<double> sorted;
  sorted.reserve(values.size());
  for (double value : values) {
    if (!std::isnan(value)) sorted.push_back(value);
  }
  MedianInterval interval;
  interval.tail_alpha = tail_alpha;
  interval.n = sorted.size();
  if (sorted.empty()) return interval;
  std::sort(sorted.begin(), sorted.end());
  interval.median = quantile_of_sorted(sorted, 0.5);
  const std::size_t k = sign_test_rank(sorted.size(), tail_alpha);
  if (k >= 1) {
    interval.low = sorted[k - 1];
    interval.high = sorted[sorted.size() - k];
  }
  return interval;
}

}  // namespace aitune
