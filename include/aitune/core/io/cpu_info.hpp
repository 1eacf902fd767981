// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The CPU a decision was measured on, from /proc/cpuinfo: its model name and the instruction
/// sets that decide whether reduced precision pays. A model name is not enough to tell machines
/// apart: `AMD EPYC` names both a Zen 2 with AVX2 only, where int8 and bf16 lose, and a Zen 4 with
/// AVX-512, VNNI and bf16, where they win; a decision made on one must not be reused on the other.

#include <array>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

/// The instruction sets, as /proc/cpuinfo's flags name them, that decide how fast bf16, fp16 and
/// int8 run on a CPU, in the order reports list them.
inline constexpr std::array<std::string_view, 8> precision_cpu_features{
    "avx2",        "avx512f",     "avx512_vnni", "avx_vnni",
    "avx512_bf16", "avx512_fp16", "amx_bf16",    "amx_int8"};

/// Those of precision_cpu_features that `flags` (a /proc/cpuinfo flags line, or its value) lists.
[[nodiscard]] inline std::vector<std::string> cpu_features_of(std::string_view flags) {
  std::vector<std::string> listed;
  std::istringstream words{std::string(flags)};
  for (std::string word; words >> word;)
    listed.push_back(word);
  std::vector<std::string> features;
  for (const std::string_view feature : precision_cpu_features) {
    for (const std::string& word : listed) {
      if (word == feature) {
        features.emplace_back(feature);
        break;
      }
    }
  }
  return features;
}

namespace detail {

/// The value of the first /proc/cpuinfo line that starts with `field`, or empty.
[[nodiscard]] inline std::string cpuinfo_field(std::string_view field) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (!line.starts_with(field)) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

}  // namespace detail

/// The CPU's model name, or "unknown". Read once per process.
[[nodiscard]] inline const std::string& cpu_model_name() {
  static const std::string name = [] {
    std::string read = detail::cpuinfo_field("model name");
    return read.empty() ? std::string("unknown") : read;
  }();
  return name;
}

/// This CPU's features among precision_cpu_features (empty where /proc/cpuinfo has no flags).
/// Read once per process.
[[nodiscard]] inline const std::vector<std::string>& cpu_features() {
  static const std::vector<std::string> features = cpu_features_of(detail::cpuinfo_field("flags"));
  return features;
}

/// The CPU in one line for a benchmark's table: `AMD EPYC (avx2)`.
[[nodiscard]] inline std::string describe_cpu() {
  std::string features;
  for (const std::string& feature : cpu_features())
    features += (features.empty() ? "" : " ") + feature;
  return cpu_model_name() + " (" + (features.empty() ? "no AVX2, AVX-512 or AMX" : features) + ")";
}

}  // namespace aitune
