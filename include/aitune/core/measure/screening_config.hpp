// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Settings of the screening before the checks (docs/measurement.md, "Screening a large pool").
/// Where checking a candidate costs many calls (an accuracy budget checks at least 100 samples),
/// a few interleaved rounds of every built candidate and the baseline come first; the candidates
/// are then checked fastest first, and one clearly slower than a backend already checked (or the
/// baseline) is screened out, unchecked and unraced, with its ratio and interval in its row:
/// slower with confidence, as the race drops a rival (the paired ratio's lower bound above 1 at
/// the race's first-look level), and by more than a margin (its median above 1 + margin).

#include "aitune/core/error.hpp"
#include "aitune/core/text/validate.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <string>

namespace aitune {

class ScreeningConfig {
 public:
  /// Interleaved rounds of the screen, the race's blocks (0 turns screening off). 8 is the fewest
  /// in which a sign test at the race's first-look level (0.4 % with the defaults: alpha 1 %, the
  /// first look's 40 % share) can find one backend slower than another, in every round: 2^-8 is
  /// 0.39 %. With fewer rounds, or a lower alpha, it screens nobody out.
  ScreeningConfig& set_rounds(int rounds) {
    rounds_ = detail::require_at_least(rounds, 0, "screening rounds");
    return *this;
  }
  /// "Clearly slower": the median of the paired ratio to a checked backend is above 1 + margin
  /// (and its lower bound above 1). The race's blocks follow another backend's call, which moves
  /// some runtimes' medians by tens of percent, one runtime up to 1.3x another's
  /// (docs/measurement.md, "Decided on what the server will see"): the margin keeps a candidate
  /// that is faster alone from being screened out for that.
  ScreeningConfig& set_margin(double margin) {
    if (!(margin >= 0.0 && margin <= 10.0)) {
      throw ConfigError(fmt::format("the screening margin must be within [0, 10], got {}", margin));
    }
    margin_ = margin;
    return *this;
  }
  /// Screen only where the reference pass checks at least this many samples: with fewer, a
  /// check costs less than the screen would save (the default tuning checks one).
  ScreeningConfig& set_min_checked_samples(int samples) {
    min_checked_samples_ = detail::require_at_least(samples, 1, "screening's checked samples");
    return *this;
  }

  [[nodiscard]] int rounds() const noexcept { return rounds_; }
  [[nodiscard]] double margin() const noexcept { return margin_; }
  [[nodiscard]] int min_checked_samples() const noexcept { return min_checked_samples_; }
  /// Whether a tuning whose reference checks `checked` samples screens.
  [[nodiscard]] bool applies(std::size_t checked) const noexcept {
    return rounds_ > 0 && checked >= static_cast<std::size_t>(min_checked_samples_);
  }

  [[nodiscard]] std::string describe() const {
    if (rounds_ == 0) return "no screening";
    return fmt::format("screening in {} round(s) where {} or more samples are checked: a "
                       "candidate slower than a checked backend with confidence, by over {:g}x, "
                       "is not checked",
                       rounds_, min_checked_samples_, 1.0 + margin_);
  }

  friend bool operator==(const ScreeningConfig&, const ScreeningConfig&) = default;

 private:
  int rounds_ = 8;
  double margin_ = 0.5;
  int min_checked_samples_ = 20;
};

}  // namespace aitune
