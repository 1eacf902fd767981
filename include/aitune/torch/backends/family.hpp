// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// RuntimeFamily: what one family of backends is called, in one value its header declares
/// (`static constexpr RuntimeFamily family`), so that no other file spells its names.

#include "aitune/torch/libtorch.hpp"

#include <string_view>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// What a family of backends is called: in archives, identities and candidate names (`name`,
/// "onnx": the family's own variant and its others' stem), in messages (`runtime`, "ONNX
/// Runtime": a literal, which a call's error can name without formatting), the device of its own
/// it runs on (`cpu_device`; empty: LibTorch's), and its keys' first field (`key`,
/// "onnxruntime": kept as it was, so that tuning caches stay valid).
struct RuntimeFamily {
  std::string_view name;
  const char* runtime;
  const char* cpu_device;
  std::string_view key;
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
