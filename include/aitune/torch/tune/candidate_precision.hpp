// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Precision under the user's control: which precisions the candidates may compute in, and the
/// tolerances of the correctness check per precision. The command's `--precision` and
/// `--tolerance` options parse into these. A candidate's precision is the one the report gives
/// it (computed_precision, check/compare_outputs.hpp): its reduced precision if it is a precision
/// variant, else the model's own (model_precision).

#include "aitune/core/cli/option_text.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/check/compare_outputs.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The precision `model` computes in natively, read before any tuning: its first floating input
/// in `sample`, else its TorchScript module's first floating parameter, else fp32 (an exported
/// program whose inputs are all integers, as a text model's token ids: its weights are fp32 unless
/// it was exported otherwise). The report reads the same off the baseline's outputs.
[[nodiscard]] inline Precision model_precision(const Model& model, const Sample& sample) {
  for (const c10::IValue& input : sample) {
    if (const auto found = native_precision(input)) return *found;
  }
  if (model.has_torchscript) {
    for (const at::Tensor& parameter : model.module.parameters()) {
      if (parameter.is_floating_point()) return *precision_of(parameter.scalar_type());
    }
  }
  return Precision::fp32;
}

/// The precision `candidate` computes in, for a model that computes in `native`.
[[nodiscard]] inline Precision candidate_precision(const AnyBackend& candidate, Precision native) {
  return computed_precision(candidate.output_policy(), native).value_or(native);
}

/// The candidates that compute in one of `precisions`, in their order (`native`: the model's own
/// precision, model_precision). Throws ConfigError for fp16 on a CPU device (LibTorch's CPU
/// float16 kernels are missing or slow, so no CPU candidate uses it), and when no candidate is
/// left.
[[nodiscard]] inline std::vector<AnyBackend> keep_precisions(std::vector<AnyBackend> candidates,
                                                             std::span<const Precision> precisions,
                                                             c10::Device device, Precision native) {
  if (precisions.empty()) throw ConfigError("the list of precisions to keep is empty");
  for (const Precision precision : precisions) {
    if (precision == Precision::fp16 && !device.is_cuda()) {
      throw ConfigError(
          fmt::format("precision fp16 needs a CUDA device, the model is on {}", device.str()));
    }
  }
  std::vector<AnyBackend> kept;
  for (AnyBackend& candidate : candidates) {
    if (std::ranges::find(precisions, candidate_precision(candidate, native)) != precisions.end()) {
      kept.push_back(std::move(candidate));
    }
  }
  if (kept.empty()) {
    std::vector<std::string_view> names;
    for (const Precision precision : precisions)
      names.push_back(to_string(precision));
    throw ConfigError(fmt::format("no candidate computes in {}", fmt::join(names, " or ")));
  }
  return kept;
}

/// A tolerance for the candidates of one precision, or for all when `precision` is none.
struct ToleranceOverride {
  std::optional<Precision> precision{};
  Tolerance tolerance{};
};

/// Parses `[PRECISION:]RTOL[,SCALE_ATOL]` (parse_tolerance_text): `1e-3` (both terms, every
/// precision), `bf16:0.05`, `fp32:1e-3,1e-5`. SCALE_ATOL is relative to the largest |value| of
/// each output tensor (check/tolerance.hpp); it defaults to RTOL.
[[nodiscard]] inline ToleranceOverride parse_tolerance(std::string_view text) {
  const ToleranceText parsed = parse_tolerance_text(text);
  return ToleranceOverride{parsed.precision, Tolerance{parsed.rtol, parsed.scale_atol}};
}

/// Sets each candidate's tolerance from `overrides` (`native`: the model's own precision): one
/// for its precision wins over one for all; among equals, the later wins. Candidates no override
/// names keep their defaults.
inline void apply_tolerances(std::vector<AnyBackend>& candidates,
                             std::span<const ToleranceOverride> overrides, Precision native) {
  for (AnyBackend& candidate : candidates) {
    const Precision precision = candidate_precision(candidate, native);
    const ToleranceOverride* chosen = nullptr;
    for (const ToleranceOverride& entry : overrides) {
      if (entry.precision == precision) {
        chosen = &entry;
      } else if (!entry.precision && (chosen == nullptr || !chosen->precision)) {
        chosen = &entry;
      }
    }
    if (chosen) candidate.set_tolerance(chosen->tolerance);
  }
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
