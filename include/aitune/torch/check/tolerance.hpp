// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// How close a candidate's outputs must be to the baseline's.
///
/// An output element passes when
///
///     |actual - expected| <= scale_atol * scale + rtol * |expected|
///
/// where `scale` is the largest |expected| in that output tensor. Tying the absolute part to
/// the tensor's own scale makes the check mean the same for logits of size 10 and for features
/// of size 1e-3. The defaults follow the candidate's compute precision (see docs/libtorch.md,
/// "Correctness check"): float32 1e-4 / 1e-4, float16 and bfloat16 16 units of round-off
/// (2^-7 = 7.8e-3 and 2^-4 = 6.25e-2) on both terms, and float32 on CUDA with TF32 allowed as
/// float16.

#include "aitune/core/error.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/dtype_names.hpp"

#include <ATen/Context.h>

#include <fmt/format.h>

#include <optional>
#include <string>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

struct Tolerance {
  double rtol = 1e-4;        ///< relative to each expected element
  double scale_atol = 1e-4;  ///< relative to the largest |expected| of the tensor

  /// The default for outputs computed in `dtype` (the candidate's precision).
  [[nodiscard]] static Tolerance for_dtype(c10::ScalarType dtype) {
    switch (dtype) {
      case c10::ScalarType::Half: return {7.8125e-3, 7.8125e-3};
      case c10::ScalarType::BFloat16: return {6.25e-2, 6.25e-2};
      default: return {1e-4, 1e-4};
    }
  }

  /// The default for outputs computed in `precision`.
  [[nodiscard]] static Tolerance for_precision(Precision precision) {
    return for_dtype(to_scalar_type(precision));
  }

  /// The default for float32 work on `device`. On CUDA, LibTorch lets cuDNN (by default) and
  /// cuBLAS (when asked) compute float32 convolutions and matmuls in TF32, whose 10-bit
  /// mantissa rounds like float16's: 16 units of its round-off, as for float16.
  [[nodiscard]] static Tolerance for_float32_on(c10::Device device, bool tf32_allowed) {
    if (device.is_cuda() && tf32_allowed) return for_dtype(c10::ScalarType::Half);
    return for_dtype(c10::ScalarType::Float);
  }

  /// The default for work in `dtype` on `device`, with LibTorch's TF32 settings as they are now.
  /// LibTorch refuses to answer when its old and new TF32 settings disagree: then TF32 is
  /// assumed, the looser choice.
  [[nodiscard]] static Tolerance for_compute(c10::ScalarType dtype, c10::Device device) {
    if (dtype != c10::ScalarType::Float || !device.is_cuda()) return for_dtype(dtype);
    bool tf32 = true;
    try {
      const auto& context = at::globalContext();
      tf32 = context.allowTF32CuDNN() || context.allowTF32CuBLAS();
    } catch (const c10::Error&) {
    }
    return for_float32_on(device, tf32);
  }

  /// Validates the values: both finite and non-negative.
  [[nodiscard]] Tolerance checked() const {
    if (!(rtol >= 0.0 && scale_atol >= 0.0) || rtol > 1e6 || scale_atol > 1e6) {
      throw ConfigError(fmt::format("tolerances must be finite and non-negative, got rtol={} "
                                    "scale_atol={}",
                                    rtol, scale_atol));
    }
    return *this;
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format("rtol={:.3g}, scale_atol={:.3g}", rtol, scale_atol);
  }
};

/// What a backend tells the correctness check about its outputs.
struct OutputPolicy {
  Tolerance tolerance{};
  /// Set for a precision variant: it computes in this precision, its floating outputs may come
  /// back in it, and they are compared after upcasting.
  std::optional<Precision> reduced_precision{};
  /// Set when the backend cannot know the structure of its outputs (a compiled model whose
  /// package records none): why, for the reason of a failed check. Its outputs come back flat.
  std::string unknown_structure{};
  /// Set for a quantised model ("int8"): it computes in a lower precision than the model
  /// (its outputs keep the model's dtypes), and an accuracy budget judges it.
  std::string quantization{};
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
