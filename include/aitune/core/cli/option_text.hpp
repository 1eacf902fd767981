// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The syntax of the values people type on a command line: input shapes with an optional dtype
/// and value range (`1x64:int64[0,30522)`), tolerances (`bf16:0.05,1e-3`), accuracy budgets
/// (`cosine=0.999,top1=98%`), precision names and comma-separated lists. Torch-free on purpose:
/// these parsers read outside input, and a fuzzer exercises them without LibTorch (tools/fuzz.sh).
/// The torch layer turns the names they return into dtypes (torch/model/input_spec.hpp,
/// torch/tune/candidate_precision.hpp).

#include "aitune/core/decision/accuracy_budget.hpp"
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

/// Parses an accuracy budget: comma-separated KEY=VALUE parts, each key once, at least one
/// measure among them:
/// - `relative=R`: the most an output's worst error may be, as a share of its largest value;
/// - `cosine=C`: the least cosine similarity of an output with the baseline's;
/// - `topK=P` (`top1=98%`, `top5=0.9`): the share of class-score rows whose baseline class is
///   among the candidate's top K, as a percentage or a fraction;
/// - `scores=NAME`: the output holding the class scores (`logits`, `0`, `output[0]`; default: the
///   only one with at least two classes along its last dimension);
/// - `samples=N`: the fewest samples to check the budget on (default 100).
/// Throws ConfigError naming the mistake.
[[nodiscard]] inline AccuracyBudget parse_accuracy_text(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return ConfigError(fmt::format("bad accuracy budget '{}': {} (expected e.g. "
                                   "cosine=0.999,top1=98%,scores=logits)",
                                   text, why));
  };
  const auto number = [&](std::string_view key, std::string_view value) {
    double parsed = 0.0;
    if (!detail::parse_whole(value, parsed)) {
      throw bad(fmt::format("{} takes a number, got '{}'", key, value));
    }
    return parsed;
  };
  AccuracyBudget budget;
  std::optional<TopKAgreement> top_k;
  std::optional<std::string> scores;
  std::vector<std::string_view> seen;
  for (const std::string_view part : comma_separated(text)) {
    const auto equals = part.find('=');
    if (equals == std::string_view::npos) throw bad(fmt::format("'{}' is not KEY=VALUE", part));
    const std::string_view key = part.substr(0, equals);
    const std::string_view value = part.substr(equals + 1);
    const bool is_top_k = key.starts_with("top");
    for (const std::string_view known : seen) {
      if (known == key || (is_top_k && known.starts_with("top"))) {
        throw bad(fmt::format("{} is given twice", key));
      }
    }
    seen.push_back(key);
    try {
      if (key == "relative") {
        budget.set_max_relative_error(number(key, value));
      } else if (key == "cosine") {
        budget.set_min_cosine(number(key, value));
      } else if (is_top_k) {
        int k = 0;
        if (!detail::parse_whole(key.substr(3), k) || k < 1) {
          throw bad(fmt::format("'{}' is not topK with K a whole number from 1", key));
        }
        const bool percent = value.ends_with('%');
        const double share = number(key, percent ? value.substr(0, value.size() - 1) : value);
        top_k = TopKAgreement{{}, k, percent ? share / 100.0 : share};
      } else if (key == "scores") {
        if (value.empty()) throw bad("scores names an output");
        scores = std::string(value);
      } else if (key == "samples") {
        std::size_t count = 0;
        if (!detail::parse_whole(value, count)) {
          throw bad(fmt::format("samples takes a whole number, got '{}'", value));
        }
        budget.set_min_samples(count);
      } else {
        throw bad(fmt::format("unknown key '{}' (relative, cosine, topK, scores, samples)", key));
      }
    } catch (const ConfigError& error) {
      if (std::string_view(error.what()).starts_with("bad accuracy budget")) throw;
      throw bad(error.what());
    }
  }
  if (scores && !top_k) throw bad("scores names the output of a topK agreement: add one");
  if (top_k) {
    if (scores) top_k->output = *scores;
    try {
      budget.set_top_k(*top_k);
    } catch (const ConfigError& error) {
      throw bad(error.what());
    }
  }
  if (!budget.has_measure()) throw bad("it needs a measure: relative, cosine or topK");
  return budget;
}

}  // namespace aitune
