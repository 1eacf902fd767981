// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The decision: how two measured candidates rank (is_better), and the one verdict on whether
/// the best displaces the baseline, with the sentence that explains it (verdict). Every
/// schedule ends here. The race's looks ask the switch question with the same rule
/// (decision/detail/rules.hpp's judge_look) at the same level (DecisionConfig::baseline_tail), and
/// a raced tuning's verdict is their answer.

#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/decision/detail/rules.hpp"
#include "aitune/core/decision/results.hpp"
#include "aitune/core/stats/median_interval.hpp"
#include "aitune/core/stats/paired_rounds.hpp"
#include "aitune/core/stats/ratio.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aitune {

/// The one answer to "does the best candidate displace the baseline?", with the paired ratio it
/// rests on (none when measured apart) and the sentence the report gives.
struct SwitchVerdict {
  bool displaces = false;
  std::optional<RatioReport> ratio{};
  std::string why{};
};

class LatencyDecider {
 public:
  using Result = MinLatencyProfilingResult;

  /// `baseline_tail_alpha`: the error each bound of a comparison with the baseline may make,
  /// as the measurement that produced the results says (Measurement::baseline_tail_alpha).
  LatencyDecider(DecisionConfig config, double baseline_tail_alpha)
      : config_(std::move(config)), baseline_tail_alpha_(baseline_tail_alpha) {}

  [[nodiscard]] const DecisionConfig& config() const noexcept { return config_; }

  /// Does `result` (listed later) rank above `other`? Confident rule: where both ran in the
  /// race's steady-state final, the final's question (detail::faster_in_final); else its paired
  /// median ratio to `other` is below 1 - tie_margin (a near tie keeps the one listed first).
  /// aitune rule: a lower mean.
  [[nodiscard]] bool is_better(const Result& result, const Result& other) const {
    if (aitune_rule()) return result.stats.mean < other.stats.mean;
    if (result.steady_rounds.count() > 0 && other.steady_rounds.count() > 0) {
      return detail::faster_in_final(result.steady_rounds, other.steady_rounds,
                                     config_.tie_margin());
    }
    return detail::displaces_leader(result.rounds, result.latency, other.rounds, other.latency,
                                    config_.tie_margin());
  }

  /// Does `best`, the best candidate, displace the baseline, and why (or why not)? Computed
  /// once per tuning; every caller takes this verdict. aitune rule: a strictly lower mean.
  /// Confident rule, raced (`by_looks` holds the race's answer for `best`): the race's last look
  /// decided - faster with confidence and by at least the minimum gain - at this decider's
  /// level. Confident rule, measured apart: the medians' intervals are separated and the gain
  /// large enough (displaces_baseline_apart).
  [[nodiscard]] SwitchVerdict verdict(const Result& best, const Result& baseline,
                                      const std::string& name,
                                      std::optional<bool> by_looks = std::nullopt) const {
    SwitchVerdict verdict;
    verdict.ratio = ratio_to_baseline(best, baseline);
    if (aitune_rule()) {
      verdict.displaces = best.stats.mean < baseline.stats.mean;
    } else if (by_looks) {
      verdict.displaces = *by_looks;
    } else {
      verdict.displaces = detail::displaces_baseline_apart(
          best.samples_ms, baseline.samples_ms, baseline_tail_alpha_, config_.min_gain());
    }
    verdict.why = verdict.displaces ? why_selected(best, baseline, name, verdict.ratio)
                                    : why_kept(best, baseline, name, verdict.ratio);
    return verdict;
  }

  /// The two-sided level of the intervals compared with the baseline.
  [[nodiscard]] double confidence() const noexcept { return 1.0 - 2.0 * baseline_tail_alpha_; }

  /// The paired ratio to the baseline at the decision's level; none without paired rounds (the
  /// sequential schedule).
  [[nodiscard]] std::optional<RatioReport> ratio_to_baseline(const Result& result,
                                                             const Result& baseline) const {
    const std::vector<double> ratios = paired_ratios(result.rounds, baseline.rounds);
    if (ratios.empty()) return std::nullopt;
    const MedianInterval ci = median_interval(ratios, baseline_tail_alpha_);
    return RatioReport{ci.median, ci.low, ci.high, confidence(), ci.n};
  }

 private:
  [[nodiscard]] bool aitune_rule() const noexcept {
    return config_.rule() == DecisionRule::aitune_mean;
  }

  /// Why the candidate named `name` was selected over the baseline.
  [[nodiscard]] std::string why_selected(const Result& winner, const Result& baseline,
                                         const std::string& name,
                                         const std::optional<RatioReport>& ratio) const {
    if (aitune_rule()) {
      return fmt::format("{} has the lowest mean ({} < the baseline's {}; aitune rule)", name,
                         format_ms(winner.stats.mean), format_ms(baseline.stats.mean));
    }
    const std::string gain = fmt::format("by at least {:.1f} %", config_.min_gain() * 100.0);
    if (ratio) {
      return fmt::format("{} is faster than the baseline with confidence and {}: its latency is "
                         "{}x the baseline's, {}",
                         name, gain, format_fixed(ratio->ratio), describe_interval(*ratio));
    }
    return fmt::format(
        "{} is faster than the baseline with confidence and {} (medians {} vs {}, measured apart)",
        name, gain, format_ms(winner.latency), format_ms(baseline.latency));
  }

  /// Why the baseline stays although `best` (named `name`) was the best candidate.
  [[nodiscard]] std::string why_kept(const Result& best, const Result& baseline,
                                     const std::string& name,
                                     const std::optional<RatioReport>& ratio) const {
    if (aitune_rule()) {
      return fmt::format("no candidate had a lower mean; the best, {}, has {} vs {} (aitune rule)",
                         name, format_ms(best.stats.mean), format_ms(baseline.stats.mean));
    }
    const std::string none = fmt::format(
        "no candidate was faster with confidence by at least {:.1f} %", config_.min_gain() * 100.0);
    if (ratio) {
      return fmt::format("{}; the best, {}, is {}x the baseline, {}", none, name,
                         format_fixed(ratio->ratio), describe_interval(*ratio));
    }
    return fmt::format("{}; the best, {}, has a median of {} vs the baseline's {}", none, name,
                       format_ms(best.latency), format_ms(baseline.latency));
  }

  static std::string describe_interval(const RatioReport& ratio) {
    return fmt::format("{} interval [{}, {}] over {} paired rounds", format_level(ratio.confidence),
                       format_fixed(ratio.low), format_fixed(ratio.high), ratio.rounds);
  }

  DecisionConfig config_;
  double baseline_tail_alpha_;
};

}  // namespace aitune
