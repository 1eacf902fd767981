// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// An owning CUDA event with timing enabled (RAII, move-only).

#include "aitune/cuda/cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <utility>

namespace aitune {

class CudaEvent {
 public:
  /// Creates an event that records time (cudaEventDefault; LibTorch's CUDAEvent defaults to
  /// cudaEventDisableTiming, which cannot be timed).
  CudaEvent() { AITUNE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDefault)); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&& other) noexcept {
    if (this != &other) {
      reset();
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }
  ~CudaEvent() { reset(); }

  void record(cudaStream_t stream) { AITUNE_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() { AITUNE_CUDA_CHECK(cudaEventSynchronize(event_)); }

  /// Milliseconds between two recorded, completed events.
  [[nodiscard]] static float elapsed_ms(const CudaEvent& start, const CudaEvent& stop) {
    float ms = 0.0F;
    AITUNE_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, stop.event_));
    return ms;
  }

  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }

 private:
  void reset() noexcept {
    if (event_ != nullptr) AITUNE_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
    event_ = nullptr;
  }

  cudaEvent_t event_ = nullptr;
};

}  // namespace aitune
