// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The progress of one tuning, told to StrategyConfig's progress callback (strategy/progress.hpp):
/// which backend is being prepared, how the measurement stands (told by the race between its
/// rounds), and the decision. Showing progress must not end a tuning: a callback that throws is a
/// warning, and it is not called again.

#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/strategy/progress.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <utility>

namespace aitune::detail {

template <class T>
class ProgressReporter {
 public:
  /// `timer` (the strategy's) tells the time since `start_ms`; `candidates` and `budget_ms` are
  /// the tuning's, for every report.
  ProgressReporter(ProgressCallback callback, Logger log, T& timer, double start_ms,
                   std::size_t candidates, double budget_ms)
      : callback_(std::move(callback)), log_(std::move(log)), timer_(timer), start_ms_(start_ms),
        candidates_(candidates), budget_ms_(budget_ms) {}

  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;
  ProgressReporter(ProgressReporter&&) = delete;
  ProgressReporter& operator=(ProgressReporter&&) = delete;
  ~ProgressReporter() = default;

  /// Backend `index` (1-based; 0: the baseline), named `backend`, is being prepared; `best` is the
  /// best candidate measured so far (empty: none yet).
  void preparing(std::size_t index, std::string backend, std::string best = {}) {
    tell(Progress{.stage = ProgressStage::preparing,
                  .index = index,
                  .backend = std::move(backend),
                  .leader = std::move(best)});
  }

  /// The race's look observer: a new leader is told at once, otherwise a heartbeat about twice a
  /// second. It refers to this reporter, which must outlive the measurement.
  [[nodiscard]] LookObserver look_observer() {
    if (!callback_) return {};
    return [this](const Look& look) {
      rounds_ = look.rounds;
      calls_ = look.calls;
      if (look.leader != leader_ || timer_.now_ms() - last_told_ms_ >= 500.0) {
        leader_ = look.leader;
        leader_ratio_ = look.leader_ratio;
        tell(Progress{
            .stage = ProgressStage::measuring, .leader = leader_, .leader_ratio = leader_ratio_});
      }
    };
  }

  /// The decision is taken: `selected` is handed back.
  void finished(std::string selected) {
    tell(Progress{.stage = ProgressStage::finished,
                  .leader = std::move(selected),
                  .leader_ratio = leader_ratio_});
  }

 private:
  void tell(Progress progress) {
    if (!callback_ || failed_) return;
    progress.total = candidates_;
    progress.elapsed_ms = timer_.now_ms() - start_ms_;
    progress.budget_ms = budget_ms_;
    progress.rounds = rounds_;
    progress.calls = calls_;
    last_told_ms_ = timer_.now_ms();
    try {
      callback_(progress);
    } catch (...) {
      failed_ = true;
      log_.warn(1, fmt::format("the progress callback threw ({}); it is not called again",
                               current_exception_message()));
    }
  }

  ProgressCallback callback_;
  Logger log_;
  T& timer_;
  double start_ms_;
  std::size_t candidates_;
  double budget_ms_;
  double last_told_ms_ = 0.0;
  std::size_t rounds_ = 0;
  std::size_t calls_ = 0;
  std::string leader_{};
  std::optional<double> leader_ratio_{};
  bool failed_ = false;
};

}  // namespace aitune::detail
