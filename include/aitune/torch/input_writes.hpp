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

#include "aitune/torch/config.hpp"
#include "aitune/torch/model.hpp"

#include <cstddef>
#include <utility>

namespace aitune::lt {

class InputWrites {
 public:
  /// Runs `call` on deep copies of `sample` and remembers whether it wrote to them; returns what
  /// the call returned. The caller's own tensors are never touched.
  template <class Call>
  c10::IValue detect(Call&& call, const Sample& sample) {
    Sample probe;
    Sample pristine;
    for (const auto& value : sample) {
      probe.push_back(value.isTensor() ? c10::IValue(value.toTensor().clone()) : value);
      pristine.push_back(value.isTensor() ? c10::IValue(value.toTensor().clone()) : value);
    }
    c10::IValue output = std::forward<Call>(call)(probe);
    found_ = false;
    for (std::size_t i = 0; i < probe.size(); ++i) {
      if (probe[i].isTensor() && !probe[i].toTensor().equal(pristine[i].toTensor())) found_ = true;
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

 private:
  bool found_ = false;
};

}  // namespace aitune::lt
