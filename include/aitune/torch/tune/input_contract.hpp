// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The input contract of a tuning: what inputs the tuned module accepts, whichever backend the
/// tuning selects.

#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/serve/tuned_module.hpp"
#include "aitune/torch/tune/baseline.hpp"

#include <algorithm>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The input contract of a tuning of `model` over `candidates`: the samples' exact shapes when
/// its baseline or any candidate is made for them only (a `.pt2` program, an AOTInductor
/// compilation), else their ranks. Whichever backend a tuning selects, and
/// whether it is served while a background tuning runs, the module then accepts the same inputs.
[[nodiscard]] inline ShapeCheck shape_check_for(const Model& model,
                                                const std::vector<AnyBackend>& candidates) {
  const bool specialised =
      make_baseline(model).shape_specialised() ||
      std::any_of(candidates.begin(), candidates.end(),
                  [](const AnyBackend& candidate) { return candidate.shape_specialised(); });
  return specialised ? ShapeCheck::exact : ShapeCheck::rank;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
