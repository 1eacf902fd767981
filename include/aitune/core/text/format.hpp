// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// How numbers are written for people: latencies with 3 decimals and their unit, ratios,
/// speedups and confidence levels.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

/// `value` with `decimals` decimals, or `-` when it is not a finite number (0/0 from a backend
/// that measured 0 ms, an interval bound the data cannot give yet): no `nan` or `inf` ever
/// reaches a report.
[[nodiscard]] inline std::string format_fixed(double value, int decimals = 3) {
  return std::isfinite(value) ? fmt::format("{:.{}f}", value, decimals) : std::string("-");
}

/// `5.123 ms`; below 0.1 ms in microseconds (`0.412 us`), so a fast call never prints as
/// `0.000 ms`.
[[nodiscard]] inline std::string format_ms(double latency_ms) {
  if (!std::isfinite(latency_ms)) return "-";
  if (std::abs(latency_ms) < 0.1 && latency_ms != 0.0)
    return format_fixed(latency_ms * 1000.0) + " us";
  return format_fixed(latency_ms) + " ms";
}

/// `2.41x`
[[nodiscard]] inline std::string format_speedup(double speedup) {
  return std::isfinite(speedup) ? format_fixed(speedup, 2) + "x" : std::string("-");
}

/// `0.712 [0.690, 0.731]`; a bound the data cannot give yet (too few rounds for the
/// level) is written `-`.
[[nodiscard]] inline std::string format_ratio(double ratio, double low, double high) {
  return fmt::format("{} [{}, {}]", format_fixed(ratio), format_fixed(low), format_fixed(high));
}

/// A confidence level as a percentage with the digits it needs to be true: `95.0 %`,
/// `99.84 %`, `99.925 %` - never `100.0 %` for a level below 1. Beyond 4 decimals it is rounded
/// down, so it never claims more than it has.
[[nodiscard]] inline std::string format_level(double confidence) {
  if (!std::isfinite(confidence)) return "-";
  const double percent = confidence * 100.0;
  for (int decimals = 1; decimals <= 4; ++decimals) {
    const double scale = std::pow(10.0, decimals);
    const double rounded = std::round(percent * scale) / scale;
    if (std::abs(rounded - percent) < 1e-9 && (rounded < 100.0 || confidence >= 1.0)) {
      return fmt::format("{:.{}f} %", rounded, decimals);
    }
  }
  return fmt::format("{:.4f} %", std::floor(percent * 1e4) / 1e4);
}

namespace detail {
/// `text` cut to `limit` characters, saying how many were left out: a reason is one line of a
/// report, whatever size the text it came from.
[[nodiscard]] inline std::string cut_text(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return fmt::format("{} ... ({} more characters)", text.substr(0, limit), text.size() - limit);
}

/// `text` for a terminal or a report line: each control character (a newline, ESC, BEL, DEL)
/// written as `\xHH`, so a name read from an archive cannot move the cursor, retitle the
/// terminal or start a line of its own; then cut to `limit` characters as cut_text does.
[[nodiscard]] inline std::string printable_excerpt(std::string_view text, std::size_t limit) {
  std::string shown;
  for (const char c : text.substr(0, std::min(text.size(), limit))) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) {
      shown += fmt::format("\\x{:02X}", byte);
    } else {
      shown += c;
    }
  }
  if (text.size() > limit) shown += fmt::format(" ... ({} more characters)", text.size() - limit);
  return shown;
}

/// `title (N):` and then each item on its own line, numbered from 1 and indented.
[[nodiscard]] inline std::string numbered_list(std::string_view title,
                                               const std::vector<std::string>& items) {
  std::string text = fmt::format("{} ({}):\n", title, items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    text += fmt::format("  {}. {}\n", i + 1, items[i]);
  return text;
}
}  // namespace detail

}  // namespace aitune
