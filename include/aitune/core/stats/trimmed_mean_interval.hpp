// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// A more efficient interval for the futility side of the decision: the 10 % trimmed mean of
/// paired log-ratios with its Tukey-McLaughlin standard error (the winsorized deviation) and
/// Student's t quantile.
///
/// The sign test (median_interval.hpp) holds whatever the noise, but it uses about 2/3 of the
/// information of a location estimate under near-normal noise: it is what guards a *switch*
/// away from the baseline. Giving up on a candidate only risks missing a gain near the minimum,
/// so that side may use this interval: trimming keeps latency spikes from dragging it, and on the
/// log scale the ratio's noise is close to symmetric. Its guarantee is approximate (it assumes
/// near-symmetric noise and enough rounds); the switch side never uses it.

#include "aitune/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace aitune {

/// A ratio's location estimate with one-sided bounds (each errs with about `tail_alpha`).
struct RatioBounds {
  std::size_t n = 0;
  double ratio = std::numeric_limits<double>::quiet_NaN();
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
};

namespace detail {

/// The standard normal quantile (Acklam's rational approximation, relative error below
/// 1.2e-9 over (0, 1)).
[[nodiscard]] inline double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) throw ConfigError("a normal quantile needs p within (0, 1)");
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                          1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                          6.680131188771972e+01, -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                          -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                          3.754408661907416e+00};
  constexpr double low_region = 0.02425;
  if (p < low_region) {
    const double q = std::sqrt(-2.0 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  if (p > 1.0 - low_region) return -normal_quantile(1.0 - p);
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

}  // namespace detail

/// The trimmed mean of log(ratios), as a ratio, with bounds at `tail_alpha` each. Non-positive
/// or non-finite ratios are ignored. Fewer than 8 usable ratios give no bounds (infinite).
[[nodiscard]] inline RatioBounds trimmed_ratio_bounds(std::span<const double> ratios,
                                                      double tail_alpha, double trim = 0.10) {
  std::vector<double> logs;
  logs.reserve(ratios.size());
  for (double ratio : ratios) {
    if (ratio > 0.0 && std::isfinite(ratio)) logs.push_back(std::log(ratio));
  }
  RatioBounds bounds;
  bounds.n = logs.size();
  if (logs.empty()) return bounds;
  std::sort(logs.begin(), logs.end());
  const std::size_t n = logs.size();
  const auto cut = static_cast<std::size_t>(std::floor(trim * static_cast<double>(n)));
  double sum = 0.0;
  for (std::size_t i = cut; i < n - cut; ++i)
    sum += logs[i];
  const double mean = sum / static_cast<double>(n - 2 * cut);
  bounds.ratio = std::exp(mean);
  if (n < 8) return bounds;
  // The winsorized values: the trimmed ones replaced by the nearest kept value.
  double w_sum = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    w_sum += logs[std::clamp(i, cut, n - cut - 1)];
  const double w_mean = w_sum / static_cast<double>(n);
  double w_ss = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double deviation = logs[std::clamp(i, cut, n - cut - 1)] - w_mean;
    w_ss += deviation * deviation;
  }
  const double w_sd = std::sqrt(w_ss / static_cast<double>(n - 1));
  const double se = w_sd / ((1.0 - 2.0 * static_cast<double>(cut) / static_cast<double>(n)) *
                            std::sqrt(static_cast<double>(n)));
  // Student's t with the trimmed sample's degrees of freedom (Tukey-McLaughlin), by its
  // Cornish-Fisher expansion around the normal quantile: stricter while rounds are few.
  const double z = detail::normal_quantile(1.0 - tail_alpha);
  const double df = static_cast<double>(n - 2 * cut - 1);
  const double t = z + (z * z * z + z) / (4.0 * df) +
                   (5.0 * std::pow(z, 5) + 16.0 * z * z * z + 3.0 * z) / (96.0 * df * df);
  bounds.low = std::exp(mean - t * se);
  bounds.high = std::exp(mean + t * se);
  return bounds;
}

}  // namespace aitune
