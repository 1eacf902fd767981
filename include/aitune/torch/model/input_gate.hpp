// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// InputGate: what a session made for a `.pt2` archive's shapes (an AOTInductor compilation, a
/// converted ONNX or OpenVINO model) takes when it is called directly, checked on every call
/// before the inputs reach its runtime. The same checks a TunedModule makes: the dtypes and
/// shapes of the samples it was built on, any size in its range on an axis exported as one,
/// axes of one exported dimension equal, and index inputs within their domain. A runtime left to
/// judge such inputs itself reads out of bounds (AOTInductor), answers with numbers (ONNX
/// Runtime, OpenVINO), or, OpenVINO 2026.4 at one thread, swallows the error and hands back the
/// previous request's outputs (docs/runtimes.md).

#include "aitune/core/error.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/index_domains.hpp"
#include "aitune/torch/model/input_ranges.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class InputGate {
 public:
  /// What one accepted shape is: each input's dtype and sizes.
  using Signature = std::vector<std::pair<c10::ScalarType, std::vector<std::int64_t>>>;

  /// Open: takes anything (a session not built yet).
  InputGate() = default;

  /// The gate of a session of `model` built on `samples` (tensors only: `runtime` names who
  /// takes no other input, for the error): their dtypes and shapes, any size in its range on a
  /// ranged axis where `takes_range`, and the model's index domains.
  [[nodiscard]] static InputGate of(const Model& model, std::span<const Sample> samples,
                                    bool takes_range, std::string_view runtime) {
    InputGate gate;
    gate.ranges_ = takes_range ? InputRanges::of(model) : InputRanges{};
    gate.domains_ = IndexDomains::of(model);
    for (const Sample& sample : samples)
      gate.shapes_.push_back(signature_of(sample, runtime));
    return gate;
  }

  /// Throws Error, naming the session (`owner()`, called only then) and what is wrong, when
  /// `sample` is not one it takes. Compares without formatting or allocating when all is well:
  /// this runs on every (timed) call.
  template <std::invocable Owner>
  void check(const Sample& sample, Owner&& owner) const {
    if (shapes_.empty()) return;
    if (!accepted(sample)) refuse_shape(sample, owner());
    if (std::string why = domains_.outside(sample); !why.empty()) {
      throw Error(fmt::format("{}: {}", owner(), why));
    }
  }

 private:
  /// Each input's dtype and sizes; non-tensors are refused (`runtime` takes tensors only).
  [[nodiscard]] static Signature signature_of(const Sample& sample, std::string_view runtime) {
    Signature signature;
    for (const auto& value : sample) {
      if (!value.isTensor()) {
        throw Error(
            fmt::format("{} take tensors only; an input is a {}", runtime, value.tagKind()));
      }
      const at::Tensor& tensor = value.toTensor();
      signature.emplace_back(tensor.scalar_type(), tensor.sizes().vec());
    }
    return signature;
  }

  /// "fp32[1, 3, 224, 224]" for each input.
  [[nodiscard]] static std::string describe_signature(const Signature& signature) {
    std::vector<std::string> inputs;
    for (const auto& [dtype, sizes] : signature) {
      inputs.push_back(fmt::format("{}[{}]", short_dtype_name(dtype), fmt::join(sizes, ", ")));
    }
    return fmt::format("{}", fmt::join(inputs, " "));
  }

  /// Whether `sample` has one accepted signature's dtypes and shapes, but on ranged axes, which
  /// take any size in their range and agree within one exported dimension.
  [[nodiscard]] bool accepted(const Sample& sample) const {
    for (const auto& accepted : shapes_) {
      std::size_t position = 0;
      const bool same =
          accepted.size() == sample.size() &&
          std::equal(accepted.begin(), accepted.end(), sample.begin(),
                     [&](const auto& input, const c10::IValue& value) {
                       const std::size_t i = position++;
                       return value.isTensor() && value.toTensor().scalar_type() == input.first &&
                              (ranges_.empty()
                                   ? value.toTensor().sizes() == input.second
                                   : ranges_.fits(i, value.toTensor().sizes(), input.second));
                     });
      if (same && ranges_.disagreement(sample).empty()) return true;
    }
    return false;
  }

  /// Throws the Error that says why `sample`'s shapes are refused: the first axis outside its
  /// range, axes of one dimension that differ, or the shapes it takes.
  [[noreturn]] void refuse_shape(const Sample& sample, const std::string& owner) const {
    if (std::string why = ranges_.refusal(sample); !why.empty()) {
      throw Error(fmt::format("{}: {}", owner, why));
    }
    Signature received;
    for (const auto& value : sample) {
      if (value.isTensor())
        received.emplace_back(value.toTensor().scalar_type(), value.toTensor().sizes().vec());
    }
    throw Error(fmt::format("{} was made for {} input shapes {} and cannot take {}", owner,
                            ranges_.empty() ? "fixed" : "these",
                            describe_signature(shapes_.front()), describe_signature(received)));
  }

  std::vector<Signature> shapes_{};  ///< of the samples it was built on
  InputRanges ranges_{};             ///< the ranges it takes (none: fixed shapes)
  IndexDomains domains_{};
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
