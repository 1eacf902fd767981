// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Names of tensor dtypes as people write them: parsing (`float32`, `bf16`, `int64`, ...) and
/// printing (`float32` for inputs, `bf16` for backend descriptions).

#include "aitune/core/error.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/torch/libtorch.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// `float32`, `fp16`, `bf16`, `int64`, ... (the names PyTorch users write).
[[nodiscard]] inline c10::ScalarType parse_dtype(std::string_view name) {
  struct Name {
    std::string_view text;
    c10::ScalarType dtype;
  };
  static constexpr Name names[] = {
      {"float32", c10::ScalarType::Float},     {"float", c10::ScalarType::Float},
      {"fp32", c10::ScalarType::Float},        {"float16", c10::ScalarType::Half},
      {"half", c10::ScalarType::Half},         {"fp16", c10::ScalarType::Half},
      {"bfloat16", c10::ScalarType::BFloat16}, {"bf16", c10::ScalarType::BFloat16},
      {"float64", c10::ScalarType::Double},    {"double", c10::ScalarType::Double},
      {"int64", c10::ScalarType::Long},        {"long", c10::ScalarType::Long},
      {"int32", c10::ScalarType::Int},         {"int", c10::ScalarType::Int},
      {"int16", c10::ScalarType::Short},       {"int8", c10::ScalarType::Char},
      {"uint8", c10::ScalarType::Byte},        {"bool", c10::ScalarType::Bool},
  };
  for (const auto& entry : names) {
    if (entry.text == name) return entry.dtype;
  }
  throw ConfigError(fmt::format(
      "unknown dtype '{}': use float32, float16, bfloat16, float64, int64, int32, int16, int8, "
      "uint8 or bool",
      name));
}

/// The PyTorch name of a dtype: `float32`, `bfloat16`, `int64`, ...
[[nodiscard]] inline std::string dtype_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Float: return "float32";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::Double: return "float64";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Short: return "int16";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Bool: return "bool";
    default: return c10::toString(dtype);
  }
}

/// The precision a floating dtype computes in; none for any other dtype.
[[nodiscard]] inline std::optional<Precision> precision_of(c10::ScalarType dtype) noexcept {
  switch (dtype) {
    case c10::ScalarType::Double: return Precision::fp64;
    case c10::ScalarType::Float: return Precision::fp32;
    case c10::ScalarType::Half: return Precision::fp16;
    case c10::ScalarType::BFloat16: return Precision::bf16;
    default: return std::nullopt;
  }
}

/// The dtype that computes in `precision`.
[[nodiscard]] constexpr c10::ScalarType to_scalar_type(Precision precision) noexcept {
  switch (precision) {
    case Precision::fp64: return c10::ScalarType::Double;
    case Precision::fp32: return c10::ScalarType::Float;
    case Precision::fp16: return c10::ScalarType::Half;
    case Precision::bf16: return c10::ScalarType::BFloat16;
  }
  return c10::ScalarType::Float;
}

/// `fp32`, `fp16`, `bf16`, ... for descriptions and keys: a floating dtype's precision name
/// (core/precision.hpp), else LibTorch's name.
[[nodiscard]] inline std::string short_dtype_name(c10::ScalarType dtype) {
  if (const auto precision = precision_of(dtype)) return std::string(to_string(*precision));
  return c10::toString(dtype);
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
