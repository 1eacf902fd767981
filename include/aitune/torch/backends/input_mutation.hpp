// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Models that write to their inputs. PyTorch allows it (`x.add_(1)`, a key/value cache updated
/// in place with `index_copy_`), and an exported program keeps it. Run on the caller's tensors,
/// such a model would change the samples every backend is checked and timed on (each call would
/// see what the previous one left), and a server's request tensors. So every backend finds out
/// at build, on copies of the first sample, and from then on gives such a model copies of the
/// caller's tensors on every call. The copy is part of what the call costs, for every backend
/// alike.

#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"
#include "aitune/torch/model/model.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class InputWrites {
 public:
  /// Runs `call` on deep copies of `sample` (tensors in tuples, lists and dicts too) and
  /// remembers whether it wrote to them; returns what the call returned. The caller's own
  /// tensors are never touched.
  template <class Call>
  c10::IValue detect(Call&& call, const Sample& sample) {
    found_ = false;  // so that the probe's own inputs are not copied again
    Sample probe;
    Sample pristine;
    for (const auto& value : sample) {
      probe.push_back(deep_copy(value));
      pristine.push_back(deep_copy(value));
    }
    c10::IValue output = std::forward<Call>(call)(probe);
    for (std::size_t i = 0; i < probe.size(); ++i) {
      const std::vector<at::Tensor> after = tensors_of(probe[i]);
      const std::vector<at::Tensor> before = tensors_of(pristine[i]);
      for (std::size_t t = 0; t < after.size() && t < before.size(); ++t) {
        if (!after[t].equal(before[t])) found_ = true;
      }
    }
    return output;
  }

  /// Whether the model writes to its inputs.
  [[nodiscard]] bool found() const noexcept { return found_; }

  /// The tensor to hand the model for the caller's `original`: `tensor` (the original as moved
  /// or cast for the backend), or a copy where the model writes to its inputs and `tensor` still
  /// is the caller's own.
  [[nodiscard]] at::Tensor protect(at::Tensor tensor, const at::Tensor& original) const {
    if (found_ && tensor.is_same(original)) return tensor.clone();
    return tensor;
  }

  /// An input that is not a tensor as the model may receive it: itself, or a deep copy of the
  /// tensors it holds where the model writes to its inputs.
  [[nodiscard]] c10::IValue protect(const c10::IValue& value) const {
    return found_ ? deep_copy(value) : value;
  }

 private:
  static c10::IValue deep_copy(const c10::IValue& value) {
    return map_tensors(value, [](const at::Tensor& tensor) { return tensor.clone(); });
  }

  /// The tensors `value` holds, depth first (a tensor is its own).
  static std::vector<at::Tensor> tensors_of(const c10::IValue& value) {
    std::vector<at::Tensor> tensors;
    (void)walk_leaves("input", value, [&](const std::string&, const c10::IValue& leaf) {
      if (leaf.isTensor() && leaf.toTensor().defined()) tensors.push_back(leaf.toTensor());
      return OutputCheck::ok();
    });
    return tensors;
  }

  bool found_ = false;
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
