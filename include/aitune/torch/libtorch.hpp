// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// LibTorch includes and feature switches shared by the LibTorch layer (namespace
/// `aitune::lt`, so that it never shadows the global namespace torch).
///
/// AITUNE_WITH_CUDA: 1 when LibTorch was built with CUDA. The CMake project defines it from the
/// `torch_cuda` target; other builds may define it themselves (it defaults to 0).

#include <torch/script.h>
#include <torch/version.h>

#ifndef AITUNE_WITH_CUDA
#define AITUNE_WITH_CUDA 0
#endif

/// AITUNE_WITH_ONNXRUNTIME: 1 when ONNX Runtime's C API header (`onnxruntime_c_api.h`) is on the
/// include path, for the OnnxRuntime backend (the library itself is loaded at run time).
/// AITUNE_WITH_OPENVINO: 1 when OpenVINO (`openvino::runtime`) is linked, for the OpenVino
/// backend. The CMake project defines both from what it finds; they default to 0.
#ifndef AITUNE_WITH_ONNXRUNTIME
#define AITUNE_WITH_ONNXRUNTIME 0
#endif
#ifndef AITUNE_WITH_OPENVINO
#define AITUNE_WITH_OPENVINO 0
#endif

/// The inline namespace inside aitune::lt, named after the settings that change the layer's
/// classes (AITUNE_WITH_CUDA: DeviceTimer holds a CUDA timer, the default candidates differ;
/// AITUNE_WITH_ONNXRUNTIME and AITUNE_WITH_OPENVINO: those backends run or fail). Two translation
/// units built with different settings then name different classes, so a program that mixes
/// them fails to link instead of silently using two layouts of one class.
#if AITUNE_WITH_CUDA
#define AITUNE_LT_ABI_DEVICE abi_cuda
#else
#define AITUNE_LT_ABI_DEVICE abi_cpu
#endif
#if AITUNE_WITH_ONNXRUNTIME
#define AITUNE_LT_ABI_ORT _ort
#else
#define AITUNE_LT_ABI_ORT
#endif
#if AITUNE_WITH_OPENVINO
#define AITUNE_LT_ABI_OV _ov
#else
#define AITUNE_LT_ABI_OV
#endif
#define AITUNE_LT_ABI_JOIN_(device, ort, ov) device##ort##ov
#define AITUNE_LT_ABI_JOIN(device, ort, ov) AITUNE_LT_ABI_JOIN_(device, ort, ov)
#define AITUNE_LT_ABI AITUNE_LT_ABI_JOIN(AITUNE_LT_ABI_DEVICE, AITUNE_LT_ABI_ORT, AITUNE_LT_ABI_OV)

/// True when the LibTorch headers are at least version major.minor.
#define AITUNE_TORCH_AT_LEAST(major, minor)                                                        \
  (TORCH_VERSION_MAJOR > (major) ||                                                                \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

/// 1 where LibTorch has its native runtime (torch::nativert::ModelRunnerHandle), which runs the
/// ExportedProgram of a `.pt2` archive: in the PyPI wheels of 2.9 to 2.11. From 2.12 on the
/// wheels still ship its header but export none of its symbols (checked in 2.12, 2.13, 2.14 and
/// 2.15: a program that calls it does not link), and Python's `torch._C._nativert` is a stub.
/// Without it a `.pt2` model's baseline is its first fp32 AOTInductor model (tune/baseline.hpp).
/// A LibTorch built from source with it may define this to 1.
#ifndef AITUNE_TORCH_HAS_NATIVE_RUNTIME
#define AITUNE_TORCH_HAS_NATIVE_RUNTIME                                                            \
  (AITUNE_TORCH_AT_LEAST(2, 9) && !AITUNE_TORCH_AT_LEAST(2, 12))
#endif

#include <string>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {
/// The LibTorch these headers belong to, e.g. "2.11.0" (reports name it).
[[nodiscard]] inline std::string libtorch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}
}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
