// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Small helpers shared by the benchmark programs: JSON output written atomically, the machine, and
// a median with its interval (the tuner's own).

#include <aitune/aitune.hpp>
#include <aitune/core/io/atomic_file.hpp>
#include <aitune/core/io/cpu_info.hpp>
#include <aitune/core/stats/median_interval.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace aitune::bench {

/// Writes `json` to `path` without leaving half a file (aitune::write_json_file).
inline void write_json(const std::filesystem::path& path, const nlohmann::json& json) {
  write_json_file(path, json);
}

/// The machine, as far as a program can tell, for every benchmark's JSON: the CPU's model, the
/// instruction sets that decide reduced precision, and its hardware threads.
inline nlohmann::json machine_json() {
  return {{"cpu", cpu_model_name()},
          {"cpu_features", cpu_features()},
          {"hardware_threads", std::thread::hardware_concurrency()}};
}

struct MedianWithInterval {
  double median = 0.0;
  double low = 0.0;   ///< -inf where there are too few values (under 6) for the level
  double high = 0.0;  ///< +inf likewise
};

/// The median of `values` and its 95 % interval, as the tuner computes them (the sign test:
/// aitune::median_interval), which tools/aitune_judge.py computes alike for the Python harness.
inline MedianWithInterval median_with_interval(const std::vector<double>& values) {
  const MedianInterval interval = median_interval(values, 0.025);
  return {interval.median, interval.low, interval.high};
}

}  // namespace aitune::bench
