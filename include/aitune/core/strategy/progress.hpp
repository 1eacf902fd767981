// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Progress of a long tuning, for a person watching it or a program showing it: which backend is
/// being prepared (i of N), or how the measurement stands (rounds, the leader so far), and the
/// time spent against the budget. StrategyConfig::set_progress takes the callback; `describe`
/// gives the one line aitune-tune shows.

#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace aitune {

enum class ProgressStage {
  preparing,  ///< building a backend and checking its outputs (index 0: the baseline)
  measuring,  ///< timing the prepared backends
  finished,   ///< the decision is taken (`leader` is the selected backend)
};

struct Progress {
  ProgressStage stage = ProgressStage::preparing;
  std::size_t index = 0;  ///< preparing: the candidate's position, 1-based (0: the baseline)
  std::size_t total = 0;  ///< the number of candidates
  std::string backend{};  ///< preparing: the backend being prepared
  double elapsed_ms = 0.0;
  double budget_ms = 0.0;                ///< the tuning's time budget (infinity: none)
  std::size_t rounds = 0;                ///< measuring: interleaved rounds so far
  std::size_t calls = 0;                 ///< measuring: timed calls so far, of every backend
  std::string leader{};                  ///< the best so far (empty: not known yet)
  std::optional<double> leader_ratio{};  ///< its latency over the baseline's, when known
};

/// Called from the tuning's thread; keep it quick (it runs between timed calls).
using ProgressCallback = std::function<void(const Progress&)>;

/// One line: `[2/5] preparing ChannelsLast()  3.1 s of 60 s`, `measuring: 23 rounds, 312 calls,
/// best so far ChannelsLast() (0.41x the baseline)  14.0 s of 60 s`, `done: selected X  20.3 s`.
[[nodiscard]] inline std::string describe(const Progress& progress) {
  const std::string clock = std::isfinite(progress.budget_ms)
                                ? fmt::format("{:.1f} s of {:.0f} s", progress.elapsed_ms / 1000.0,
                                              progress.budget_ms / 1000.0)
                                : fmt::format("{:.1f} s", progress.elapsed_ms / 1000.0);
  const std::string best =
      progress.leader.empty()
          ? std::string()
          : fmt::format(", best so far {}{}", progress.leader,
                        progress.leader_ratio ? fmt::format(" ({}x the baseline)",
                                                            format_fixed(*progress.leader_ratio))
                                              : std::string());
  switch (progress.stage) {
    case ProgressStage::preparing:
      return progress.index == 0
                 ? fmt::format("[baseline] preparing {}  {}", progress.backend, clock)
                 : fmt::format("[{}/{}] preparing {}{}  {}", progress.index, progress.total,
                               progress.backend, best, clock);
    case ProgressStage::measuring:
      return fmt::format("measuring: {} rounds, {} calls{}  {}", progress.rounds, progress.calls,
                         best, clock);
    case ProgressStage::finished:
      return fmt::format("done: selected {}  {}", progress.leader, clock);
  }
  return clock;
}

}  // namespace aitune
