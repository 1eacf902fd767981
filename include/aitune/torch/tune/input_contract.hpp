// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The input contract of a tuning: what inputs the tuned module accepts, whichever backend the
/// tuning selects.

#include "aitune/core/error.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/model/index_domains.hpp"
#include "aitune/torch/model/input_ranges.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/serve/tuned_module.hpp"
#include "aitune/torch/tune/baseline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The input contract of a tuning of `model` over `candidates`: the samples' exact shapes when
/// its baseline or any candidate is made for them only (a `.pt2` program, an AOTInductor
/// compilation); their shapes but any size in its range on the axes the model was exported with
/// a range on, when every such backend takes the range (tools/export_model.py --dynamic); else
/// their ranks; and index inputs within the values the archive records for them
/// (IndexDomains). Whichever backend a tuning selects, and whether it is served while a
/// background tuning runs, the module then accepts the same inputs.
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
  ShapeContract contract = ShapeCheck::rank;
  if (InputRanges ranges = InputRanges::of(model);
      specialised && all_take_range && !ranges.empty()) {
    contract = ShapeContract(ShapeCheck::range, std::move(ranges));
  } else if (specialised) {
    contract = ShapeCheck::exact;
  }
  contract.domains = IndexDomains::of(model);
  return contract;
}

/// Throws ConfigError naming the first of `samples` that the module a tuning under `shapes` hands
/// back would refuse: a size outside an axis's recorded range, axes of one exported dimension
/// that disagree, or an index outside its domain. A tuning on such a sample would time it, blame
/// the candidates made for the range (they refuse it) and hand back a module that refuses the
/// very shape it was tuned at; or, with no reference from a baseline that fails on it, select a
/// candidate never compared with anything.
inline void refuse_samples_outside(const ShapeContract& shapes,
                                   const std::vector<Sample>& samples) {
  for (std::size_t s = 0; s < samples.size(); ++s) {
    std::string why =
        shapes.check == ShapeCheck::range ? shapes.ranges.refusal(samples[s]) : std::string();
    if (why.empty()) why = shapes.domains.outside(samples[s]);
    if (!why.empty()) {
      throw ConfigError(fmt::format("sample {} of {}: {}; the tuned module would refuse it, so "
                                    "it is not tuned on",
                                    s + 1, samples.size(), why));
    }
  }
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
