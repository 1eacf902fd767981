// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Reading JSON that someone else wrote (the tuning cache, a model archive's records) with a
/// bound on its nesting, checked while parsing. nlohmann's parser does not recurse, but dumping,
/// copying and comparing a value do: a file of 300 KB of `[[[...]]]` would overflow the stack
/// there, and at smaller depths its indented dump grows with the square of the depth.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace aitune {

/// How deep the JSON we read may nest. Ours nests under 10 levels (a report in a cache entry);
/// an exported program's records, under 20; a model's output structure takes three per level of
/// containers in its outputs. 256 levels cost little stack, and indented, at most 64 KiB of
/// spaces per value.
inline constexpr int max_json_depth = 256;

/// `text` parsed, or a discarded value (`is_discarded()`) when it is not JSON or nests deeper
/// than `max_depth`; then `why`, when given, says which.
[[nodiscard]] inline nlohmann::json parse_json_bounded(std::string_view text,
                                                       std::string* why = nullptr,
                                                       int max_depth = max_json_depth) {
  struct TooDeep {};
  const nlohmann::json::parser_callback_t bound =
      [max_depth](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > max_depth) throw TooDeep{};
        return true;
      };
  try {
    nlohmann::json parsed = nlohmann::json::parse(text, bound, /*allow_exceptions=*/false);
    if (parsed.is_discarded() && why != nullptr) {
      *why = text.empty() ? "it is empty" : "it is not valid JSON (truncated?)";
    }
    return parsed;
  } catch (const TooDeep&) {
    if (why != nullptr) *why = "it nests deeper than " + std::to_string(max_depth) + " levels";
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

}  // namespace aitune
