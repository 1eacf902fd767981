// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The syntax of the values people type on a command line: input shapes with an optional dtype
/// and value range (`1x64:int64[0,30522)`), tolerances (`bf16:0.05,1e-3`), precision names and
/// comma-separated lists. Torch-free on purpose: these parsers read outside input, and a fuzzer
/// exercises them without LibTorch (tools/fuzz.sh). The torch layer turns the names they return
/// into dtypes (torch/model/input_spec.hpp, torch/tune/candidate_precision.hpp).

#include "aitune/core/error.hpp"
#include "aitune/core/precision.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

/// `a,b,c` as its parts; a trailing comma adds none, an empty text gives none.
[[nodiscard]] inline std::vector<std::string_view> comma_separated(std::string_view text) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const auto comma = text.find(',');
    parts.push_back(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return parts;
}

/// The half-open range `[low, high)` random input values are drawn from.
struct ValueRange {
  double low = 0.0;
  double high = 0.0;
};

/// An input as written: `DxDx...xD[:DTYPE][[LOW,HIGH)]`, the dtype still a name.
struct InputText {
  std::vector<std::int64_t> shape;
  std::string dtype;  ///< empty: the default (float32)
  std::optional<ValueRange> range;
};

/// The largest dimension an input may have (2^31), and the most elements (2^31, 8 GiB of
/// float32): a typo such as `1x30000000000` or `1x65536x65536` is refused before anything is
/// allocated.
inline constexpr std::int64_t max_input_dimension = std::int64_t{1} << 31;
inline constexpr std::int64_t max_input_elements = std::int64_t{1} << 31;

namespace detail {
template <typename Number>
[[nodiscard]] bool parse_whole(std::string_view text, Number& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}
}  // namespace detail

/// Parses `DxDx...xD[:DTYPE][[LOW,HIGH)]`, e.g. `1x3x224x224`, `1x64:int64` or
/// `1x64:int64[0,30522)`. Every dimension is a positive integer up to max_input_dimension; LOW
/// and HIGH are finite numbers with LOW < HIGH. Throws ConfigError naming the mistake.
[[nodiscard]] inline InputText parse_input_text(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return ConfigError(fmt::format("bad input '{}': {} (expected e.g. 1x3x224x224, 1x64:int64 "
                                   "or 1x64:int64[0,30522))",
                                   text, why));
  };
  InputText input;
  std::string_view rest = text;
  if (const auto open = rest.find('['); open != std::string_view::npos) {
    const std::string_view range = rest.substr(open + 1);
    rest = rest.substr(0, open);
    if (range.empty() || range.back() != ')') throw bad("a range is written [LOW,HIGH)");
    const std::string_view bounds = range.substr(0, range.size() - 1);
    const auto comma = bounds.find(',');
    ValueRange value_range;
    if (comma == std::string_view::npos ||
        !detail::parse_whole(bounds.substr(0, comma), value_range.low) ||
        !detail::parse_whole(bounds.substr(comma + 1), value_range.high) ||
        !std::isfinite(value_range.low) || !std::isfinite(value_range.high)) {
      throw bad("a range is written [LOW,HIGH) with two finite numbers");
    }
    if (!(value_range.low < value_range.high)) throw bad("the range [LOW,HIGH) is empty");
    input.range = value_range;
  }
  const auto colon = rest.find(':');
  const std::string_view dims = rest.substr(0, colon);
  if (colon != std::string_view::npos) {
    input.dtype = rest.substr(colon + 1);
    if (input.dtype.empty()) throw bad("no dtype after ':'");
    // A dtype is one name: letters and digits (found by fuzzing: '7:b7:bf16' passed as the
    // dtype 'b7:bf16').
    for (const char c : input.dtype) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
        throw bad(fmt::format("'{}' is not a dtype name", input.dtype));
      }
    }
  }
  if (dims.empty()) throw bad("no dimensions");
  std::int64_t elements = 1;
  std::size_t start = 0;
  while (start <= dims.size()) {
    const auto end = std::min(dims.find('x', start), dims.size());
    const std::string_view part = dims.substr(start, end - start);
    std::int64_t value = 0;
    if (!detail::parse_whole(part, value)) throw bad(fmt::format("'{}' is not a dimension", part));
    if (value < 1) throw bad(fmt::format("dimension {} is not positive", value));
    if (value > max_input_dimension) throw bad(fmt::format("dimension {} is too large", value));
    elements *= value;  // both at most 2^31: no overflow before the check below
    if (elements > max_input_elements) {
      throw bad(fmt::format("more than {} elements", max_input_elements));
    }
    input.shape.push_back(value);
    start = end + 1;
  }
  return input;
}

/// A tolerance as written: `[PRECISION:]RTOL[,SCALE_ATOL]`.
struct ToleranceText {
  std::optional<Precision> precision{};  ///< none: every precision
  double rtol = 0.0;
  double scale_atol = 0.0;
};

/// Parses `[PRECISION:]RTOL[,SCALE_ATOL]`: `1e-3` (both terms, every precision), `bf16:0.05`,
/// `fp32:1e-3,1e-5`. Numbers are in [0, 1e6]; SCALE_ATOL defaults to RTOL.
[[nodiscard]] inline ToleranceText parse_tolerance_text(std::string_view text) {
  const auto number = [&](std::string_view part) {
    double value = 0.0;
    if (!detail::parse_whole(part, value) || !(value >= 0.0) || value > 1e6) {
      throw ConfigError(fmt::format("bad tolerance '{}': expected [PRECISION:]RTOL[,SCALE_ATOL] "
                                    "with non-negative numbers, e.g. 'bf16:0.05' or '1e-3,1e-4'",
                                    text));
    }
    return value;
  };
  ToleranceText result;
  std::string_view rest = text;
  if (const auto colon = rest.find(':'); colon != std::string_view::npos) {
    result.precision = parse_precision(rest.substr(0, colon));
    rest = rest.substr(colon + 1);
  }
  const auto comma = rest.find(',');
  result.rtol = number(rest.substr(0, comma));
  result.scale_atol =
      comma == std::string_view::npos ? result.rtol : number(rest.substr(comma + 1));
  return result;
}

}  // namespace aitune
