// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The JSON report's fields, each way (core/report/json.hpp writes and reads the report with
/// them): latency statistics, memory, a backend's identity, counts, texts and enum tokens.

#include "aitune/core/error.hpp"
#include "aitune/core/measure/memory_use.hpp"
#include "aitune/core/report/backend_identity.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/text/enum_text.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace aitune::detail {

inline nlohmann::json stats_to_json(const LatencyStats& stats) {
  return {{"n", stats.n},     {"mean", stats.mean},     {"median", stats.median},
          {"p90", stats.p90}, {"p99", stats.p99},       {"min", stats.min},
          {"max", stats.max}, {"stddev", stats.stddev}, {"cv", stats.cv}};
}

/// Bytes, or null where the figure is absent.
inline nlohmann::json optional_bytes(const std::optional<std::int64_t>& bytes) {
  return bytes ? nlohmann::json(*bytes) : nlohmann::json(nullptr);
}

inline nlohmann::json memory_to_json(const MemoryUse& memory) {
  return {{"host_kept_bytes", optional_bytes(memory.host_kept_bytes)},
          {"host_peak_bytes", optional_bytes(memory.host_peak_bytes)},
          {"device_kept_bytes", optional_bytes(memory.device_kept_bytes)},
          {"device_peak_bytes", optional_bytes(memory.device_peak_bytes)}};
}

inline MemoryUse memory_from_json(const nlohmann::json& json) {
  const auto bytes = [&](const char* name) -> std::optional<std::int64_t> {
    const nlohmann::json& value = json.at(name);
    if (value.is_null()) return std::nullopt;
    return value.get<std::int64_t>();
  };
  return MemoryUse{bytes("host_kept_bytes"), bytes("host_peak_bytes"), bytes("device_kept_bytes"),
                   bytes("device_peak_bytes")};
}

/// An identity as a JSON object: a text field as a string, a count as a number.
inline nlohmann::json identity_to_json(const BackendIdentity& identity) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, value] : identity) {
    if (const auto* text = std::get_if<std::string>(&value)) {
      json[name] = *text;
    } else {
      json[name] = std::get<std::int64_t>(value);
    }
  }
  return json;
}

// A report read back may come from a file or a store others can write (a cache entry): every
// count is checked to be one (-1 read as a size_t printed 18446744073709551615 rounds), and
// every text is cleaned and cut before it can reach a terminal (printable_excerpt).

/// The count `json` holds (`what` names it): a whole number from 0; throws Error otherwise.
inline std::size_t count_from_json(const nlohmann::json& json, std::string_view what) {
  if (!json.is_number_unsigned() && !(json.is_number_integer() && json.get<std::int64_t>() >= 0)) {
    throw Error(
        fmt::format("{} is {} in a report, not a count", what, printable_excerpt(json.dump(), 40)));
  }
  return json.get<std::size_t>();
}

/// The text `json` holds, as a terminal may show it: control characters written `\xHH`, cut to
/// `limit` characters.
inline std::string text_from_json(const nlohmann::json& json, std::size_t limit = 4096) {
  return printable_excerpt(json.get<std::string>(), limit);
}

/// The identity `json` holds (identity_to_json's object); throws Error for a field that is
/// neither a text nor a whole number. Its names and texts are cleaned and cut.
inline BackendIdentity identity_from_json(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw Error(fmt::format("an identity is {} in a report, not an object",
                            printable_excerpt(json.dump(), 40)));
  }
  BackendIdentity identity;
  for (const auto& [name, value] : json.items()) {
    if (value.is_string()) {
      identity[printable_excerpt(name, 100)] = text_from_json(value, 1000);
    } else if (value.is_number_integer()) {
      identity[printable_excerpt(name, 100)] = value.get<std::int64_t>();
    } else {
      throw Error(fmt::format("identity field '{}' is {} in a report, not a text or a count",
                              printable_excerpt(name, 100), printable_excerpt(value.dump(), 40)));
    }
  }
  return identity;
}

/// The enumerator of `E` whose token is `text` (or, in a schema-2 report, whose label is);
/// throws Error otherwise.
template <NamedEnum E>
E enum_from_json(const nlohmann::json& text, int schema, std::string_view what) {
  const auto name = text.get<std::string>();
  if (const std::optional<E> value = parse_token<E>(name, /*labels_too=*/schema < 3)) return *value;
  throw Error(fmt::format("unknown {} '{}' in a report", what, printable_excerpt(name, 40)));
}

inline std::optional<LatencyStats> stats_from_json(const nlohmann::json& json) {
  if (json.is_null()) return std::nullopt;
  LatencyStats stats;
  stats.n = count_from_json(json.at("n"), "a latency's sample count");
  stats.mean = json.at("mean").get<double>();
  stats.median = json.at("median").get<double>();
  stats.p90 = json.at("p90").get<double>();
  stats.p99 = json.at("p99").get<double>();
  stats.min = json.at("min").get<double>();
  stats.max = json.at("max").get<double>();
  stats.stddev = json.at("stddev").get<double>();
  stats.cv = json.at("cv").is_null() ? std::nan("") : json.at("cv").get<double>();
  return stats;
}

/// A JSON null read back as the infinity to_json wrote it for.
inline double bound_from_json(const nlohmann::json& json, double if_null) {
  return json.is_null() ? if_null : json.get<double>();
}

}  // namespace aitune::detail
