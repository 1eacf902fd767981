// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The noise-aware latency decision, as pure functions over per-round series:
///
/// - between candidates, in the order they are listed, a later one displaces the leader when
///   its paired median ratio to the leader is below 1 - tie_margin (a near tie goes to the one
///   listed first);
/// - a candidate displaces the baseline only when the upper bound of its paired ratio to the
///   baseline is below 1 (faster with confidence) and its median ratio is at most 1 - min_gain
///   (faster by at least the minimum practical gain): judge_look asks it at each look, and the
///   race's last look answers it (Measurement::switch_verdict).
///
/// Series without common rounds (the sequential schedule) fall back to unpaired comparisons.

#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/stats/median_interval.hpp"
#include "aitune/core/stats/paired_rounds.hpp"
#include "aitune/core/stats/trimmed_mean_interval.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace aitune::detail {

/// `ratio 0.712 [0.690, 0.731]`
[[nodiscard]] inline std::string labelled_ratio(const MedianInterval& ci) {
  return "ratio " + format_ratio(ci.median, ci.low, ci.high);
}

/// Does `challenger` (listed later) take the lead from `leader`? Paired when the two share
/// rounds, else on the medians of their calls.
[[nodiscard]] inline bool displaces_leader(const RoundSeries& challenger, double challenger_median,
                                           const RoundSeries& leader, double leader_median,
                                           double tie_margin) {
  const std::vector<double> ratios = paired_ratios(challenger, leader);
  if (!ratios.empty()) return median_of(ratios) < 1.0 - tie_margin;
  return challenger_median < leader_median * (1.0 - tie_margin);
}

/// Each bound of the steady-state final's question (faster_in_final): half of 5 %, since the
/// final may ask twice (after its rounds, and after as many again where a finalist leads
/// undecided: leads_in_final). With 6 rounds a sign test at this level asks a challenger to be
/// faster in every round; with 12, in 10 of them, so that one or two rounds a neighbour's burst
/// spoiled do not keep a finalist 17 % faster out (the transformer encoder on a 2-core EPYC).
inline constexpr double final_tail_alpha = 0.025;

/// The steady-state final's question (RaceConfig::set_steady_final): is `challenger` faster than
/// `leader` when each runs as a server calls it? Its paired median ratio is below
/// 1 - tie_margin, and the ratio's sign-test interval at final_tail_alpha lies below 1: finalists
/// that are tied change places only by chance at that level, never on a median's noise.
[[nodiscard]] inline bool faster_in_final(const RoundSeries& challenger, const RoundSeries& leader,
                                          double tie_margin) {
  const MedianInterval ratio = paired_ratio(challenger, leader, final_tail_alpha);
  return ratio.n > 0 && ratio.high < 1.0 && ratio.median < 1.0 - tie_margin;
}

/// Does `challenger` lead `leader` in the steady-state final without being faster_in_final yet:
/// its paired median ratio below 1 - tie_margin, its interval not? The final then plays its
/// rounds again, once.
[[nodiscard]] inline bool leads_in_final(const RoundSeries& challenger, const RoundSeries& leader,
                                         double tie_margin) {
  const std::vector<double> ratios = paired_ratios(challenger, leader);
  return !ratios.empty() && median_of(ratios) < 1.0 - tie_margin &&
         !faster_in_final(challenger, leader, tie_margin);
}

/// Does a candidate measured apart from the baseline (the sequential schedule) displace it?
/// The two medians' intervals, each at half of `tail_alpha` (two bounds must hold), are
/// separated and the gain is at least `min_gain`; consecutive calls are not independent, so
/// this is weaker evidence than the race's paired rounds, whose looks answer the same question
/// (judge_look).
[[nodiscard]] inline bool displaces_baseline_apart(std::span<const double> candidate_calls,
                                                   std::span<const double> baseline_calls,
                                                   double tail_alpha, double min_gain) {
  const MedianInterval c = median_interval(candidate_calls, tail_alpha / 2.0);
  const MedianInterval b = median_interval(baseline_calls, tail_alpha / 2.0);
  return c.high < b.low && c.median <= (1.0 - min_gain) * b.median;
}

/// Does a candidate whose paired ratio to the baseline is `vs_baseline` displace it: faster with
/// confidence (the interval's upper bound below 1) and by at least the minimum gain?
[[nodiscard]] inline bool displaces_baseline(const MedianInterval& vs_baseline,
                                             const DecisionConfig& decision) {
  return vs_baseline.high < 1.0 && vs_baseline.median <= 1.0 - decision.min_gain();
}

/// One backend as a look sees it.
struct LaneView {
  const RoundSeries* rounds = nullptr;
  bool is_baseline = false;
  bool alive = false;  ///< still racing (not failed, not dropped) and measured
};

/// The leader among the live candidates (never the baseline), by displaces_leader in list
/// order; none when no candidate is alive.
[[nodiscard]] inline std::optional<std::size_t> rank_leader(std::span<const LaneView> lanes,
                                                            double tie_margin) {
  std::optional<std::size_t> leader;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].is_baseline || !lanes[i].alive) continue;
    if (!leader ||
        displaces_leader(*lanes[i].rounds, 0.0, *lanes[*leader].rounds, 0.0, tie_margin)) {
      leader = i;
    }
  }
  return leader;
}

struct LookVerdict {
  std::optional<std::size_t> leader;
  std::optional<std::size_t> runner_up;               ///< the closest rival (the baseline counts)
  std::optional<MedianInterval> runner_up_vs_leader;  ///< its ratio to the leader
  std::optional<MedianInterval> leader_vs_baseline;   ///< at the switch level
  std::vector<std::size_t> drop;
  std::map<std::size_t, std::string> drop_reasons;
  /// The leader displaces the baseline: faster with confidence and by at least the minimum gain
  /// (switch side; only at a look that may switch). The same rule the decision ends with.
  bool leader_faster = false;
  bool settled = false;
};

/// The error levels of one look: each bound of the switch question (leader vs baseline, sign
/// test), each bound between candidates (sign test, for the log), and each bound of a give-up
/// (trimmed-mean interval, futility side).
struct LookLevels {
  double between = 0.0;
  double vs_baseline = 0.0;
  double futility = 0.0;
};

/// Judges the race at one look. Who leads (rank_leader); who is dropped - a rival confidently
/// slower than the leader, or a candidate that confidently cannot beat the baseline by the
/// minimum gain (both futility questions, at `levels.futility` on the trimmed-mean interval);
/// whether the leader is faster than the baseline with confidence (the switch question, at
/// `levels.vs_baseline` on the sign-test interval, its median at most 1 - min_gain: the rule the
/// decision ends with; never at a futility-only look,
/// `may_switch` false); and whether the decision is settled: no rival can still beat the leader
/// by more than the practical margin (min_gain) and the leader-vs-baseline question is answered
/// - faster with confidence, or confidently short of the minimum gain.
[[nodiscard]] inline LookVerdict judge_look(std::span<const LaneView> lanes,
                                            std::optional<std::size_t> baseline,
                                            const DecisionConfig& decision,
                                            const LookLevels& levels, bool may_switch = true) {
  LookVerdict verdict;
  verdict.leader = rank_leader(lanes, decision.tie_margin());
  if (!verdict.leader) {
    verdict.settled = true;
    return verdict;
  }
  const std::size_t leader = *verdict.leader;
  const bool with_baseline = baseline && lanes[*baseline].alive;
  const double low_enough = 1.0 - decision.min_gain();
  const auto futility = [&](std::size_t a, std::size_t b) {
    const std::vector<double> ratios = paired_ratios(*lanes[a].rounds, *lanes[b].rounds);
    return trimmed_ratio_bounds(ratios, levels.futility);
  };
  const auto describe = [&](const RatioBounds& bounds) {
    return fmt::format("ratio {} (trimmed mean), {:.0f} % lower bound {}",
                       format_fixed(bounds.ratio), (1.0 - levels.futility) * 100.0,
                       format_fixed(bounds.low));
  };
  bool settled = true;
  double closest = 0.0;  // the largest leader/rival ratio: the rival nearest the leader
  const auto consider_runner_up = [&](std::size_t i, const MedianInterval& rival_over_leader) {
    const double leader_over_rival = 1.0 / rival_over_leader.median;
    if (!verdict.runner_up || leader_over_rival > closest) {
      verdict.runner_up = i;
      verdict.runner_up_vs_leader = rival_over_leader;
      closest = leader_over_rival;
    }
  };

  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (i == leader || lanes[i].is_baseline || !lanes[i].alive) continue;
    // Dropping a rival for the leader decides between candidates: the sign test, at the
    // look's level, as before.
    const MedianInterval slower =
        paired_ratio(*lanes[i].rounds, *lanes[leader].rounds, levels.between);
    if (slower.low > 1.0) {
      verdict.drop.push_back(i);
      verdict.drop_reasons[i] =
          fmt::format("confidently slower than the leader ({})", labelled_ratio(slower));
      continue;
    }
    if (with_baseline) {
      const RatioBounds vs_baseline = futility(i, *baseline);
      if (vs_baseline.low > low_enough) {
        verdict.drop.push_back(i);
        verdict.drop_reasons[i] =
            fmt::format("cannot beat the baseline by {:.1f} % ({} to the baseline)",
                        decision.min_gain() * 100.0, describe(vs_baseline));
        continue;
      }
    }
    // Settling on this leader decides between candidates too: the sign test, within the
    // practical margin on both sides.
    const bool tied = slower.low >= low_enough && slower.high <= 1.0 + decision.min_gain();
    if (!tied) settled = false;
    consider_runner_up(i, slower);
  }

  if (with_baseline) {
    const MedianInterval vs_baseline =
        paired_ratio(*lanes[leader].rounds, *lanes[*baseline].rounds, levels.vs_baseline);
    verdict.leader_vs_baseline = vs_baseline;
    verdict.leader_faster = may_switch && displaces_baseline(vs_baseline, decision);
    const bool futile = futility(leader, *baseline).low > low_enough;
    if (!verdict.leader_faster && !futile) settled = false;
    consider_runner_up(
        *baseline, paired_ratio(*lanes[*baseline].rounds, *lanes[leader].rounds, levels.between));
  }
  verdict.settled = settled;
  return verdict;
}

}  // namespace aitune::detail
