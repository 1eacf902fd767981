// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Precision: the floating-point format a backend computes in, with its one name table. Reports,
/// cache keys, archive records and the command line all spell it through this table
/// (`fp64`, `fp32`, `fp16`, `bf16`); LibTorch's dtypes convert in
/// aitune/torch/model/dtype_names.hpp. Quantisation (int8) is not a precision: it will be a
/// property of its own beside it.

#include "aitune/core/error.hpp"
#include "aitune/core/text/enum_text.hpp"

#include <fmt/format.h>

#include <string_view>

namespace aitune {

/// The floating-point format a backend computes in.
enum class Precision { fp64, fp32, fp16, bf16 };

[[nodiscard]] constexpr EnumText enum_text(Precision precision) noexcept {
  switch (precision) {
    case Precision::fp64: return {"fp64", "fp64"};
    case Precision::fp32: return {"fp32", "fp32"};
    case Precision::fp16: return {"fp16", "fp16"};
    case Precision::bf16: return {"bf16", "bf16"};
  }
  return {};
}

/// Reads a precision as people write it: its name (`fp32`, `bf16`, ...) or an alias PyTorch users
/// write (`float32`, `float`, `f32`; `float16`, `half`, `f16`; `bfloat16`; `float64`, `double`,
/// `f64`). Throws ConfigError for anything else, naming what it accepts.
[[nodiscard]] inline Precision parse_precision(std::string_view text) {
  if (const auto precision = parse_token<Precision>(text)) return *precision;
  struct Alias {
    std::string_view text;
    Precision precision;
  };
  static constexpr Alias aliases[] = {{"float32", Precision::fp32},  {"float", Precision::fp32},
                                      {"f32", Precision::fp32},      {"float16", Precision::fp16},
                                      {"half", Precision::fp16},     {"f16", Precision::fp16},
                                      {"bfloat16", Precision::bf16}, {"float64", Precision::fp64},
                                      {"double", Precision::fp64},   {"f64", Precision::fp64}};
  for (const Alias& alias : aliases) {
    if (alias.text == text) return alias.precision;
  }
  throw ConfigError(
      fmt::format("unknown precision '{}': expected one of fp32, bf16, fp16, fp64", text));
}

/// Whether `precision` keeps fewer mantissa bits than `than` (bf16 < fp16 < fp32 < fp64).
[[nodiscard]] constexpr bool is_lower(Precision precision, Precision than) noexcept {
  const auto bits = [](Precision p) {
    switch (p) {
      case Precision::fp64: return 52;
      case Precision::fp32: return 23;
      case Precision::fp16: return 10;
      case Precision::bf16: return 7;
    }
    return 0;
  };
  return bits(precision) < bits(than);
}

}  // namespace aitune
