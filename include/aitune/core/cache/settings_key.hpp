// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The strategy's settings as values (nlohmann's `to_json` for each config type), and the part
/// of a tuning cache's key they make: every setting that can change the decision, by value.
/// Text meant for people (`describe()`) is never part of a key: rewording a log line must not
/// invalidate a cache, and a setting a sentence leaves out must not hit a stale entry.
///
/// Left out, because they cannot change which backend is chosen: where messages and progress
/// go, the stop token, full error text and the memory watch.

#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/measure/profiling_config.hpp"
#include "aitune/core/measure/race_config.hpp"
#include "aitune/core/strategy/strategy_config.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string_view>

namespace aitune {

namespace detail {

/// A budget in ms as JSON: a number, or "unlimited" (JSON has no infinity).
[[nodiscard]] inline nlohmann::json budget_value(double budget_ms) {
  return std::isinf(budget_ms) ? nlohmann::json("unlimited") : nlohmann::json(budget_ms);
}

}  // namespace detail

inline void to_json(nlohmann::json& json, const DecisionConfig& decision) {
  json = {{"rule", to_string(decision.rule())},
          {"min_gain", decision.min_gain()},
          {"tie_margin", decision.tie_margin()},
          {"alpha", decision.alpha()},
          {"futility_alpha", decision.futility_alpha()}};
}

inline void to_json(nlohmann::json& json, const WarmupConfig& warmup) {
  json = {{"min_calls", warmup.min_calls()},
          {"max_calls", warmup.max_calls()},
          {"settle_ratio", warmup.settle_ratio()}};
}

inline void to_json(nlohmann::json& json, const RaceConfig& race) {
  json = {{"block_calls", race.block_calls()},
          {"discard_first_call", race.discard_first_call()},
          {"switch_warmup_ms", race.switch_warmup_ms()},
          {"first_look_rounds", race.first_look_rounds()},
          {"look_growth", race.look_growth()},
          {"max_looks", race.max_looks()},
          {"max_rounds", race.max_rounds()},
          {"max_calls", race.max_calls()},
          {"first_look_share", race.first_look_share()},
          {"futility_first_round", race.futility_first_round()},
          {"futility_every", race.futility_every()},
          {"confirmation_rounds", race.confirmation_rounds()},
          {"final_rounds", race.final_rounds()},
          {"final_settle_ms", race.final_settle_ms()},
          {"final_settle_calls", race.final_settle_calls()},
          {"final_timed_calls", race.final_timed_calls()},
          {"seed", race.seed()}};
}

inline void to_json(nlohmann::json& json, const ScreeningConfig& screening) {
  json = {{"rounds", screening.rounds()},
          {"margin", screening.margin()},
          {"min_checked_samples", screening.min_checked_samples()}};
}

/// The measurement's settings. Only those of the chosen schedule: the race and its warm-up for
/// the interleaved one, the stop rule for the sequential one. A stop rule is known by its
/// describe() text, the only view of a user's rule there is: a rule must name every parameter
/// there.
inline void to_json(nlohmann::json& json, const ProfilingConfig& profiling) {
  json = {{"schedule", to_string(profiling.schedule())},
          {"time_budget_ms", detail::budget_value(profiling.time_budget_ms())},
          {"candidate_time_budget_ms", detail::budget_value(profiling.candidate_time_budget_ms())}};
  // Only when set: a tuning at one caller keeps the keys it had before callers existed.
  if (profiling.callers() > 1) json["callers"] = profiling.callers();
  // Likewise the weights: another mix of the same shapes is another decision.
  if (!profiling.sample_weights().empty()) json["sample_weights"] = profiling.sample_weights();
  if (profiling.schedule() == Schedule::interleaved) {
    json["race"] = profiling.race();
    json["warmup"] = profiling.warmup();
    // Only when changed: the default screening leaves a tuning the key it had before it existed
    // (it applies only where 20 or more samples are checked; the default checks one).
    if (profiling.screening() != ScreeningConfig{}) json["screening"] = profiling.screening();
  } else {
    json["stop_rule"] = profiling.stop_rule().describe();
  }
}

inline void to_json(nlohmann::json& json, const AccuracyBudget& budget) {
  json = {{"min_samples", budget.min_samples()}};
  if (budget.max_relative_error()) json["max_relative_error"] = *budget.max_relative_error();
  if (budget.min_cosine()) json["min_cosine"] = *budget.min_cosine();
  if (const auto& top_k = budget.top_k()) {
    json["top_k"] = {{"output", top_k->output}, {"k", top_k->k}, {"min_share", top_k->min_share}};
  }
}

/// The settings that can change a decision (see the file's comment for those left out).
inline void to_json(nlohmann::json& json, const StrategyConfig& config) {
  json = {{"performance_validation", config.performance_validation()},
          {"correctness_check", config.correctness_check()},
          {"decision", config.decision()},
          {"measurement", config.profiling()}};
  // Only when set: a tuning without one keeps the key it had before budgets existed.
  if (config.accuracy_budget()) json["accuracy_budget"] = *config.accuracy_budget();
}

/// The settings part of a tuning cache's key: equal for equal settings, different when any
/// setting that can change the decision differs.
[[nodiscard]] inline nlohmann::json settings_key(const StrategyConfig& config) {
  return config;
}

}  // namespace aitune
