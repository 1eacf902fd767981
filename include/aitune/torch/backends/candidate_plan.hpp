// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// CandidatePlan: what a family reads to list its default sessions (the runtime sessions'
/// thread counts, the callers at once, the cores, whether quantised models may join), the thread
/// counts' policy, and the rules every family's candidate names share ("onnx@2": a session's
/// thread count after an @; a quantised model only under an accuracy budget).

#include "aitune/core/error.hpp"
#include "aitune/core/text/format.hpp"
#include "aitune/torch/libtorch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The intra-op thread counts worth sweeping a runtime session (ONNX Runtime, OpenVINO) over on
/// `cores` hardware threads: 1, about the square root of `cores`, and `cores`, without repeats
/// (1 and 2 on 2 cores; 1, 2, 4 on 4; 1, 4, 16 on 16). At batch size 1 a small model often runs
/// fastest on fewer threads than the runtime's own default, all cores, and a single thread is
/// the one count another process on the machine cannot stall (the others wait for a descheduled
/// thread at every parallel region). Three counts at most, so that a machine with many cores
/// does not multiply the tuning's candidates. Empty where the count is unknown (0).
[[nodiscard]] inline std::vector<int> runtime_thread_counts(unsigned cores) {
  if (cores == 0) return {};
  const auto root = static_cast<unsigned>(std::lround(std::sqrt(static_cast<double>(cores))));
  std::vector<int> counts;
  for (const unsigned count : {1U, root, cores}) {
    if (std::find(counts.begin(), counts.end(), static_cast<int>(count)) == counts.end()) {
      counts.push_back(static_cast<int>(count));
    }
  }
  return counts;
}

/// The runtime sessions' thread counts default_candidates tries: one thread, then the runtime's
/// own default (0), on a machine with more than one hardware thread (`cores`; 0: unknown, the
/// runtime's default alone). One thread often wins at batch size 1 on small models, leaves the
/// other cores to the server, and cannot be stalled by a descheduled sibling thread; listed
/// first, it takes a near tie. Their near ties cost little tuning time since the baseline
/// leaves such a race once every candidate in it beats the baseline (docs/measurement.md).
[[nodiscard]] inline std::vector<int>
default_runtime_threads(unsigned cores = std::thread::hardware_concurrency()) {
  if (cores <= 1) return {0};
  return {1, 0};
}

/// The runtime sessions' thread counts worth trying when `callers` call at once on `cores`
/// hardware threads: default_runtime_threads, and each caller's share of the cores (cores /
/// callers, at least 1) before the runtime's default where it is not there already.
[[nodiscard]] inline std::vector<int>
runtime_threads_for_callers(int callers, unsigned cores = std::thread::hardware_concurrency()) {
  std::vector<int> counts = default_runtime_threads(cores);
  if (callers <= 1 || cores == 0) return counts;
  const int share = std::max(1, static_cast<int>(cores) / callers);
  if (std::find(counts.begin(), counts.end(), share) == counts.end()) {
    counts.insert(std::find(counts.begin(), counts.end(), 0), share);
  }
  return counts;
}

/// What a family's default sessions are made for: each family's header reads it
/// (`default_sessions`), and the catalogue hands it to every family (torch/tune/catalogue.hpp).
struct CandidatePlan {
  /// Each runtime session at every one of these intra-op thread counts (0: the runtime's
  /// default; runtime_thread_counts gives a wider sweep).
  std::vector<int> runtime_threads = default_runtime_threads();
  /// The callers that call at once (ProfilingConfig::set_callers): OpenVINO adds a stream each.
  int callers = 1;
  /// The hardware threads a session may use (copies, streams).
  unsigned cores = std::thread::hardware_concurrency();
  /// A tuning under an accuracy budget (StrategyConfig::set_accuracy_budget): the archive's
  /// quantised models join, and may be named; without it none is tried.
  bool quantized = false;

  /// The plan for a tuning at `callers` at once: runtime_threads_for_callers's counts.
  [[nodiscard]] static CandidatePlan for_callers(int callers, bool quantized = false) {
    return {runtime_threads_for_callers(callers), callers, std::thread::hardware_concurrency(),
            quantized};
  }

  /// Throws ConfigError for thread counts a session cannot take.
  void check() const {
    if (runtime_threads.empty() ||
        std::any_of(runtime_threads.begin(), runtime_threads.end(), [](int n) { return n < 0; })) {
      throw ConfigError("default_candidates: the runtime sessions' thread counts are 0 (the "
                        "runtime's default) or more, at least one");
    }
  }
};

/// The most threads a runtime session may be given: this machine's hardware threads. More only
/// oversubscribe the cores, and a session makes its threads when it is created, which no stop
/// can interrupt (ONNX Runtime took over a minute to make 4096 on 2 cores). 4096 where the count
/// is unknown.
[[nodiscard]] inline int max_session_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 4096 : static_cast<int>(std::min(cores, 4096U));
}

/// A runtime session's thread count as text: a whole number from `least` to
/// max_session_threads(), else nothing.
[[nodiscard]] inline std::optional<int> session_thread_count(std::string_view text, int least) {
  int threads = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), threads);
  if (error != std::errc() || end != text.data() + text.size() || threads < least ||
      threads > max_session_threads()) {
    return std::nullopt;
  }
  return threads;
}

/// The session thread count after the @ of `name` ("onnx@2"), or 0 (the runtime's default)
/// without one. Throws ConfigError unless it is a whole number from 1 to the hardware threads.
[[nodiscard]] inline int session_threads_of(const std::string& name) {
  const auto at = name.find('@');
  if (at == std::string::npos) return 0;
  const std::optional<int> threads = session_thread_count(std::string_view(name).substr(at + 1), 1);
  if (!threads) {
    throw ConfigError(fmt::format("'{}': after the @ comes the session's thread count, from 1 "
                                  "to {} (this machine's hardware threads)",
                                  aitune::detail::printable_excerpt(name, 100),
                                  max_session_threads()));
  }
  return *threads;
}

/// Throws ConfigError for the reduced-precision model `name` (of `quantization`) named in a
/// tuning without an accuracy budget (`quantized` false).
inline void refuse_unbudgeted(const std::string& name, const std::string& quantization,
                              bool quantized) {
  if (quantized) return;
  throw ConfigError(fmt::format("'{}': an {} model moves the outputs past any tolerance; say how "
                                "far they may move with an accuracy budget "
                                "(StrategyConfig::set_accuracy_budget; aitune-tune --accuracy)",
                                aitune::detail::printable_excerpt(name, 100), quantization));
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
