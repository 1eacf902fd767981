// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Precision under the user's control: which precisions the candidates may compute in, and the
/// tolerances of the correctness check per precision. The command's `--precision` and
/// `--tolerance` options parse into these.

#include "aitune/core/cli/option_text.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/model/dtype_names.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

// The precision names and the tolerance syntax are parsed torch-free (core/cli/option_text.hpp).
using aitune::parse_precision;

/// The precision `candidate` computes in: its reduced precision, else fp32.
[[nodiscard]] inline std::string declared_precision(const AnyBackend& candidate) {
  const OutputPolicy policy = candidate.output_policy();
  return policy.reduced_precision ? short_dtype_name(*policy.reduced_precision) : "fp32";
}

/// The candidates that compute in one of `precisions` (names as parse_precision takes them),
/// in their order. Throws ConfigError for an unknown name, for fp16 on a CPU device (LibTorch's
/// CPU float16 kernels are missing or slow, so no CPU candidate uses it), and when no candidate
/// is left.
[[nodiscard]] inline std::vector<AnyBackend>
keep_precisions(std::vector<AnyBackend> candidates, std::span<const std::string> precisions,
                c10::Device device) {
  if (precisions.empty()) throw ConfigError("the list of precisions to keep is empty");
  std::vector<std::string> wanted;
  for (const std::string& name : precisions) {
    wanted.push_back(parse_precision(name));
    if (wanted.back() == "fp16" && !device.is_cuda()) {
      throw ConfigError(
          fmt::format("precision fp16 needs a CUDA device, the model is on {}", device.str()));
    }
  }
  std::vector<AnyBackend> kept;
  for (AnyBackend& candidate : candidates) {
    if (std::find(wanted.begin(), wanted.end(), declared_precision(candidate)) != wanted.end()) {
      kept.push_back(std::move(candidate));
    }
  }
  if (kept.empty()) {
    throw ConfigError(fmt::format("no candidate computes in {}", fmt::join(wanted, " or ")));
  }
  return kept;
}

/// A tolerance for the candidates of one precision, or for all when `precision` is empty.
struct ToleranceOverride {
  std::string precision{};
  Tolerance tolerance{};
};

/// Parses `[PRECISION:]RTOL[,SCALE_ATOL]` (parse_tolerance_text): `1e-3` (both terms, every
/// precision), `bf16:0.05`, `fp32:1e-3,1e-5`. SCALE_ATOL is relative to the largest |value| of
/// each output tensor (check/tolerance.hpp); it defaults to RTOL.
[[nodiscard]] inline ToleranceOverride parse_tolerance(std::string_view text) {
  const ToleranceText parsed = parse_tolerance_text(text);
  ToleranceOverride result;
  result.precision = parsed.precision;
  result.tolerance.rtol = parsed.rtol;
  result.tolerance.scale_atol = parsed.scale_atol;
  return result;
}

/// Sets each candidate's tolerance from `overrides`: one for its precision wins over one for
/// all; among equals, the later wins. Candidates no override names keep their defaults.
inline void apply_tolerances(std::vector<AnyBackend>& candidates,
                             std::span<const ToleranceOverride> overrides) {
  for (AnyBackend& candidate : candidates) {
    const std::string precision = declared_precision(candidate);
    const ToleranceOverride* chosen = nullptr;
    for (const ToleranceOverride& entry : overrides) {
      if (entry.precision == precision) {
        chosen = &entry;
      } else if (entry.precision.empty() && (chosen == nullptr || chosen->precision.empty())) {
        chosen = &entry;
      }
    }
    if (chosen) candidate.set_tolerance(chosen->tolerance);
  }
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
