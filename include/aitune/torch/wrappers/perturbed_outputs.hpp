// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// PerturbedOutputs: a canary backend that returns its inner backend's outputs with every
/// floating element moved by `magnitude` times the output's scale. The correctness check must
/// reject it; add it to a tuning to prove that the check is on and strict enough. Told it computes
/// in a lower precision (claiming()), it stands for a quantised model whose outputs move that
/// much: an accuracy budget then judges it instead of a tolerance.

#include "aitune/core/backend.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"
#include "aitune/torch/wrappers/wrapper.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class PerturbedOutputs : public WrapperBackend<PerturbedOutputs> {
 public:
  // A template, not an AnyBackend parameter: converting PerturbedOutputs itself to AnyBackend
  // while checking whether PerturbedOutputs is movable would make the concept recursive.
  template <class Inner>
  requires(!std::same_as<std::remove_cvref_t<Inner>, PerturbedOutputs> &&
           TorchBackend<Inner>) explicit PerturbedOutputs(Inner inner, double magnitude = 0.25)
      : WrapperBackend(AnyBackend(std::move(inner))), magnitude_(magnitude) {}

  /// The same canary, saying it computes in `precision` (lower than the model's).
  [[nodiscard]] PerturbedOutputs claiming(Precision precision) && {
    claimed_ = precision;
    return std::move(*this);
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format("PerturbedOutputs({}, magnitude={}{})", inner_.describe(), magnitude_,
                       claimed_ ? fmt::format(", claims {}", to_string(*claimed_)) : "");
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("perturbed:{}{}:{}", magnitude_,
                       claimed_ ? fmt::format(":{}", to_string(*claimed_)) : "", inner_.key());
  }
  /// The inner backend's identity, its outputs perturbed by the magnitude.
  [[nodiscard]] BackendIdentity identity() const {
    BackendIdentity identity = inner_.identity();
    identity["perturbed"] = fmt::format("{}", magnitude_);
    return identity;
  }
  [[nodiscard]] OutputPolicy output_policy() const {
    OutputPolicy policy = inner_.output_policy();
    if (claimed_) {
      policy.reduced_precision = claimed_;
      policy.tolerance = Tolerance::for_precision(*claimed_);
    }
    return policy;
  }

 private:
  friend class BackendLifecycle<PerturbedOutputs>;

  c10::IValue do_infer(const Sample& sample) { return perturb(inner_.infer(sample)); }

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

  double magnitude_;
  std::optional<Precision> claimed_{};
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
