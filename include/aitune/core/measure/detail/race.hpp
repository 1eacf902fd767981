// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The interleaved latency race.
///
/// 1. Warm-up: each backend is called until its latency stops falling (WarmupConfig).
/// 2. Rounds: every backend still racing runs a block of calls, in a freshly shuffled order
///    each round (seeded), so drift hits everyone alike. The first call of a block may be
///    discarded (it pays for caches the previous backend evicted); the block's value is the
///    median of its kept calls. With several shapes timed (core/measure/sample_mix.hpp), a block
///    runs each shape in turn, its first call at that shape discarded, and its value is the mean
///    of the shapes' medians weighted by the mix: what the mix costs the server.
/// 3. Looks, at growing round counts: the leader is ranked (decision/detail/rules.hpp); every
/// rival's
///    paired ratio to the leader gets a sign-test interval at the look's share of alpha. A rival
///    confidently slower than the leader, or one that confidently cannot beat the baseline by the
///    minimum gain, is dropped (racing). The race is settled when every rival is either
///    confidently slower or within the practical margin of the leader, and the leader-vs-baseline
///    question is answered either way.
///    Once a look finds every candidate still racing faster than the baseline with confidence and
///    by the minimum gain, the baseline leaves the race (is parked): the switch is decided
///    whichever of them wins, those answers are kept, and the near tie between the candidates is
///    raced without paying for the baseline's calls in every round.
/// 4. Confirmation: once settled, the top two run `confirmation_rounds` more rounds alone and a
///    last look decides; if it is no longer settled the race goes on.
/// 5. The steady-state final (RaceConfig::set_steady_final): when the race decides to switch,
///    the candidates it found faster than the baseline are timed again as a server calls them,
///    in long blocks whose first calls (until the previous backend's threads have settled) are
///    not timed. One faster than the race's leader there with confidence is selected; where one
///    leads it without confidence yet, the final plays its rounds once more before deciding.
/// The race also ends when the tuning's time budget, the call budget, the round budget or the
/// looks run out; the decision then uses the data it has.

#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/decision/detail/rules.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/measure/race_config.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/stats/paired_rounds.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune::detail {

/// Why a finalist leaves the steady-state final for `pick`, from their paired `ratios` (the
/// finalist's time over the pick's, per round): "slower" only when its median ratio says so. A
/// finalist faster in most rounds that did not lead as the final requires (a spoiled round)
/// stays out as "not faster with confidence": the report called such a one "slower" at 0.789x.
inline std::string final_leave_reason(std::string_view pick, const std::vector<double>& ratios) {
  if (ratios.empty()) {
    return fmt::format("not measured against {} in the steady-state final", pick);
  }
  const double median = median_of(ratios);
  if (median < 1.0) {
    return fmt::format("not faster than {} with confidence in the steady-state final ({}x over "
                       "{} round(s), short of leading as the final requires)",
                       pick, format_fixed(median), ratios.size());
  }
  return fmt::format("slower than {} in the steady-state final ({}x over {} round(s))", pick,
                     format_fixed(median), ratios.size());
}

/// Block values are medians of the kept calls.
inline double block_value(std::vector<double> kept) {
  std::sort(kept.begin(), kept.end());
  return quantile_of_sorted(kept, 0.5);
}
template <Timer T>
class LatencyRace {
 public:
  /// With the aitune rule there are no looks, drops or confirmation: the rounds of the first
  /// look are run and the caller decides on them.
  /// `mix`: the samples' shapes and weights (none: one shape).
  LatencyRace(const RaceConfig& race, const WarmupConfig& warmup, const DecisionConfig& decision,
              T& timer, const Logger& log, double deadline_ms, LookObserver on_look = {},
              const SampleMix* mix = nullptr)
      : race_(race), warmup_(warmup), decision_(decision), timer_(timer), log_(log),
        deadline_ms_(deadline_ms), on_look_(std::move(on_look)),
        judged_(decision.rule() == DecisionRule::confident_median), random_(race.seed()),
        mix_(mix != nullptr && mix->mixed() ? *mix : SampleMix(1)) {}

  /// Runs the race: one lane per entrant, in the same order, and how it ended.
  Measurement run(std::vector<Entrant>& entrants) {
    entrants_ = &entrants;
    summary_.lanes.assign(entrants.size(), Lane{});
    lanes_ = &summary_.lanes;
    std::size_t candidates = 0;
    for (std::size_t i = 0; i < entrants.size(); ++i) {
      if (entrants[i].is_baseline) baseline_ = i;
      candidates += entrants[i].is_baseline ? 0 : 1;
    }
    candidates_ = std::max<std::size_t>(candidates, 1);
    try {
      race();
    } catch (const CancelledError&) {
      // What was measured until the stop stays with it: the report so far shows it.
      stop(StopReason::cancelled,
           fmt::format("cancelled after {} round(s) and {} look(s); the figures are those "
                       "measured until then, and nothing was decided",
                       summary_.rounds, summary_.looks));
      summary_.baseline_tail_alpha = baseline_tail(std::max(summary_.looks, 1));
      throw MeasurementCancelled(std::move(summary_));
    }
    // A parked baseline was last compared at the look that parked it: its paired rounds, and so
    // its intervals, stop there.
    summary_.baseline_tail_alpha =
        baseline_tail(baseline_parked_ ? parked_at_look_ : std::max(summary_.looks, 1));
    if (race_.warms_up_after_switch()) {
      summary_.stop_detail += fmt::format(
          "; calls within {:g} ms of a block's start were not timed", race_.switch_warmup_ms());
    }
    if (baseline_parked_ && summary_.rounds > parked_at_round_) {
      summary_.stop_detail += fmt::format(
          "; the baseline left the race after look {} ({} rounds): every candidate still racing "
          "was faster than it with confidence; their ratios to it are over those rounds, the "
          "speedups chained through the selected backend's",
          parked_at_look_, parked_at_round_);
    }
    if (judged_) summary_.switch_verdict = SwitchByLooks{faster_leader_, parked_for()};
    return std::move(summary_);
  }

 private:
  /// The race itself: the warm-ups, the rounds and their looks, and the steady-state final.
  void race() {
    for (std::size_t i = 0; i < entrants_->size(); ++i) {
      AfterCallsGuard run((*entrants_)[i].after_calls);
      warm_up(i);
      (void)end_calls(i, run);
    }

    int next_look_round = race_.look_round(1);
    while (!stopped()) {
      const std::vector<std::size_t> racing = still_racing();
      if (racing.empty()) {
        stop(StopReason::nothing_left, "no backend left to measure");
        break;
      }
      run_round(racing);
      tell_look();  // between rounds
      if (stopped()) break;
      const int rounds = static_cast<int>(summary_.rounds);
      if (rounds < next_look_round) {
        // Between the looks that may switch, looks that may only give up: they spend none of
        // the switch side's alpha, so ties end early. A parked baseline's question is answered.
        if (judged_ && !baseline_parked_ && race_.is_futility_look(rounds) && futility_look()) {
          stop(StopReason::settled, "settled: no candidate can beat the baseline by the minimum "
                                    "gain");
        }
        continue;
      }
      if (!judged_) {
        stop(StopReason::fixed_rounds,
             fmt::format("{} rounds run (no looks: decided by the caller)", summary_.rounds));
        break;
      }
      next_look_round = race_.look_round(summary_.looks + 2);
      // Only a decision to switch is confirmed: keeping the baseline needs no second look.
      if (look() && (!last_verdict_.leader_faster || confirm()))
        stop(StopReason::settled, "settled");
      if (!stopped() && summary_.looks >= race_.max_looks()) {
        stop(StopReason::looks_used, fmt::format("all {} looks used", race_.max_looks()));
      }
    }
    // A budget that ends the race between looks leaves data no look has judged: judging it is
    // one more look, with that look's share of alpha (or the last share, if none is left).
    if (judged_ && summary_.stop_reason != StopReason::settled &&
        static_cast<int>(summary_.rounds) > last_look_round_ &&
        summary_.looks < race_.max_looks()) {
      (void)look();
    }
    if (judged_ && faster_leader_ && race_.final_rounds() > 0) run_steady_final();
  }

  [[nodiscard]] bool stopped() const noexcept {
    return summary_.stop_reason != StopReason::not_measured;
  }
  void stop(StopReason reason, std::string detail) {
    summary_.stop_reason = reason;
    summary_.stop_detail = std::move(detail);
  }

  std::vector<std::size_t> still_racing() const {
    std::vector<std::size_t> racing;
    for (std::size_t i = 0; i < lanes_->size(); ++i) {
      const Lane& lane = (*lanes_)[i];
      if (!lane.failure && !lane.dropped && !parked(i)) racing.push_back(i);
    }
    return racing;
  }

  /// Times one call of entrant `i`; false (with the lane failed) when it throws or the
  /// backend's own budget is spent.
  bool timed_call(std::size_t i, std::size_t call_index, double& ms, double* host_ms = nullptr) {
    Entrant& entrant = (*entrants_)[i];
    Lane& lane = (*lanes_)[i];
    try {
      const Timing timing = timer_.measure([&] { entrant.call(call_index); });
      ms = timing.ms();
      if (host_ms != nullptr) *host_ms = timing.device_ms ? timing.host_ms : -1.0;
    } catch (const CancelledError&) {
      throw;  // the whole tuning stops, not this lane; the run's guard puts the process back
    } catch (...) {
      fail_lane(i, detail::current_exception_message());
      return false;
    }
    ++lane.calls;
    lane.time_ms += ms;
    if (lane.time_ms > entrant.time_budget_ms) {
      fail_lane(i, fmt::format("over its time budget: {:.1f} s spent measuring it",
                               lane.time_ms / 1000.0));
      return false;
    }
    return true;
  }

  /// Entrant `i` leaves the race for `why`, told once as a warning.
  void fail_lane(std::size_t i, std::string why) {
    Lane& lane = (*lanes_)[i];
    lane.failure = std::move(why);
    log_.warn(2, fmt::format("{}: measure failed: {}", (*entrants_)[i].name, *lane.failure));
  }

  /// Entrant `i`'s after_calls, once its run of calls (guarded by `run`) is over (untimed);
  /// false (with the lane failed, unless a call failed it first) when it throws.
  bool end_calls(std::size_t i, AfterCallsGuard& run) {
    run.release();
    Entrant& entrant = (*entrants_)[i];
    if (!entrant.after_calls) return true;
    try {
      entrant.after_calls();
      return true;
    } catch (const CancelledError&) {
      throw;
    } catch (...) {
      if (!(*lanes_)[i].failure) fail_lane(i, detail::current_exception_message());
      return false;
    }
  }

  void warm_up(std::size_t i) {
    Lane& lane = (*lanes_)[i];
    double fastest = std::numeric_limits<double>::infinity();
    for (int call = 1; call <= warmup_.max_calls(); ++call) {
      if (past_deadline()) return;
      double ms = 0.0;
      if (!timed_call(i, static_cast<std::size_t>(call - 1), ms)) return;
      ++lane.warmup_calls;
      const bool falling = ms < warmup_.settle_ratio() * fastest;
      fastest = std::min(fastest, ms);
      if (call >= warmup_.min_calls() && !falling) break;
    }
  }

  /// Untimed calls on the discarded call's sample until the switch warm-up has passed since
  /// the block began; false when one failed.
  bool warm_after_switch(std::size_t i, std::size_t call_index, double block_began_ms) {
    for (int call = 0;
         call < RaceConfig::max_switch_warmup_calls &&
         timer_.now_ms() - block_began_ms < race_.switch_warmup_ms() && !past_deadline();
         ++call) {
      double ignored = 0.0;
      if (!timed_call(i, call_index, ignored)) return false;
    }
    return true;
  }

  void run_round(std::vector<std::size_t> order) {
    std::shuffle(order.begin(), order.end(), random_);
    const auto round = summary_.rounds;
    for (std::size_t i : order) {
      // The budget is honoured within one block, not one round - a slow model's round can take
      // seconds - once every backend has one round to be judged on. The backends left out have no
      // value for this round, which pairing skips.
      if (past_deadline() && (*lanes_)[i].rounds.count() > 0) continue;
      AfterCallsGuard run((*entrants_)[i].after_calls);
      ShapeCalls calls(shapes());
      const double block_began_ms = timer_.now_ms();
      bool ok = true;
      for (std::size_t shape = 0; shape < shapes() && ok; ++shape) {
        for (int call = 0; call < race_.block_calls() && ok; ++call) {
          double ms = 0.0;
          double host_ms = -1.0;
          // Every backend runs the same samples in a round, and the kept calls rotate through
          // each shape's samples as the rounds go by.
          const std::size_t call_index =
              mix_.call_of(shape, round + static_cast<std::size_t>(call));
          ok = timed_call(i, call_index, ms, &host_ms);
          // The first call at each shape pays for what the previous backend, or shape, evicted.
          const bool discarded = race_.discard_first_call() && race_.block_calls() > 1 && call == 0;
          if (ok && !discarded) calls.keep(shape, ms, host_ms);
          if (ok && discarded) ok = warm_after_switch(i, call_index, block_began_ms);
        }
      }
      if (!end_calls(i, run) || !ok) continue;
      Lane& lane = (*lanes_)[i];
      lane.rounds.set(round, calls.add_to(lane, mix_));
    }
    ++summary_.rounds;
    if (past_deadline()) {
      stop(StopReason::time_budget, "the tuning's time budget was spent");
    } else if (static_cast<int>(summary_.rounds) >= race_.max_rounds()) {
      stop(StopReason::round_budget,
           fmt::format("the round budget ({}) was spent", race_.max_rounds()));
    } else if (total_calls() >= race_.max_calls()) {
      stop(StopReason::call_budget,
           fmt::format("the call budget ({}) was spent", race_.max_calls()));
    }
  }

  [[nodiscard]] bool past_deadline() const { return timer_.now_ms() > deadline_ms_; }

  /// Tells the look observer, if any, how the race stands.
  void tell_look() {
    if (!on_look_) return;
    on_look_(Look{summary_.rounds, static_cast<std::size_t>(total_calls()),
                  observed_leader_ ? (*entrants_)[*observed_leader_].name : std::string(),
                  observed_ratio_});
  }

  std::int64_t total_calls() const {
    std::int64_t calls = 0;
    for (const auto& lane : *lanes_)
      calls += static_cast<std::int64_t>(lane.calls);
    return calls;
  }

  std::vector<LaneView> views() const {
    std::vector<LaneView> views;
    for (std::size_t i = 0; i < lanes_->size(); ++i) {
      const Lane& lane = (*lanes_)[i];
      views.push_back(
          LaneView{&lane.rounds, (*entrants_)[i].is_baseline,
                   !lane.failure && !lane.dropped && !parked(i) && lane.rounds.count() > 0});
    }
    return views;
  }

  /// The error each bound between candidates may make at look `look`.
  [[nodiscard]] double tail(int look) const { return decision_.alpha() * race_.look_share(look); }
  /// The same against the baseline, split over the raced candidates.
  [[nodiscard]] double baseline_tail(int look) const {
    return decision_.baseline_tail(race_.look_share(look), candidates_);
  }

  /// One look: drops the clearly slower, returns whether the decision is settled. A
  /// confirmation re-check reuses the level of the look it confirms and can only take a
  /// decision back, never make one: it must find the same leader and the same answer about the
  /// baseline, so a false switch still needs that look to have erred.
  bool look(bool recheck = false) {
    if (!recheck) ++summary_.looks;
    last_look_round_ = static_cast<int>(summary_.rounds);
    const LookLevels levels = levels_at(summary_.looks);
    LookVerdict verdict = judge_look(views(), baseline_, decision_, levels);
    if (baseline_parked_) answer_from_parked_baseline(verdict);
    if (recheck) {
      const bool agrees = verdict.leader == last_verdict_.leader &&
                          verdict.leader_faster == last_verdict_.leader_faster;
      if (!agrees) verdict.settled = false;
      // A parked baseline is displaced by whichever of its candidates leads: a new leader
      // sends the race on between them, not the switch back.
      if (baseline_parked_) {
        faster_leader_ = verdict.leader;
      } else if (faster_leader_ && !(agrees && verdict.leader_faster)) {
        faster_leader_.reset();
      }
    } else {
      faster_leader_ = verdict.leader_faster ? verdict.leader : std::nullopt;
    }
    apply_drops(verdict);
    if (!recheck && verdict.leader_faster && !verdict.settled) park_baseline(levels);
    log_.info(1, fmt::format("{} {} after {} rounds (each bound at {:.2g}): {}",
                             recheck ? "confirming look" : "look", summary_.looks, summary_.rounds,
                             levels.vs_baseline, describe_look(verdict)));
    last_verdict_ = verdict;
    observed_leader_ = verdict.leader;
    observed_ratio_.reset();
    if (verdict.leader_vs_baseline && std::isfinite(verdict.leader_vs_baseline->median)) {
      observed_ratio_ = verdict.leader_vs_baseline->median;
    }
    tell_look();
    return verdict.settled;
  }

  [[nodiscard]] bool parked(std::size_t i) const { return baseline_parked_ && baseline_ == i; }

  /// Parks the baseline when every candidate still racing displaces it at this look's level
  /// (the question the look asked of the leader, asked of each): the switch no longer depends
  /// on which of them wins, and each answer is kept for the looks to come, which no longer
  /// measure the baseline. The alpha of these answers is the look's, already spent.
  void park_baseline(const LookLevels& levels) {
    if (baseline_parked_ || !baseline_) return;
    std::map<std::size_t, MedianInterval> answers;
    for (const std::size_t i : still_racing()) {
      if (i == *baseline_) continue;
      const MedianInterval vs_baseline =
          paired_ratio((*lanes_)[i].rounds, (*lanes_)[*baseline_].rounds, levels.vs_baseline);
      if (!displaces_baseline(vs_baseline, decision_)) return;
      answers.emplace(i, vs_baseline);
    }
    faster_than_baseline_ = std::move(answers);
    baseline_parked_ = true;
    parked_at_look_ = summary_.looks;
    parked_at_round_ = summary_.rounds;
    log_.info(1, fmt::format("the baseline leaves the race after {} rounds: all {} candidates "
                             "still racing are faster than it with confidence",
                             summary_.rounds, faster_than_baseline_.size()));
  }

  /// The candidates the baseline was parked for: each displaces it.
  [[nodiscard]] std::vector<std::size_t> parked_for() const {
    std::vector<std::size_t> entrants;
    for (const auto& [entrant, answer] : faster_than_baseline_)
      entrants.push_back(entrant);
    return entrants;
  }

  /// With the baseline parked, the leader's switch answer is the one kept for it.
  void answer_from_parked_baseline(LookVerdict& verdict) const {
    if (!verdict.leader) return;
    const auto answer = faster_than_baseline_.find(*verdict.leader);
    if (answer == faster_than_baseline_.end()) {  // cannot happen: no entrant joins later
      verdict.settled = false;
      return;
    }
    verdict.leader_faster = true;
    verdict.leader_vs_baseline = answer->second;
  }

  /// A look that may only give up (drop candidates, or settle on keeping the baseline).
  bool futility_look() {
    LookVerdict verdict =
        judge_look(views(), baseline_, decision_, levels_at(std::max(summary_.looks, 1)),
                   /*may_switch=*/false);
    apply_drops(verdict);
    if (!verdict.drop.empty() || verdict.settled) {
      log_.info(1, fmt::format("futility look after {} rounds: {}", summary_.rounds,
                               describe_look(verdict)));
    }
    if (verdict.settled) faster_leader_.reset();
    return verdict.settled;
  }

  [[nodiscard]] LookLevels levels_at(int look) const {
    return LookLevels{tail(look), baseline_tail(look), decision_.futility_alpha()};
  }

  void apply_drops(const LookVerdict& verdict) {
    for (std::size_t i : verdict.drop)
      drop(i, verdict.drop_reasons.at(i));
  }

  std::string describe_look(const LookVerdict& verdict) const {
    if (!verdict.leader) return "no candidate left";
    std::string text = fmt::format("leader {}", (*entrants_)[*verdict.leader].name);
    if (verdict.leader_vs_baseline) {
      const auto& ci = *verdict.leader_vs_baseline;
      text += fmt::format(", to the baseline {}", labelled_ratio(ci));
    }
    if (verdict.runner_up && verdict.runner_up_vs_leader &&
        !(*entrants_)[*verdict.runner_up].is_baseline) {
      text += fmt::format(", closest rival {} at {}", (*entrants_)[*verdict.runner_up].name,
                          labelled_ratio(*verdict.runner_up_vs_leader));
    }
    return text + (verdict.settled ? ", settled" : "");
  }

  /// After a settled look: the top two race alone for a few rounds, then a last look. Returns
  /// whether the decision is still settled (false sends the race on).
  bool confirm() {
    if (race_.confirmation_rounds() == 0 || !last_verdict_.leader || !last_verdict_.runner_up) {
      return true;
    }
    const std::vector<std::size_t> top_two{*last_verdict_.leader, *last_verdict_.runner_up};
    for (int r = 0; r < race_.confirmation_rounds() && !stopped(); ++r) {
      run_round(top_two);
    }
    if (stopped()) return false;  // a budget ran out: decide as is
    return look(/*recheck=*/true);
  }

  /// The candidates the race found faster than the baseline at its last look's level (each may
  /// displace it), the leader first, whether still racing or dropped: a candidate the race
  /// dropped for being slower than the leader may have paid more than it for the others'
  /// threads, which is what the final is there to see.
  [[nodiscard]] std::vector<std::size_t> finalists() const {
    std::vector<std::size_t> finalists{*faster_leader_};
    const double level = levels_at(std::max(summary_.looks, 1)).vs_baseline;
    for (std::size_t i = 0; i < lanes_->size() && baseline_; ++i) {
      const Lane& lane = (*lanes_)[i];
      if (i == *faster_leader_ || i == *baseline_ || lane.failure) continue;
      if (faster_than_baseline_.contains(i) ||
          displaces_baseline(paired_ratio(lane.rounds, (*lanes_)[*baseline_].rounds, level),
                             decision_)) {
        finalists.push_back(i);
      }
    }
    return finalists;
  }

  /// One block of the steady-state final for entrant `i` in final round `round`: untimed calls
  /// until the settling time has passed (at least the settling calls), then the timed ones, the
  /// block's value their median. False when a call failed or the time budget ran out.
  bool steady_block(std::size_t i, std::size_t round) {
    Lane& lane = (*lanes_)[i];
    AfterCallsGuard run((*entrants_)[i].after_calls);
    const double began_ms = timer_.now_ms();
    const std::size_t first_index = summary_.rounds + round;  // the same samples for each
    for (int call = 0; call < race_.final_settle_calls() ||
                       (timer_.now_ms() - began_ms < race_.final_settle_ms() &&
                        call < RaceConfig::max_switch_warmup_calls);
         ++call) {
      double ignored = 0.0;
      if (past_deadline() || !timed_call(i, mix_.call_of(0, first_index), ignored)) {
        (void)end_calls(i, run);
        return false;
      }
    }
    ShapeCalls timed(shapes());
    for (std::size_t shape = 0; shape < shapes(); ++shape) {
      // Settled at the first shape; each other shape's first call pays for the change of shape.
      for (int call = shape == 0 ? 0 : -1; call < race_.final_timed_calls(); ++call) {
        double ms = 0.0;
        const std::size_t item = first_index + static_cast<std::size_t>(std::max(call, 0));
        if (!timed_call(i, mix_.call_of(shape, item), ms)) {
          (void)end_calls(i, run);
          return false;
        }
        if (call >= 0) timed.keep(shape, ms, -1.0);
      }
    }
    if (!end_calls(i, run)) return false;
    lane.steady_rounds.set(round, timed.value(mix_));
    return true;
  }

  /// 5. The steady-state final, when there are two finalists or more: rounds of one long block
  /// each, played once more where a finalist leads the pick undecided (leads_in_final). A
  /// finalist faster than the pick so far (the race's leader first) by faster_in_final
  /// becomes the pick; the other finalists leave the race for it, and when it is not the race's
  /// leader, so does every candidate still racing. Cut short by the time budget, the race's
  /// leader stays.
  void run_steady_final() {
    SteadyFinal final{race_.describe_final(), finalists(), *faster_leader_};
    // With one finalist the pick cannot change, and a switch costs no more calls than it did.
    if (final.finalists.size() < 2) return;
    const auto alive = [&](std::size_t i) { return !(*lanes_)[i].failure; };
    play_final_rounds(final, race_.final_rounds());
    // A finalist ahead of the pick but not yet with confidence: the rounds once more (a round
    // or two that a burst on the machine spoiled must not keep the faster one out).
    std::string extended;
    if (const std::vector<std::size_t> so_far = alive_finalists(final);
        final.cut_short.empty() && !so_far.empty()) {
      const std::size_t pick =
          final_pick(so_far, alive(*faster_leader_) ? *faster_leader_ : so_far.front());
      if (std::any_of(so_far.begin(), so_far.end(), [&](std::size_t i) {
            return i != pick &&
                   leads_in_final((*lanes_)[i].steady_rounds, (*lanes_)[pick].steady_rounds,
                                  decision_.tie_margin());
          })) {
        play_final_rounds(final, race_.final_rounds());
        extended = fmt::format(", extended to {} round(s): a finalist led undecided", final.rounds);
      }
    }
    const std::vector<std::size_t> measured = alive_finalists(final);
    if (measured.empty()) {  // every finalist failed: nothing to switch to
      faster_leader_.reset();
      final.cut_short = "every finalist failed";
      summary_.stop_detail +=
          fmt::format("; then {}, in which every finalist failed", race_.describe_final());
      summary_.steady_final = std::move(final);
      return;
    }
    for (const std::size_t i : measured) {
      Lane& lane = (*lanes_)[i];
      lane.steady_median_ms = median_of_rounds(lane.steady_rounds);
    }
    final.pick = alive(*faster_leader_) ? *faster_leader_ : measured.front();
    if (final.cut_short.empty()) final.pick = final_pick(measured, final.pick);
    // The pick races on (a finalist the race had dropped comes back); the other finalists
    // leave for it, and when it is not the race's leader, so does every candidate still racing.
    Lane& picked = (*lanes_)[final.pick];
    picked.dropped = false;
    picked.drop_reason.clear();
    for (std::size_t i = 0; i < lanes_->size(); ++i) {
      Lane& lane = (*lanes_)[i];
      if (i == final.pick || (baseline_ && i == *baseline_) || lane.failure) continue;
      const bool finalist =
          std::find(final.finalists.begin(), final.finalists.end(), i) != final.finalists.end();
      if (finalist && final.cut_short.empty()) {
        const std::string why = final_leave_reason(
            (*entrants_)[final.pick].name, paired_ratios(lane.steady_rounds, picked.steady_rounds));
        if (lane.dropped) {
          lane.drop_reason += "; then " + why;
        } else {
          drop(i, why);
        }
      } else if (!lane.dropped && final.pick != *faster_leader_) {
        drop(i, fmt::format("not faster than the baseline with confidence, and {} was selected "
                            "in the steady-state final",
                            (*entrants_)[final.pick].name));
      }
    }
    if (final.pick != *faster_leader_) {
      log_.info(1, fmt::format("steady-state final: {} is faster than the race's leader {} when "
                               "each runs as a server calls it",
                               (*entrants_)[final.pick].name, (*entrants_)[*faster_leader_].name));
    }
    faster_leader_ = final.pick;
    summary_.stop_detail += fmt::format(
        "; then {} over {} finalist(s){}{}", race_.describe_final(), final.finalists.size(),
        extended,
        final.cut_short.empty() ? std::string() : fmt::format(", cut short ({})", final.cut_short));
    summary_.steady_final = std::move(final);
  }

  /// `count` more rounds of the steady-state final, each finalist still alive once per round in
  /// a new order; cut short (final.cut_short) where the time budget runs out.
  void play_final_rounds(SteadyFinal& final, int count) {
    for (int round = 0; round < count && final.cut_short.empty(); ++round) {
      std::vector<std::size_t> order = alive_finalists(final);
      if (order.empty()) break;
      std::shuffle(order.begin(), order.end(), random_);
      for (const std::size_t i : order) {
        if (steady_block(i, final.rounds)) continue;
        if (past_deadline()) {
          final.cut_short = "the tuning's time budget ran out";
          break;
        }
      }
      if (final.cut_short.empty()) ++final.rounds;
    }
  }

  /// The finalists whose calls have not failed, in the final's order.
  [[nodiscard]] std::vector<std::size_t> alive_finalists(const SteadyFinal& final) const {
    std::vector<std::size_t> alive;
    std::copy_if(final.finalists.begin(), final.finalists.end(), std::back_inserter(alive),
                 [&](std::size_t i) { return !(*lanes_)[i].failure; });
    return alive;
  }

  /// The final's pick among `measured`, from `first` (the race's leader): each finalist in turn
  /// takes the pick where it is faster_in_final than the pick so far.
  [[nodiscard]] std::size_t final_pick(const std::vector<std::size_t>& measured,
                                       std::size_t first) const {
    std::size_t pick = first;
    for (const std::size_t i : measured) {
      if (i != pick && faster_in_final((*lanes_)[i].steady_rounds, (*lanes_)[pick].steady_rounds,
                                       decision_.tie_margin())) {
        pick = i;
      }
    }
    return pick;
  }

  void drop(std::size_t i, std::string why) {
    Lane& lane = (*lanes_)[i];
    lane.dropped = true;
    lane.drop_reason = std::move(why);
    log_.info(2, fmt::format("dropped {}: {}", (*entrants_)[i].name, lane.drop_reason));
  }

  /// One block's kept calls, by shape.
  class ShapeCalls {
   public:
    explicit ShapeCalls(std::size_t shapes) : ms_(shapes), host_ms_(shapes) {}
    void keep(std::size_t shape, double ms, double host_ms) {
      ms_[shape].push_back(ms);
      if (host_ms >= 0.0) host_ms_[shape].push_back(host_ms);
    }
    /// The block's value: the median of its kept calls, or, over several shapes, the mean of
    /// their medians weighted by `mix`.
    [[nodiscard]] double value(const SampleMix& mix) const {
      if (ms_.size() == 1) return block_value(ms_.front());
      std::vector<double> medians;
      for (const std::vector<double>& calls : ms_)
        medians.push_back(calls.empty() ? std::nan("") : block_value(calls));
      return mix.weighted(medians);
    }
    /// Adds the calls to `lane`'s, and returns the block's value.
    double add_to(Lane& lane, const SampleMix& mix) const {
      if (ms_.size() > 1) lane.kept_by_shape_ms.resize(ms_.size());
      for (std::size_t shape = 0; shape < ms_.size(); ++shape) {
        lane.kept_calls_ms.insert(lane.kept_calls_ms.end(), ms_[shape].begin(), ms_[shape].end());
        lane.kept_host_ms.insert(lane.kept_host_ms.end(), host_ms_[shape].begin(),
                                 host_ms_[shape].end());
        if (ms_.size() > 1) {
          auto& mine = lane.kept_by_shape_ms[shape];
          mine.insert(mine.end(), ms_[shape].begin(), ms_[shape].end());
        }
      }
      return value(mix);
    }

   private:
    std::vector<std::vector<double>> ms_;
    std::vector<std::vector<double>> host_ms_;
  };

  /// The shapes each block times (1 when the samples are not told apart).
  [[nodiscard]] std::size_t shapes() const noexcept { return mix_.timed().size(); }

  const RaceConfig& race_;
  const WarmupConfig& warmup_;
  const DecisionConfig& decision_;
  T& timer_;
  const Logger& log_;
  double deadline_ms_;
  LookObserver on_look_;
  std::optional<std::size_t> observed_leader_;  ///< at the last look, for on_look_
  std::optional<double> observed_ratio_;
  bool judged_;
  std::mt19937_64 random_;
  SampleMix mix_;  ///< at least one shape
  std::size_t candidates_ = 1;
  std::optional<std::size_t> faster_leader_;
  std::vector<Entrant>* entrants_ = nullptr;
  std::vector<Lane>* lanes_ = nullptr;  ///< summary_.lanes
  std::optional<std::size_t> baseline_;
  bool baseline_parked_ = false;
  int parked_at_look_ = 0;
  std::size_t parked_at_round_ = 0;
  std::map<std::size_t, MedianInterval> faster_than_baseline_;  ///< kept switch answers
  Measurement summary_;
  LookVerdict last_verdict_;
  int last_look_round_ = 0;
};

}  // namespace aitune::detail
