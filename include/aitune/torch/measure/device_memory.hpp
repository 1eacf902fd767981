// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The device memory a LibTorch backend takes, for the report (aitune::MemoryUse): the bytes
/// allocated through LibTorch's CUDA caching allocator on the model's GPU, and their peak. Not
/// what the allocator reserves, nor memory a library allocates past it (cuDNN's own
/// workspaces, an AOTInductor model's constants are included only where they come through it).

#include "aitune/core/measure/memory_use.hpp"
#include "aitune/torch/libtorch.hpp"

#include <c10/core/Device.h>

#if AITUNE_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <optional>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The allocated bytes on `device` and their peak since the last reset; nullopt for a device
/// other than a CUDA GPU, or a LibTorch without CUDA.
[[nodiscard]] inline std::optional<DeviceMemoryReading> read_device_memory(c10::Device device) {
#if AITUNE_WITH_CUDA
  if (!device.is_cuda()) return std::nullopt;
  const c10::DeviceIndex index = device.has_index() ? device.index() : c10::cuda::current_device();
  // [0]: the aggregate over the allocator's pools (StatType::AGGREGATE, whose namespace moved
  // between LibTorch versions).
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  return DeviceMemoryReading{stats.allocated_bytes[0].current, stats.allocated_bytes[0].peak};
#else
  (void)device;
  return std::nullopt;
#endif
}

/// Sets the peak statistics of `device` back to what is allocated now (CUDA only).
inline void reset_device_memory_peak(c10::Device device) {
#if AITUNE_WITH_CUDA
  if (!device.is_cuda()) return;
  c10::cuda::CUDACachingAllocator::resetPeakStats(device.has_index() ? device.index()
                                                                     : c10::cuda::current_device());
#else
  (void)device;
#endif
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
