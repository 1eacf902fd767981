// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Input specifications as the command line writes them (`1x3x224x224`, `1x64:int64[0,30522)`)
/// and random batch-size-1 inputs made from them.

#include "aitune/core/cli/option_text.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/model.hpp"

#include <ATen/Dispatch.h>
#include <torch/cuda.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// Parses `cpu`, `cuda` or `cuda:N` and checks that the device exists in this build.
[[nodiscard]] inline c10::Device parse_device(std::string_view text) {
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(std::string(text));
  } catch (const c10::Error&) {
    throw ConfigError(fmt::format("unknown device '{}': expected cpu, cuda or cuda:N", text));
  }
  if (device.is_cpu()) return device;
  if (!device.is_cuda()) {
    throw ConfigError(fmt::format("device '{}' is not supported: expected cpu or cuda", text));
  }
  if (!torch::cuda::is_available()) {
    throw ConfigError(fmt::format("device '{}' was asked for, but {}", text,
                                  AITUNE_WITH_CUDA ? "no CUDA device is visible"
                                                   : "this LibTorch was built without CUDA"));
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (device.has_index() && device.index() >= count) {
    throw ConfigError(
        fmt::format("device '{}' does not exist: {} CUDA device(s) are visible", text, count));
  }
  if (!device.has_index()) device = c10::Device(c10::kCUDA, 0);
  return device;
}

struct InputSpec {
  std::vector<std::int64_t> shape;
  c10::ScalarType dtype = c10::ScalarType::Float;
  /// Where random values are drawn from, uniformly; none: N(0,1) for floats, [0, 100) for
  /// integers, {0, 1} for booleans.
  std::optional<ValueRange> range{};

  /// `1x3x224x224` for float32, `1x64:int64` otherwise, `[LOW,HIGH)` after a range (the form
  /// parse_input_spec reads).
  [[nodiscard]] std::string describe() const {
    std::string text = dtype == c10::ScalarType::Float
                           ? fmt::format("{}", fmt::join(shape, "x"))
                           : fmt::format("{}:{}", fmt::join(shape, "x"), dtype_name(dtype));
    if (range) text += fmt::format("[{},{})", range->low, range->high);
    return text;
  }
};

/// Parses `DxDx...xD[:dtype][[LOW,HIGH)]` (core/cli/option_text.hpp), e.g. `1x3x224x224`,
/// `1x64:int64` or `1x64:int64[0,30522)` for token ids of a 30522-word vocabulary. The default
/// dtype is float32. An integer range must have integer bounds the dtype can hold; a boolean
/// input takes no range.
[[nodiscard]] inline InputSpec parse_input_spec(std::string_view text) {
  const InputText parsed = parse_input_text(text);
  InputSpec spec;
  spec.shape = parsed.shape;
  if (!parsed.dtype.empty()) spec.dtype = parse_dtype(parsed.dtype);
  spec.range = parsed.range;
  if (!spec.range) return spec;
  const auto bad = [&](std::string_view why) {
    return ConfigError(fmt::format("bad input '{}': {}", text, why));
  };
  if (at::isFloatingType(spec.dtype)) {
    // Values drawn as doubles, then rounded to the dtype (make_random_input draws again one that
    // rounds up to HIGH): the range and its width must be finite in it.
    double largest = 0.0;
    AT_DISPATCH_FLOATING_TYPES_AND2(
        c10::ScalarType::Half, c10::ScalarType::BFloat16, spec.dtype, "input_range",
        [&] { largest = static_cast<double>(std::numeric_limits<scalar_t>::max()); });
    const auto [low, high] = *spec.range;
    if (low < -largest || high > largest || !std::isfinite(high - low)) {
      throw bad(fmt::format("[{},{}) does not fit in {} (largest {})", low, high,
                            dtype_name(spec.dtype), largest));
    }
    return spec;
  }
  if (spec.dtype == c10::ScalarType::Bool) throw bad("a bool input takes no range");
  const auto [low, high] = *spec.range;
  if (low != std::floor(low) || high != std::floor(high)) {
    throw bad(fmt::format("an {} range has integer bounds", dtype_name(spec.dtype)));
  }
  // The values the dtype holds, within +-2^53 where doubles are exact (no vocabulary or index
  // range reaches further, and the bounds then convert to int64 safely).
  constexpr double exact = 9007199254740992.0;  // 2^53
  double smallest = -exact;
  double past_largest = exact;
  AT_DISPATCH_INTEGRAL_TYPES(spec.dtype, "input_range", [&] {
    smallest = std::max(smallest, static_cast<double>(std::numeric_limits<scalar_t>::lowest()));
    past_largest =
        std::min(past_largest, static_cast<double>(std::numeric_limits<scalar_t>::max()) + 1.0);
  });
  if (low < smallest || high > past_largest) {
    throw bad(fmt::format("[{},{}) does not fit in {} (values {} to {})", low, high,
                          dtype_name(spec.dtype), smallest, past_largest - 1.0));
  }
  return spec;
}

/// A random input for `spec` on `device`: uniform in spec.range when it has one, else standard
/// normal for floating dtypes, integers drawn from [0, 100) (valid token ids and indices for
/// most models), random booleans.
[[nodiscard]] inline at::Tensor make_random_input(const InputSpec& spec, c10::Device device,
                                                  at::Generator generator = {}) {
  const auto options = at::TensorOptions().device(c10::kCPU);
  at::Tensor tensor;
  if (at::isFloatingType(spec.dtype) && spec.range) {
    const auto [low, high] = *spec.range;
    const auto draw = [&] {
      return at::rand(spec.shape, generator, options.dtype(c10::ScalarType::Double))
          .mul_(high - low)
          .add_(low)
          .to(spec.dtype);
    };
    // Rounding to the dtype can carry a value just below HIGH up to HIGH itself (in float32
    // about once in 2^23 draws near it; in bfloat16 far more often): draw those again, so the
    // range stays half-open. A range with no value of the dtype below HIGH gives LOW.
    tensor = draw();
    for (int attempt = 0; attempt < 64; ++attempt) {
      const at::Tensor over = tensor.ge(high);
      if (!over.any().item<bool>()) break;
      tensor = at::where(over, attempt < 63 ? draw() : at::full_like(tensor, low), tensor);
    }
  } else if (at::isFloatingType(spec.dtype)) {
    tensor = at::randn(spec.shape, generator, options.dtype(c10::ScalarType::Float));
  } else if (spec.dtype == c10::ScalarType::Bool) {
    tensor = at::randint(0, 2, spec.shape, generator, options.dtype(c10::ScalarType::Long));
  } else {
    const auto low = spec.range ? static_cast<std::int64_t>(spec.range->low) : 0;
    const auto high = spec.range ? static_cast<std::int64_t>(spec.range->high) : 100;
    tensor = at::randint(low, high, spec.shape, generator, options.dtype(c10::ScalarType::Long));
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

/// How describe_sample writes an argument that is not a tensor.
enum class NonTensorText {
  value,  ///< the value itself (`3`)
  kind    ///< its kind only (`Int`): samples that differ in such a value share one shape
};

/// Each argument of `sample` as the report shows it: `1x3x224x224`, `1x64:int64` for a tensor,
/// the value itself (or, with NonTensorText::kind, its kind) for anything else.
[[nodiscard]] inline std::vector<std::string>
describe_sample(const Sample& sample, NonTensorText others = NonTensorText::value) {
  std::vector<std::string> arguments;
  for (const c10::IValue& argument : sample) {
    if (argument.isTensor()) {
      const at::Tensor& tensor = argument.toTensor();
      arguments.push_back(InputSpec{tensor.sizes().vec(), tensor.scalar_type()}.describe());
    } else {
      arguments.push_back(others == NonTensorText::value ? c10::str(argument)
                                                         : std::string(argument.tagKind()));
    }
  }
  return arguments;
}

/// A sample's shape in one line, which samples of one shape share (aitune::sample_shape): each
/// tensor argument's shape and dtype, each other argument by its kind (`1x64:int64, 1x64:int64`),
/// so a tuning weighs and times the shapes apart.
[[nodiscard]] inline std::string sample_shape_text(const Sample& sample) {
  return fmt::format("{}", fmt::join(describe_sample(sample, NonTensorText::kind), ", "));
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
