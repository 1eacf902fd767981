// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Measurement stop rules: how many calls warm a backend up, and when enough calls are timed.
///
/// A rule is a small immutable object behind the StopRule interface (non-virtual public
/// functions over private virtual steps), so users can plug in their own. Invalid values are
/// rejected at construction with aitune::ConfigError.

#include "aitune/core/error.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/text/validate.hpp"

#include <fmt/format.h>

#include <memory>
#include <span>
#include <string>

namespace aitune {

class StopRule {
 public:
  virtual ~StopRule() = default;

  /// Untimed calls before measuring.
  [[nodiscard]] int warmup_calls() const { return do_warmup_calls(); }

  /// Asked after every timed call with all samples so far. True once they are enough; throws
  /// MeasurementError when they never will be (e.g. a latency that never settles).
  [[nodiscard]] bool is_finished(std::span<const double> samples_ms) const {
    return do_is_finished(samples_ms);
  }

  /// The part of the samples the statistics are computed from, once finished.
  [[nodiscard]] std::span<const double> measured(std::span<const double> samples_ms) const {
    return do_measured(samples_ms);
  }

  [[nodiscard]] std::string describe() const { return do_describe(); }

 private:
  virtual int do_warmup_calls() const = 0;
  virtual bool do_is_finished(std::span<const double> samples_ms) const = 0;
  virtual std::span<const double> do_measured(std::span<const double> samples_ms) const {
    return samples_ms;
  }
  virtual std::string do_describe() const = 0;
};

/// A fixed number of warm-up calls, then a fixed number of timed calls (aitune's default:
/// 10 warm-up, 20 measured).
class NumSteps final : public StopRule {
 public:
  explicit NumSteps(int warmup_calls = 10, int measured_calls = 20)
      : warmup_(detail::require_at_least(warmup_calls, 0, "NumSteps warm-up calls")),
        measured_(detail::require_at_least(measured_calls, 1, "NumSteps measured calls")) {}

  [[nodiscard]] int measured_calls() const noexcept { return measured_; }

 private:
  int do_warmup_calls() const override { return warmup_; }
  bool do_is_finished(std::span<const double> samples_ms) const override {
    return static_cast<int>(samples_ms.size()) >= measured_;
  }
  std::string do_describe() const override {
    return fmt::format("NumSteps(warmup={}, measured={})", warmup_, measured_);
  }

  int warmup_;
  int measured_;
};

/// Measures until the last `window` calls have a coefficient of variation at most `max_cv`;
/// fails with MeasurementError if that has not happened after `max_measured` calls.
class StableWindow final : public StopRule {
 public:
  explicit StableWindow(int window = 20, double max_cv = 0.10, int max_measured = 100,
                        int warmup_calls = 10)
      : window_(detail::require_at_least(window, 2, "StableWindow window")),
        max_cv_(detail::require_ratio(max_cv, "StableWindow max coefficient of variation")),
        max_measured_(detail::require_at_least(max_measured, window_,
                                               "StableWindow max measured calls (>= window)")),
        warmup_(detail::require_at_least(warmup_calls, 0, "StableWindow warm-up calls")) {}

  [[nodiscard]] int window() const noexcept { return window_; }
  [[nodiscard]] double max_cv() const noexcept { return max_cv_; }
  [[nodiscard]] int max_measured() const noexcept { return max_measured_; }

 private:
  int do_warmup_calls() const override { return warmup_; }

  bool do_is_finished(std::span<const double> samples_ms) const override {
    const auto n = static_cast<int>(samples_ms.size());
    if (n < window_) return false;
    const double cv = LatencyStats::from_samples(do_measured(samples_ms)).cv;
    if (cv <= max_cv_) return true;
    if (n >= max_measured_) {
      throw MeasurementError(fmt::format(
          "latency never became stable: after {} timed calls the last {} vary by {:.1f} % "
          "(coefficient of variation), above the {:.1f} % allowed",
          n, window_, cv * 100.0, max_cv_ * 100.0));
    }
    return false;
  }

  std::span<const double> do_measured(std::span<const double> samples_ms) const override {
    const auto size = samples_ms.size();
    const auto window = static_cast<std::size_t>(window_);
    return size <= window ? samples_ms : samples_ms.subspan(size - window);
  }

  std::string do_describe() const override {
    return fmt::format("StableWindow(window={}, max_cv={:.1f} %, max_measured={}, warmup={})",
                       window_, max_cv_ * 100.0, max_measured_, warmup_);
  }

  int window_;
  double max_cv_;
  int max_measured_;
  int warmup_;
};

}  // namespace aitune
