// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The third-party headers that the LibTorch layer (include/aitune/torch/) includes, precompiled
// once for this project's own tests, examples and benchmarks (cmake/AituneTorch.cmake).
//
// Only theirs, never ours: CMake marks a precompiled header as a system header, and GCC extends
// that to everything it includes, which would silence the warnings in our headers. A header
// missing here is parsed as usual, only slower. The conditions mirror those of our headers.

#include <ATen/Context.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceGuard.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#define AITUNE_PCH_TORCH_AT_LEAST(major, minor)                                                    \
  (TORCH_VERSION_MAJOR > (major) ||                                                                \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
#if AITUNE_PCH_TORCH_AT_LEAST(2, 6) &&                                                             \
    __has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif
#if AITUNE_PCH_TORCH_AT_LEAST(2, 9) && __has_include(<torch/nativert/ModelRunnerHandle.h>)
#include <torch/nativert/ModelRunnerHandle.h>
#endif

#if AITUNE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cuda_runtime_api.h>
#if AITUNE_PCH_TORCH_AT_LEAST(2, 11)
#include <ATen/core/CachingHostAllocator.h>
#endif
#endif
#undef AITUNE_PCH_TORCH_AT_LEAST

// The runtimes' headers (aitune/torch/backends/openvino.hpp, backends/onnx_runtime.hpp): OpenVINO's
// alone is some 2 s of parsing in each LibTorch translation unit.
#if AITUNE_WITH_OPENVINO
#include <openvino/openvino.hpp>
#endif
#if AITUNE_WITH_ONNXRUNTIME
#include <onnxruntime_c_api.h>
#endif

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
