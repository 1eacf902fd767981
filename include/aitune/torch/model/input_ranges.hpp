// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The input axes a `.pt2` model takes a range of sizes on (tools/export_model.py --dynamic), by
/// input position, and the checks every shape-bound caller makes with them: a size inside its
/// range, the other axes as tuned, and axes of one exported dimension (input_ids' and
/// attention_mask's length) equal within a call. What fits is safe for every variant made for
/// the range; anything else would read out of bounds in a compiled model.

#include "aitune/core/cli/option_text.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// One input axis that takes every size from min to max.
struct AxisRange {
  std::size_t position = 0;  ///< the input's place in a sample
  std::string input{};       ///< its name
  std::size_t axis = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::string symbol{};  ///< the exported dimension: axes with one symbol are equal in a call
};

/// The axes of a model's inputs that take a range of sizes.
struct InputRanges {
  std::vector<AxisRange> axes{};

  [[nodiscard]] bool empty() const noexcept { return axes.empty(); }

  /// A `.pt2` model's: its archive's dynamic axes, each at the place of its input's name among
  /// the recorded inputs (the program's order, which a sample follows). None for a TorchScript
  /// model or an archive exported for fixed shapes.
  [[nodiscard]] static InputRanges of(const Model& model) {
    InputRanges ranges;
    if (!model.archive) return ranges;
    const auto& names = model.archive->input_names;
    for (const DynamicAxis& axis : model.archive->dynamic_axes) {
      const auto at = std::find(names.begin(), names.end(), axis.input);
      if (at == names.end()) continue;  // the reader refuses such a record
      ranges.axes.push_back(AxisRange{static_cast<std::size_t>(at - names.begin()), axis.input,
                                      axis.axis, axis.min, axis.max, axis.symbol});
    }
    return ranges;
  }

  /// Whether `sizes`, input `position`'s, are `shape` (a tuned sample's) but on this input's
  /// ranged axes, which may take any size in their range. Allocates nothing: runs on every call.
  [[nodiscard]] bool fits(std::size_t position, c10::IntArrayRef sizes,
                          c10::IntArrayRef shape) const {
    if (sizes.size() != shape.size()) return false;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      const AxisRange* range = find(position, d);
      const bool ok = range != nullptr ? range->min <= sizes[d] && sizes[d] <= range->max
                                       : sizes[d] == shape[d];
      if (!ok) return false;
    }
    return true;
  }

  /// Why input `position`'s `sizes` are outside a range of its (empty when none is): the first
  /// ranged axis whose size is outside it, named with the input, the range and the shape.
  [[nodiscard]] std::string out_of_range(std::size_t position, c10::IntArrayRef sizes) const {
    for (const AxisRange& range : axes) {
      if (range.position != position || range.axis >= sizes.size()) continue;
      const std::int64_t size = sizes[range.axis];
      if (size < range.min || size > range.max) {
        return fmt::format("input {} ('{}') has shape [{}]: its axis {} takes {} to {} (the range "
                           "it was exported for), not {}",
                           position, range.input, fmt::join(sizes, ", "), range.axis, range.min,
                           range.max, size);
      }
    }
    return {};
  }

  /// Why `sample` is outside what the ranges take (empty when it is not): its first input with a
  /// ranged axis outside its range, else axes of one exported dimension that differ.
  [[nodiscard]] std::string refusal(const Sample& sample) const {
    for (std::size_t i = 0; i < sample.size(); ++i) {
      if (!sample[i].isTensor() || !sample[i].toTensor().defined()) continue;
      if (std::string why = out_of_range(i, sample[i].toTensor().sizes()); !why.empty()) {
        return why;
      }
    }
    return disagreement(sample);
  }

  /// Why `sample`'s axes of one exported dimension differ in size (empty when they agree, or
  /// an input is not a tensor of enough axes: other checks name that).
  [[nodiscard]] std::string disagreement(const Sample& sample) const {
    for (std::size_t a = 0; a < axes.size(); ++a) {
      for (std::size_t b = a + 1; b < axes.size(); ++b) {
        const AxisRange& first = axes[a];
        const AxisRange& second = axes[b];
        if (first.symbol.empty() || first.symbol != second.symbol) continue;
        const std::int64_t one = size_of(sample, first);
        const std::int64_t other = size_of(sample, second);
        if (one >= 0 && other >= 0 && one != other) {
          return fmt::format("inputs {} ('{}') and {} ('{}') must have the same size on axes {} "
                             "and {} (one exported dimension, {} to {}), got {} and {}",
                             first.position, first.input, second.position, second.input, first.axis,
                             second.axis, first.min, first.max, one, other);
        }
      }
    }
    return {};
  }

  /// `sample` at the range's smallest and largest sizes (one sample when they are equal): each
  /// ranged axis cut to its min, or its values repeated up to its max, so token ids stay in
  /// their vocabulary and masks stay 0 or 1. For the check a tuning makes at the bounds, at batch
  /// size 1: a range on the batch axis (axis 0) is left at the sample's size. Throws
  /// Error, naming the range, when an input at its largest would hold more than
  /// max_input_elements elements (a record's max is untrusted: checked before anything is
  /// allocated).
  [[nodiscard]] std::vector<Sample> at_bounds(const Sample& sample) const {
    const auto at = [&](bool largest) {
      Sample bound = sample;
      for (const AxisRange& range : axes) {
        if (range.axis == 0 || range.position >= bound.size() ||
            !bound[range.position].isTensor()) {
          continue;
        }
        const std::int64_t size = largest ? range.max : range.min;
        refuse_too_large(bound[range.position].toTensor(), range, size);
        bound[range.position] = resized(bound[range.position].toTensor(), range.axis, size);
      }
      return bound;
    };
    std::vector<Sample> bounds{at(false)};
    if (std::any_of(axes.begin(), axes.end(),
                    [](const AxisRange& r) { return r.axis != 0 && r.max != r.min; })) {
      bounds.push_back(at(true));
    }
    return bounds;
  }

  /// Each ranged input of `sample` with its shape as the range allows it:
  /// `input_ids [1, 8..256], attention_mask [1, 8..256]`.
  [[nodiscard]] std::string describe_inputs(const Sample& sample) const {
    std::vector<std::string> inputs;
    for (std::size_t position = 0; position < sample.size(); ++position) {
      const auto ranged = std::find_if(axes.begin(), axes.end(), [&](const AxisRange& range) {
        return range.position == position;
      });
      if (ranged == axes.end() || !sample[position].isTensor()) continue;
      inputs.push_back(fmt::format("{} {}", ranged->input,
                                   describe(position, sample[position].toTensor().sizes().vec())));
    }
    return fmt::format("{}", fmt::join(inputs, ", "));
  }

  /// `shape` of input `position` with each ranged axis written `MIN..MAX`: `[1, 8..256]`.
  [[nodiscard]] std::string describe(std::size_t position,
                                     const std::vector<std::int64_t>& shape) const {
    std::vector<std::string> sizes;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const AxisRange* range = find(position, d);
      sizes.push_back(range != nullptr ? fmt::format("{}..{}", range->min, range->max)
                                       : std::to_string(shape[d]));
    }
    return fmt::format("[{}]", fmt::join(sizes, ", "));
  }

 private:
  [[nodiscard]] const AxisRange* find(std::size_t position, std::size_t axis) const {
    for (const AxisRange& range : axes) {
      if (range.position == position && range.axis == axis) return &range;
    }
    return nullptr;
  }

  /// Throws Error when `tensor` with `range`'s axis at `size` would hold more than
  /// max_input_elements elements.
  static void refuse_too_large(const at::Tensor& tensor, const AxisRange& range,
                               std::int64_t size) {
    const auto dim = static_cast<std::int64_t>(range.axis);
    if (!tensor.defined() || dim >= tensor.dim() || tensor.size(dim) == 0 || size == 0) return;
    const std::int64_t others = tensor.numel() / tensor.size(dim);
    if (others <= max_input_elements / size) return;
    throw Error(fmt::format("input {} ('{}') at {}, the largest size the archive records for its "
                            "axis {} ({}..{}), would hold more than {} elements (the most an "
                            "input may have): a damaged record, or export a smaller range",
                            range.position, range.input, size, range.axis, range.min, range.max,
                            max_input_elements));
  }

  /// `tensor` with `axis` of `size`: its first values, or its values repeated.
  static at::Tensor resized(const at::Tensor& tensor, std::size_t axis, std::int64_t size) {
    const auto dim = static_cast<std::int64_t>(axis);
    if (!tensor.defined() || dim >= tensor.dim() || tensor.size(dim) == 0) return tensor;
    at::Tensor longer = tensor;
    if (tensor.size(dim) < size) {
      std::vector<std::int64_t> repeats(static_cast<std::size_t>(tensor.dim()), 1);
      repeats[axis] = (size + tensor.size(dim) - 1) / tensor.size(dim);
      longer = tensor.repeat(repeats);
    }
    return longer.narrow(dim, 0, size).contiguous();
  }

  static std::int64_t size_of(const Sample& sample, const AxisRange& range) {
    if (range.position >= sample.size() || !sample[range.position].isTensor()) return -1;
    const at::Tensor& tensor = sample[range.position].toTensor();
    if (!tensor.defined() || range.axis >= static_cast<std::size_t>(tensor.dim())) return -1;
    return tensor.size(static_cast<std::int64_t>(range.axis));
  }
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
