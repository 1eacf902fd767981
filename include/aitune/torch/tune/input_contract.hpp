// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The input contract of a tuning: what inputs the tuned module accepts, whichever backend the
/// tuning selects.

#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/model/input_ranges.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/serve/tuned_module.hpp"
#include "aitune/torch/tune/baseline.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The input contract of a tuning of `model` over `candidates`: the samples' exact shapes when
/// its baseline or any candidate is made for them only (a `.pt2` program, an AOTInductor
/// compilation); their shapes but any size in its range on the axes the model was exported with
/// a range on, when every such backend takes the range (tools/export_model.py --dynamic); else
/// their ranks. Whichever backend a tuning selects, and whether it is served while a background
/// tuning runs, the module then accepts the same inputs.
[[nodiscard]] inline ShapeContract shape_check_for(const Model& model,
                                                   const std::vector<AnyBackend>& candidates) {
  bool specialised = false;
  bool all_take_range = true;
  const auto note = [&](const AnyBackend& backend) {
    if (!backend.shape_specialised()) return;
    specialised = true;
    all_take_range = all_take_range && backend.takes_range();
  };
  note(make_baseline(model));
  std::for_each(candidates.begin(), candidates.end(), note);
  if (!specialised) return ShapeCheck::rank;
  InputRanges ranges = InputRanges::of(model);
  if (all_take_range && !ranges.empty()) return ShapeContract(ShapeCheck::range, std::move(ranges));
  return ShapeCheck::exact;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
