// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The baseline of a LibTorch model: what the candidates are checked against and must beat. The
/// model run as PyTorch runs it eagerly: TorchEager for a TorchScript model; the native runtime,
/// which interprets the exported graph op by op, for a `.pt2`. Where LibTorch has no native
/// runtime (from 2.12 on), a `.pt2`'s baseline is its first fp32 compilation (aoti_baseline_of):
/// the candidates are then checked against that compilation, not against eager PyTorch.
///
/// This is the LibTorch family's answer to aitune::baseline_traits for AnyBackend, which
/// backends/any_backend.hpp declares and this header defines: a tuning over AnyBackend needs it
/// (aitune/torch/tune/tune.hpp and aitune/torch.hpp include it).

#include "aitune/core/customization.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/aot_inductor.hpp"
#include "aitune/torch/backends/native_runtime.hpp"
#include "aitune/torch/backends/torchscript.hpp"
#include "aitune/torch/model/model.hpp"

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The AOTInductor model of `model`'s archive that is its baseline (AOTInductor::baseline_of),
/// or null where the native runtime or TorchEager is.
[[nodiscard]] inline const AotiModelInfo* aoti_baseline_of(const Model& model) {
  return AOTInductor::baseline_of(model);
}

/// The baseline of `model` (see the file's comment), unbuilt.
[[nodiscard]] inline AnyBackend make_baseline(const Model& model) {
  if (const AotiModelInfo* compiled = aoti_baseline_of(model)) {
    return AnyBackend(AOTInductor::from_archive(*model.archive, *compiled));
  }
  if (model.is_exported()) return AnyBackend(NativeRuntime::from_archive(*model.archive));
  return AnyBackend(TorchEager());
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt

/// A tuning over AnyBackend measures make_baseline's backend first.
template <>
struct aitune::baseline_traits<aitune::lt::AnyBackend> {
  static constexpr bool available = true;
  [[nodiscard]] static aitune::lt::AnyBackend make(const aitune::lt::Model& model) {
    return aitune::lt::make_baseline(model);
  }
};
