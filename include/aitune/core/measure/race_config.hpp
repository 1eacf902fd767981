// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Settings of the interleaved measurement ("the race") and its adaptive warm-up. The decision's
/// parameters live in DecisionConfig. Defaults are justified in docs/measurement.md ("How the
/// measurement decides").

#include "aitune/core/error.hpp"
#include "aitune/core/text/enum_text.hpp"
#include "aitune/core/text/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aitune {

/// How backends are timed.
enum class Schedule {
  /// All built candidates and the baseline are resident and timed in rounds, in a freshly
  /// shuffled order each round, a short block of calls each (the default).
  interleaved,
  /// aitune's: each backend is timed alone, one after another, by the StopRule. Use it when
  /// the candidates cannot all be resident at once (memory): losers are freed as it goes.
  sequential,
};

[[nodiscard]] constexpr EnumText enum_text(Schedule schedule) noexcept {
  switch (schedule) {
    case Schedule::interleaved: return {"interleaved", "interleaved"};
    case Schedule::sequential: return {"sequential", "sequential"};
  }
  return {};
}

/// Warm-up that adapts: call until latency stops falling (the JIT's profiling runs and cold
/// caches settle after a few calls), within [min_calls, max_calls]. A call counts as falling
/// when it is below `settle_ratio` times the fastest earlier warm-up call.
class WarmupConfig {
 public:
  WarmupConfig& set_min_calls(int calls) {
    min_calls_ = detail::require_at_least(calls, 1, "warm-up min calls");
    return *this;
  }
  WarmupConfig& set_max_calls(int calls) {
    max_calls_ = detail::require_at_least(calls, 1, "warm-up max calls");
    return *this;
  }
  WarmupConfig& set_settle_ratio(double ratio) {
    settle_ratio_ = detail::require_ratio(ratio, "warm-up settle ratio");
    return *this;
  }
  [[nodiscard]] int min_calls() const noexcept { return min_calls_; }
  [[nodiscard]] int max_calls() const noexcept { return std::max(max_calls_, min_calls_); }
  [[nodiscard]] double settle_ratio() const noexcept { return settle_ratio_; }

 private:
  int min_calls_ = 2;
  int max_calls_ = 10;
  double settle_ratio_ = 0.95;
};

/// The interleaved race: rounds of blocks, looks at growing round counts, a sequential
/// sign-test decision with alpha spending, racing, and a confirmation round.
class RaceConfig {
 public:
  /// Calls per backend per round (>= 1).
  RaceConfig& set_block_calls(int calls) {
    block_calls_ = detail::require_at_least(calls, 1, "block calls");
    return *this;
  }
  /// Drop the first call of each block from the measurement: it pays for the caches the
  /// previous backend evicted, which a server calling one model repeatedly does not.
  RaceConfig& set_discard_first_call(bool discard) {
    discard_first_call_ = discard;
    return *this;
  }
  /// With the first call discarded: more untimed calls after it, until `ms` have passed since
  /// the block began. The previous backend's thread pool can spin for a while after its call and
  /// take cores from this one, by amounts that differ between runtimes, which a server calling
  /// one model does not pay (docs/measurement.md, "Fair between thread pools"). 0: only the
  /// first call is discarded. They count as the backend's calls and time (its budget, the call
  /// budget). At most `max_switch_warmup_calls` such calls per block, so that a backend whose
  /// calls take no time cannot stall the race.
  RaceConfig& set_switch_warmup_ms(double ms) {
    if (!(ms >= 0.0 && ms <= 1000.0)) {
      throw ConfigError(fmt::format("the switch warm-up must be within [0, 1000] ms, got {}", ms));
    }
    switch_warmup_ms_ = ms;
    return *this;
  }
  static constexpr int max_switch_warmup_calls = 1000;
  /// Rounds before the first look, the factor between look points (10, 15, 23, 35, ...) and
  /// the number of looks.
  RaceConfig& set_looks(int first_look_rounds, double growth, int max_looks) {
    first_look_rounds_ =
        detail::require_at_least(first_look_rounds, 1, "rounds before the first look");
    if (!(growth > 1.0 && growth <= 10.0)) {
      throw ConfigError(fmt::format("look growth must be within (1, 10], got {}", growth));
    }
    look_growth_ = growth;
    max_looks_ = detail::require_at_least(max_looks, 1, "max looks");
    return *this;
  }
  /// At most this many rounds (default: the last look's round count).
  RaceConfig& set_max_rounds(int rounds) {
    max_rounds_ = detail::require_at_least(rounds, 1, "max rounds");
    return *this;
  }
  /// Calls of all backends together in the race (warm-up included).
  RaceConfig& set_max_calls(std::int64_t calls) {
    if (calls < 1) throw ConfigError(fmt::format("max calls must be at least 1, got {}", calls));
    max_calls_ = calls;
    return *this;
  }
  /// The share of alpha (DecisionConfig::set_alpha) the first look may spend; the later looks
  /// split the rest equally.
  RaceConfig& set_first_look_share(double share) {
    // Both the first look and the later ones need some alpha: a share of 0 or 1 would leave a
    // look testing at level 0.
    if (!(share > 0.0 && share < 1.0)) {
      throw ConfigError(
          fmt::format("the first look's share of alpha must be within (0, 1), got {}", share));
    }
    first_look_share_ = share;
    return *this;
  }
  /// Futility looks - looks that may only give up on candidates, never switch - every `every`
  /// rounds from round `first_round` on, between the regular looks. `every` 0 turns them off.
  RaceConfig& set_futility_looks(int first_round, int every) {
    futility_first_round_ = detail::require_at_least(first_round, 1, "first futility look round");
    futility_every_ = detail::require_at_least(every, 0, "rounds between futility looks");
    return *this;
  }
  [[nodiscard]] int futility_first_round() const noexcept { return futility_first_round_; }
  [[nodiscard]] int futility_every() const noexcept { return futility_every_; }
  [[nodiscard]] bool is_futility_look(int rounds) const noexcept {
    return futility_every_ > 0 && rounds >= futility_first_round_ &&
           (rounds - futility_first_round_) % futility_every_ == 0;
  }

  /// Rounds between the top two after the decision settles, before it is taken.
  RaceConfig& set_confirmation_rounds(int rounds) {
    confirmation_rounds_ = detail::require_at_least(rounds, 0, "confirmation rounds");
    return *this;
  }
  /// The steady-state final (docs/measurement.md, "Decided on what the server will see"). The
  /// race times each backend right after another ran, which a server calling one backend back to
  /// back never does: a runtime whose thread pool needs the cores longer to settle pays for it
  /// there and not in service. Once the race has decided to switch, the candidates it found
  /// faster than the baseline (the finalists, whether still racing or dropped), when there are
  /// two or more, are timed again as a server calls them: `rounds` rounds, in a fresh shuffled
  /// order each, of one block per finalist: untimed calls until `settle_ms` have passed since
  /// the block began (at least `settle_calls` of them), then `timed_calls` timed calls, the
  /// block's value their median. A finalist faster there than the race's leader, paired round by
  /// round, by more than DecisionConfig::tie_margin and in enough rounds for a sign test at 5 %
  /// (with 6 rounds: every one), is selected instead; tied finalists keep the leader. It changes
  /// only which of the finalists is selected, never whether the baseline is displaced: each was
  /// found faster than it at the race's level. `rounds` 0 turns it off.
  RaceConfig& set_steady_final(int rounds, double settle_ms, int settle_calls, int timed_calls) {
    if (!(settle_ms >= 0.0 && settle_ms <= 10'000.0)) {
      throw ConfigError(
          fmt::format("the steady-state final's settling time must be within [0, 10000] ms, got {}",
                      settle_ms));
    }
    // Every value checked before any is kept: a refused call leaves the settings as they were.
    const int checked_rounds = detail::require_at_least(rounds, 0, "steady-state final rounds");
    const int checked_settle_calls =
        detail::require_at_least(settle_calls, 1, "steady-state final settling calls");
    final_timed_calls_ = detail::require_at_least(timed_calls, 1, "steady-state final timed calls");
    final_rounds_ = checked_rounds;
    final_settle_calls_ = checked_settle_calls;
    final_settle_ms_ = settle_ms;
    return *this;
  }
  [[nodiscard]] int final_rounds() const noexcept { return final_rounds_; }
  [[nodiscard]] double final_settle_ms() const noexcept { return final_settle_ms_; }
  [[nodiscard]] int final_settle_calls() const noexcept { return final_settle_calls_; }
  [[nodiscard]] int final_timed_calls() const noexcept { return final_timed_calls_; }
  /// The steady-state final's block, in words.
  [[nodiscard]] std::string describe_final() const {
    if (final_rounds_ == 0) return "no steady-state final";
    return fmt::format("a steady-state final of {} round(s) of {} timed call(s) per finalist, "
                       "each block after {:g} ms (at least {} call(s)) of untimed calls",
                       final_rounds_, final_timed_calls_, final_settle_ms_, final_settle_calls_);
  }

  /// The seed of the per-round shuffles (a tuning is reproducible for a given seed).
  RaceConfig& set_seed(std::uint64_t seed) {
    seed_ = seed;
    return *this;
  }

  [[nodiscard]] int block_calls() const noexcept { return block_calls_; }
  [[nodiscard]] bool discard_first_call() const noexcept { return discard_first_call_; }
  [[nodiscard]] double switch_warmup_ms() const noexcept { return switch_warmup_ms_; }
  /// Whether blocks make warm-up calls after their discarded first call.
  [[nodiscard]] bool warms_up_after_switch() const noexcept {
    return switch_warmup_ms_ > 0.0 && kept_calls_per_block() < block_calls_;
  }
  [[nodiscard]] int kept_calls_per_block() const noexcept {
    return discard_first_call_ && block_calls_ > 1 ? block_calls_ - 1 : block_calls_;
  }
  [[nodiscard]] int first_look_rounds() const noexcept { return first_look_rounds_; }
  [[nodiscard]] double look_growth() const noexcept { return look_growth_; }
  [[nodiscard]] int max_looks() const noexcept { return max_looks_; }
  [[nodiscard]] int max_rounds() const { return max_rounds_.value_or(look_round(max_looks_)); }
  [[nodiscard]] std::int64_t max_calls() const noexcept { return max_calls_; }
  [[nodiscard]] double first_look_share() const noexcept { return first_look_share_; }
  [[nodiscard]] int confirmation_rounds() const noexcept { return confirmation_rounds_; }
  [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }

  /// The share of alpha each bound of look `look` (1-based) may spend. The first look spends
  /// `first_look_share`, the others split the rest equally; by the union bound the probability
  /// that any look wrongly declares a candidate faster stays below alpha.
  [[nodiscard]] double look_share(int look) const {
    if (look < 1) throw ConfigError("looks are counted from 1");
    if (max_looks_ == 1) return 1.0;
    if (look == 1) return first_look_share_;
    return (1.0 - first_look_share_) / static_cast<double>(max_looks_ - 1);
  }

  /// The round count of look `look` (1-based): first_look_rounds * growth^(look - 1), rounded up.
  [[nodiscard]] int look_round(int look) const {
    double rounds = first_look_rounds_;
    for (int i = 1; i < look; ++i)
      rounds = std::ceil(rounds * look_growth_);
    return static_cast<int>(rounds);
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format(
        "interleaved rounds of {} call(s){}{}, looks at {}x{} rounds (at most {}; the first spends "
        "{:.0f} % of alpha), futility looks {}, {} confirmation round(s) of a switch, max {} "
        "rounds, {}",
        block_calls_, discard_first_call_ ? " (first discarded)" : "",
        warms_up_after_switch() ? fmt::format(" after {:g} ms of warm-up calls", switch_warmup_ms_)
                                : std::string(),
        first_look_rounds_, look_growth_, max_looks_, first_look_share_ * 100.0,
        futility_every_ > 0
            ? fmt::format("every {} rounds from round {}", futility_every_, futility_first_round_)
            : std::string("off"),
        confirmation_rounds_, max_rounds(), describe_final());
  }

 private:
  // Defaults chosen with bench/selection_quality.cpp (docs/measurement.md, "How the measurement
  // decides").
  int block_calls_ = 2;
  bool discard_first_call_ = true;
  double switch_warmup_ms_ = 0.0;
  int first_look_rounds_ = 10;
  double look_growth_ = 1.5;
  int max_looks_ = 9;  // looks at 10, 15, 23, 35, 53, 80, 120, 180, 270 rounds
  std::optional<int> max_rounds_{};
  std::int64_t max_calls_ = 100'000;
  double first_look_share_ = 0.4;
  // With futility alpha 0.10: docs/measurement.md, "Two error budgets".
  int futility_first_round_ = 10;
  int futility_every_ = 2;
  int confirmation_rounds_ = 1;
  // The steady-state final: docs/measurement.md, "Decided on what the server will see".
  int final_rounds_ = 6;
  double final_settle_ms_ = 20.0;
  int final_settle_calls_ = 3;
  int final_timed_calls_ = 5;
  std::uint64_t seed_ = 0x5eed;
};

}  // namespace aitune
