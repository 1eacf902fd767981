// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// PerturbedOutputs: a canary backend that returns its inner backend's outputs with every
/// floating element moved by `magnitude` times the output's scale. The correctness check must
/// reject it; add it to a tuning to prove that the check is on and strict enough.

#include "aitune/core/backend.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class PerturbedOutputs : public BackendLifecycle<PerturbedOutputs> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  // A template, not an AnyBackend parameter: converting PerturbedOutputs itself to AnyBackend
  // while checking whether PerturbedOutputs is movable would make the concept recursive.
  template <class Inner>
  requires(!std::same_as<std::remove_cvref_t<Inner>, PerturbedOutputs> &&
           TorchBackend<Inner>) explicit PerturbedOutputs(Inner inner, double magnitude = 0.25)
      : inner_(AnyBackend(std::move(inner))), magnitude_(magnitude) {}

  [[nodiscard]] std::string describe() const {
    return fmt::format("PerturbedOutputs({}, magnitude={})", inner_.describe(), magnitude_);
  }
  [[nodiscard]] std::vector<std::filesystem::path> loaded_files() const {
    return inner_.loaded_files();
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("perturbed:{}:{}", magnitude_, inner_.key());
  }
  [[nodiscard]] OutputPolicy output_policy() const { return inner_.output_policy(); }
  [[nodiscard]] bool thread_safe() const { return inner_.thread_safe(); }
  [[nodiscard]] bool shape_specialised() const { return inner_.shape_specialised(); }
  /// The inner backend's (aitune::after_calls): what its calls changed is put back.
  void after_calls() { inner_.after_calls(); }

 private:
  friend class BackendLifecycle<PerturbedOutputs>;

  void do_build(const Model& model, std::span<const Sample> samples) {
    inner_.build(model, samples);
  }
  c10::IValue do_infer(const Sample& sample) { return perturb(inner_.infer(sample)); }
  void do_activate() { inner_.activate(); }
  void do_deactivate() {
    if (inner_.state() != BackendState::created) inner_.deactivate();
  }

  /// Adds +/- magnitude * max|t| in an alternating pattern to every floating tensor, wherever
  /// it sits in the output (tuples, lists, dicts).
  [[nodiscard]] c10::IValue perturb(const c10::IValue& value) const {
    return map_tensors(value, [this](const at::Tensor& tensor) -> at::Tensor {
      if (!tensor.is_floating_point() || tensor.numel() == 0) return tensor;
      const at::Tensor signs = at::arange(tensor.numel(), tensor.options())
                                   .remainder(2)
                                   .mul(2)
                                   .sub(1)
                                   .view(tensor.sizes());
      const double scale = tensor.abs().max().item<double>();
      return tensor + signs * (magnitude_ * (scale > 0.0 ? scale : 1.0));
    });
  }

  AnyBackend inner_;
  double magnitude_;
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
