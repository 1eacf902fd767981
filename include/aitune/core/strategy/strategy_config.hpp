// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The switches of a tuning strategy.

#include "aitune/core/decision/accuracy_budget.hpp"
#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/measure/profiling_config.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/strategy/progress.hpp"

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>

namespace aitune {

class StrategyConfig {
 public:
  StrategyConfig() = default;

  /// Profile the baseline (TorchEager) in pre_tune and keep it unless a candidate beats it.
  /// Off: the best candidate wins whatever the baseline does, and tuning throws when every
  /// candidate fails.
  StrategyConfig& enable_performance_validation(bool on) {
    performance_validation_ = on;
    return *this;
  }
  [[nodiscard]] bool performance_validation() const noexcept { return performance_validation_; }

  /// Compare each candidate's outputs with the baseline's before measuring it.
  StrategyConfig& enable_correctness_check(bool on) {
    correctness_check_ = on;
    return *this;
  }
  [[nodiscard]] bool correctness_check() const noexcept { return correctness_check_; }

  /// How far a reduced-precision candidate's outputs may move from the baseline's
  /// (core/decision/accuracy_budget.hpp), checked on at least its min_samples samples: a tuning
  /// given fewer throws ConfigError. None (the default): every candidate is held to its
  /// precision's tolerance.
  StrategyConfig& set_accuracy_budget(std::optional<AccuracyBudget> budget) {
    if (budget && !budget->has_measure()) {
      throw ConfigError("an accuracy budget needs a measure: a relative error, a cosine "
                        "similarity or a top-k agreement");
    }
    accuracy_budget_ = std::move(budget);
    return *this;
  }
  [[nodiscard]] const std::optional<AccuracyBudget>& accuracy_budget() const noexcept {
    return accuracy_budget_;
  }

  /// How results are compared: the rule, the minimum gain, the tie margin and alpha (default:
  /// the noise-aware confident median; the aitune rule is kept for comparison).
  StrategyConfig& set_decision(DecisionConfig decision) {
    decision_ = std::move(decision);
    return *this;
  }
  [[nodiscard]] const DecisionConfig& decision() const noexcept { return decision_; }

  StrategyConfig& set_profiling(ProfilingConfig profiling) {
    profiling_ = std::move(profiling);
    return *this;
  }
  [[nodiscard]] const ProfilingConfig& profiling() const noexcept { return profiling_; }

  /// Besides each failure's one-line reason, log the full text of the error behind it (a
  /// TorchScript traceback, LibTorch's C++ backtrace). Off by default: reasons stay one line.
  StrategyConfig& enable_full_errors(bool on) {
    full_errors_ = on;
    return *this;
  }
  [[nodiscard]] bool full_errors() const noexcept { return full_errors_; }

  /// Note the memory each backend takes while it is built and checked (MemoryUse: host resident
  /// set and, where the backend family reports one, device memory) in its report row. On by
  /// default; it changes nothing the process shares unless enable_peak_reset is on.
  StrategyConfig& enable_memory_watch(bool on) {
    memory_watch_ = on;
    return *this;
  }
  [[nodiscard]] bool memory_watch() const noexcept { return memory_watch_; }

  /// Let the memory watch set the process's peak marks back before each build (Linux's peak
  /// resident set through /proc/self/clear_refs, which getrusage's ru_maxrss reads too, and
  /// LibTorch's CUDA peak statistics), so that every backend's peak is known. Off by default:
  /// the marks stay the process's own, and a backend's peak is reported only where its build
  /// set a new high for the process. aitune-tune, a process of its own, turns it on.
  StrategyConfig& enable_peak_reset(bool on) {
    peak_reset_ = on;
    return *this;
  }
  [[nodiscard]] bool peak_reset() const noexcept { return peak_reset_; }

  /// Cancels the tuning when a stop is requested on `token`'s source: within one call of each
  /// backend being measured, or at the next step. tune() then throws CancelledError with the
  /// report so far. (A call that never returns cannot be stopped from inside the process.)
  StrategyConfig& set_stop_token(std::stop_token token) {
    stop_token_ = std::move(token);
    return *this;
  }
  [[nodiscard]] const std::stop_token& stop_token() const noexcept { return stop_token_; }

  /// Called as the tuning goes: each backend prepared (i of N); while the interleaved race
  /// measures, each new leader and a heartbeat about twice a second, between rounds (never
  /// inside a timed call); and the decision (progress.hpp).
  /// Default: none (the sink's lines tell the same story, line by line).
  StrategyConfig& set_progress(ProgressCallback progress) {
    progress_ = std::move(progress);
    return *this;
  }
  [[nodiscard]] const ProgressCallback& progress() const noexcept { return progress_; }

  /// Called once when a tuning starts, before the baseline is built, and never when a tuning
  /// cache's decision is reused instead (nor while this process waits for another's): a caller's
  /// own check of the model and inputs, whose exception ends the tuning with its message.
  /// Default: none.
  StrategyConfig& set_before_tuning(std::function<void()> check) {
    before_tuning_ = std::move(check);
    return *this;
  }
  [[nodiscard]] const std::function<void()>& before_tuning() const noexcept {
    return before_tuning_;
  }

  /// The module's name in the report and its lines (default: "model").
  StrategyConfig& set_module_name(std::string name) {
    module_name_ = std::move(name);
    return *this;
  }
  [[nodiscard]] const std::string& module_name() const noexcept { return module_name_; }

  /// Where the tuning's messages go, the tuning cache's included (default: standard error).
  /// A callable taking a line, or a level and a line (MessageSink); null_sink() drops them.
  StrategyConfig& set_sink(MessageSink sink) {
    sink_ = std::move(sink);
    return *this;
  }
  [[nodiscard]] const MessageSink& sink() const noexcept { return sink_; }

  /// The least level of message the sink is given (default: info, everything; warning: only
  /// what went wrong; off: nothing).
  StrategyConfig& set_log_level(LogLevel threshold) noexcept {
    log_level_ = threshold;
    return *this;
  }
  [[nodiscard]] LogLevel log_level() const noexcept { return log_level_; }

  /// The sink and its threshold, as the strategy and the cache write through them.
  [[nodiscard]] Logger logger() const { return Logger(sink_, log_level_); }

  /// The settings that shape a decision, a line each (MinLatencyStrategy::describe).
  [[nodiscard]] std::string describe() const {
    const auto on_off = [](bool on) { return on ? "on" : "off"; };
    std::string text = fmt::format("performance validation: {}\n", on_off(performance_validation_));
    text += fmt::format("correctness check: {}\n", on_off(correctness_check_));
    if (accuracy_budget_)
      text += fmt::format("accuracy budget: {}\n", accuracy_budget_->describe());
    text += fmt::format("decision: {}\n", decision_.describe());
    text += fmt::format("schedule: {}\n", to_string(profiling_.schedule()));
    text += profiling_.schedule() == Schedule::interleaved
                ? fmt::format("race: {}\n", profiling_.race().describe())
                : fmt::format("stop rule: {}\n", profiling_.stop_rule().describe());
    return text;
  }

 private:
  bool performance_validation_ = true;
  bool correctness_check_ = true;
  bool full_errors_ = false;
  bool memory_watch_ = true;
  bool peak_reset_ = false;
  std::stop_token stop_token_{};
  std::optional<AccuracyBudget> accuracy_budget_{};
  DecisionConfig decision_{};
  ProfilingConfig profiling_{};
  MessageSink sink_ = stderr_sink();
  LogLevel log_level_ = LogLevel::info;
  ProgressCallback progress_{};
  std::function<void()> before_tuning_{};
  std::string module_name_ = "model";
};

}  // namespace aitune
