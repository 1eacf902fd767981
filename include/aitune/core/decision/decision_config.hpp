// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Every parameter of the decision in one type: the rule, the minimum gain worth switching for,
/// the tie margin between candidates and the error the whole procedure may make. The race's
/// looks and the final decision both read it (decision/detail/rules.hpp,
/// decision/latency_decider.hpp).

#include "aitune/core/error.hpp"
#include "aitune/core/text/enum_text.hpp"
#include "aitune/core/text/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace aitune {

/// How results are compared.
enum class DecisionRule {
  /// A candidate displaces the baseline only when it is faster with confidence (the upper
  /// bound of its latency ratio to the baseline is below 1) and by at least the minimum
  /// practical gain; between candidates the lower median wins and a near tie goes to the one
  /// listed first (the default).
  confident_median,
  /// aitune's: lower mean latency wins, strict `<`, no confidence. Kept for comparison.
  aitune_mean,
};

[[nodiscard]] constexpr EnumText enum_text(DecisionRule rule) noexcept {
  switch (rule) {
    case DecisionRule::confident_median: return {"confident_median", "confident median"};
    case DecisionRule::aitune_mean: return {"aitune_mean", "aitune mean"};
  }
  return {};
}

class DecisionConfig {
 public:
  DecisionConfig& set_rule(DecisionRule rule) {
    rule_ = rule;
    return *this;
  }
  /// The smallest speedup over the baseline worth switching for (0.02: 2 %).
  DecisionConfig& set_min_gain(double gain) {
    min_gain_ = detail::require_ratio(gain, "minimum practical gain");
    return *this;
  }
  /// Candidates within this fraction of each other are a near tie (the earlier listed wins).
  DecisionConfig& set_tie_margin(double margin) {
    tie_margin_ = detail::require_ratio(margin, "tie margin");
    return *this;
  }
  /// The probability of a false switch away from the baseline the whole procedure allows
  /// (one-sided). The race spends it over its looks (RaceConfig::look_share) and splits each
  /// look's share over the candidates.
  DecisionConfig& set_alpha(double alpha) {
    if (!(alpha > 0.0 && alpha < 0.5)) {
      throw ConfigError(fmt::format("alpha must be within (0, 0.5), got {}", alpha));
    }
    alpha_ = alpha;
    return *this;
  }

  /// The error each bound of a give-up may make: dropping a candidate that cannot beat the
  /// baseline (or the leader) by the minimum gain, and ending the race when none can. A wrong
  /// give-up only misses a gain near the minimum, so it may be looser than alpha; it is tested
  /// on a trimmed-mean interval (trimmed_mean_interval.hpp) at every futility look.
  DecisionConfig& set_futility_alpha(double alpha) {
    if (!(alpha > 0.0 && alpha < 0.5)) {
      throw ConfigError(fmt::format("the futility alpha must be within (0, 0.5), got {}", alpha));
    }
    futility_alpha_ = alpha;
    return *this;
  }

  [[nodiscard]] DecisionRule rule() const noexcept { return rule_; }
  [[nodiscard]] double futility_alpha() const noexcept { return futility_alpha_; }
  [[nodiscard]] double min_gain() const noexcept { return min_gain_; }
  [[nodiscard]] double tie_margin() const noexcept { return tie_margin_; }
  [[nodiscard]] double alpha() const noexcept { return alpha_; }

  /// The error each bound of a comparison with the baseline may make: alpha, times the share of
  /// it one look may spend (1 where one decision is taken), split over the `candidates` compared
  /// with the baseline (Bonferroni), so that whichever candidate leads, a false switch stays
  /// within alpha. The race compares the candidates it races; the sequential schedule, which
  /// decides on each as it comes, all of the tuning's. Every level of the switch comes from here.
  [[nodiscard]] double baseline_tail(double look_share, std::size_t candidates) const noexcept {
    return alpha_ * look_share / static_cast<double>(std::max<std::size_t>(candidates, 1));
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format(
        "{} rule, alpha {} to switch, {} to give up, min gain {:.1f} %, tie margin {:.1f} %",
        to_label(rule_), alpha_, futility_alpha_, min_gain_ * 100.0, tie_margin_ * 100.0);
  }

 private:
  // Defaults chosen with bench/selection_quality.cpp (docs/measurement.md, "How the measurement
  // decides").
  DecisionRule rule_ = DecisionRule::confident_median;
  double min_gain_ = 0.02;
  double tie_margin_ = 0.01;
  double alpha_ = 0.01;
  double futility_alpha_ = 0.10;
};

}  // namespace aitune
