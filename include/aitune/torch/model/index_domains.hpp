// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The values an integer input may hold (a token id: the rows of the embedding it indexes), by
/// input position, and the per-call check of them. A token id outside its vocabulary aborts the
/// process inside an AOTInductor kernel (an uncatchable c10::Error thrown from compiled code),
/// and ONNX Runtime and OpenVINO answer it with numbers: refused here with aitune::Error first,
/// whichever runtime would serve it. Only indices are checked: a padded attention mask of 0s is
/// no index, and the range an export drew example values from (`[0,30522)` in an input's spec)
/// is not a domain.

#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/model.hpp"

#include <ATen/ATen.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// One input's values, at its place in a sample.
struct InputDomain {
  std::size_t position = 0;  ///< the input's place in a sample
  std::string input{};       ///< its name
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::string source{};  ///< "embedding": the rows of the embedding it indexes; "declared"
};

/// The inputs of a model whose values are bounded.
struct IndexDomains {
  std::vector<InputDomain> inputs{};

  [[nodiscard]] bool empty() const noexcept { return inputs.empty(); }

  /// A `.pt2` model's, as its archive records them (tools/export_model.py), each at the place
  /// of its input's name among the recorded inputs. None for a TorchScript model.
  [[nodiscard]] static IndexDomains of(const Model& model) {
    IndexDomains domains;
    if (!model.archive) return domains;
    const auto& names = model.archive->input_names;
    for (const IndexDomain& domain : model.archive->index_domains) {
      const auto at = std::find(names.begin(), names.end(), domain.input);
      if (at == names.end()) continue;  // the reader refuses such a record
      domains.inputs.push_back(InputDomain{static_cast<std::size_t>(at - names.begin()),
                                           domain.input, domain.min, domain.max, domain.source});
    }
    return domains;
  }

  /// Why a value of `sample` is outside its input's domain (empty when none is): the input, the
  /// value, the domain and where it comes from. One pass over each bounded input (aminmax), no
  /// allocation when all is well: it runs on every call. An input that is no integer tensor is
  /// left to the other checks.
  [[nodiscard]] std::string outside(const Sample& sample) const {
    for (const InputDomain& domain : inputs) {
      if (domain.position >= sample.size() || !sample[domain.position].isTensor()) continue;
      const at::Tensor& tensor = sample[domain.position].toTensor();
      if (!tensor.defined() || tensor.numel() == 0 ||
          !at::isIntegralType(tensor.scalar_type(), /*includeBool=*/false)) {
        continue;
      }
      const auto [low, high] = at::aminmax(tensor);
      const std::int64_t least = low.item<std::int64_t>();
      const std::int64_t most = high.item<std::int64_t>();
      if (least >= domain.min && most <= domain.max) continue;
      const std::int64_t value = least < domain.min ? least : most;
      return fmt::format("input {} ('{}') holds the value {}, outside {} to {} ({}): it would be "
                         "read out of bounds",
                         domain.position, domain.input, value, domain.min, domain.max,
                         domain.source == "embedding" ? "the rows of the embedding it indexes"
                                                      : "the values declared for it at export");
    }
    return {};
  }
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
