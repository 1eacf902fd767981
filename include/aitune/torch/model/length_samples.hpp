// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Random samples at the sequence lengths a server sees, on a `.pt2` model's dynamic axes: what
/// `aitune-tune --lengths` tunes on, for a library caller.

#include "aitune/core/error.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/input_ranges.hpp"
#include "aitune/torch/model/input_spec.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// For each of `lengths`, `per_length` random samples of `inputs` (in the model's order:
/// inputs_in_model_order) with every dynamic axis of `model` but the batch axis at that length:
/// the samples of one length share its shape, and the batch axis stays at the tuning's 1. With
/// TuneOptions' weights (ProfilingConfig::set_sample_weights), one weight per sample. Samples
/// are reproducible: sample i of a length has the seed i. Throws ConfigError, with the cause,
/// when no length is given, a length is outside an axis's range or repeats, `per_length` is
/// below 1, or the model has no dynamic axis but the batch's (an archive exported for fixed
/// shapes, or whose range record was refused: its cause).
[[nodiscard]] inline std::vector<Sample>
samples_at_lengths(const Model& model, const std::vector<InputSpec>& inputs,
                   const std::vector<std::int64_t>& lengths, c10::Device device,
                   int per_length = 1) {
  const InputRanges ranges = InputRanges::of(model);
  if (ranges.empty()) {
    // A record that was refused is no record of none: say why it was refused.
    if (model.archive && !model.archive->records_problem.empty()) {
      throw ConfigError(
          fmt::format("the model has no usable dynamic axis: {}", model.archive->records_problem));
    }
    throw ConfigError("the model records no dynamic axis (export it with tools/export_model.py "
                      "--dynamic NAME:AXIS:MIN..MAX)");
  }
  if (std::all_of(ranges.axes.begin(), ranges.axes.end(),
                  [](const AxisRange& range) { return range.axis == 0; })) {
    throw ConfigError("the model records a range on the batch axis (axis 0) only, and the tuning "
                      "is at batch size 1: the lengths set the other axes' sizes");
  }
  if (lengths.empty()) throw ConfigError("no length given");
  if (per_length < 1) {
    throw ConfigError(fmt::format("{} samples per length: at least 1", per_length));
  }
  std::vector<Sample> samples;
  for (std::size_t l = 0; l < lengths.size(); ++l) {
    const std::int64_t length = lengths[l];
    if (std::find(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(l), length) !=
        lengths.begin() + static_cast<std::ptrdiff_t>(l)) {
      throw ConfigError(fmt::format("the length {} is given twice", length));
    }
    std::vector<InputSpec> specs = inputs;
    for (const AxisRange& range : ranges.axes) {
      // The batch axis stays at 1: the tuning is at batch size 1, and its report says so.
      if (range.axis == 0 || range.position >= specs.size() ||
          range.axis >= specs[range.position].shape.size()) {
        continue;
      }
      if (length < range.min || length > range.max) {
        throw ConfigError(fmt::format("the length {}: input '{}' takes {} to {} on axis {}, the "
                                      "range it was exported for",
                                      length, range.input, range.min, range.max, range.axis));
      }
      specs[range.position].shape[range.axis] = length;
    }
    for (int i = 0; i < per_length; ++i)
      samples.push_back(make_random_sample(specs, device, static_cast<std::uint64_t>(i)));
  }
  return samples;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
