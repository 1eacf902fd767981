// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Input specifications as the command line writes them (`1x3x224x224`, `1x64:int64`) and
/// random batch-size-1 inputs made from them.

#include "aitune/core/error.hpp"
#include "aitune/torch/config.hpp"
#include "aitune/torch/dtypes.hpp"
#include "aitune/torch/model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aitune::lt {

struct InputSpec {
  std::vector<std::int64_t> shape;
  c10::ScalarType dtype = c10::ScalarType::Float;

  /// `1x3x224x224` for float32, `1x64:int64` otherwise (the form parse_input_spec reads).
  [[nodiscard]] std::string describe() const {
    return dtype == c10::ScalarType::Float
               ? fmt::format("{}", fmt::join(shape, "x"))
               : fmt::format("{}:{}", fmt::join(shape, "x"), dtype_name(dtype));
  }
};

/// Parses `DxDx...xD[:dtype]`, e.g. `1x3x224x224` or `1x64:int64`. Every dimension is a
/// positive integer; the default dtype is float32.
[[nodiscard]] inline InputSpec parse_input_spec(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view dims = text.substr(0, colon);
  InputSpec spec;
  if (colon != std::string_view::npos) spec.dtype = parse_dtype(text.substr(colon + 1));
  const auto bad = [&](std::string_view why) {
    return ConfigError(fmt::format("bad input shape '{}': {} (expected e.g. 1x3x224x224 or "
                                   "1x64:int64)",
                                   text, why));
  };
  if (dims.empty()) throw bad("no dimensions");
  std::size_t start = 0;
  while (start <= dims.size()) {
    const auto end = std::min(dims.find('x', start), dims.size());
    const std::string_view part = dims.substr(start, end - start);
    std::int64_t value = 0;
    const auto [ptr, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || ptr != part.data() + part.size()) {
      throw bad(fmt::format("'{}' is not a dimension", part));
    }
    if (value < 1) throw bad(fmt::format("dimension {} is not positive", value));
    if (value > (std::int64_t{1} << 31)) throw bad(fmt::format("dimension {} is too large", value));
    spec.shape.push_back(value);
    start = end + 1;
  }
  return spec;
}

/// A random input for `spec` on `device`: standard normal for floating dtypes, integers drawn
/// from [0, 100) (valid token ids and indices for most models), random booleans.
[[nodiscard]] inline at::Tensor make_random_input(const InputSpec& spec, c10::Device device,
                                                  at::Generator generator = {}) {
  const auto options = at::TensorOptions().device(c10::kCPU);
  at::Tensor tensor;
  if (at::isFloatingType(spec.dtype)) {
    tensor = at::randn(spec.shape, generator, options.dtype(c10::ScalarType::Float));
  } else if (spec.dtype == c10::ScalarType::Bool) {
    tensor = at::randint(0, 2, spec.shape, generator, options.dtype(c10::ScalarType::Long));
  } else {
    tensor = at::randint(0, 100, spec.shape, generator, options.dtype(c10::ScalarType::Long));
  }
  return tensor.to(device, spec.dtype);
}

/// One sample with a random input per spec, reproducible from `seed`.
[[nodiscard]] inline Sample make_random_sample(const std::vector<InputSpec>& specs,
                                               c10::Device device, std::uint64_t seed = 0) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  Sample sample;
  for (const auto& spec : specs)
    sample.emplace_back(make_random_input(spec, device, generator));
  return sample;
}

}  // namespace aitune::lt
