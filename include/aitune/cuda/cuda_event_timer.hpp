// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// CudaEventTimer: times one call with CUDA events on a stream, and on the host.
///
/// The stream is synchronised first, so every timing starts from an idle stream; an event is
/// recorded before and after the call on that stream; after synchronising on the second event
/// their elapsed time is the device time. Starting idle means the device time includes the
/// gaps left by slow kernel launches - at batch size 1 the cost CUDA graphs remove - and no
/// blocking kernel hides them. The host time of the same call (steady_clock, from before the
/// call to after the synchronisation) is kept too.

#include "aitune/core/measure/timer.hpp"
#include "aitune/cuda/cuda_check.hpp"
#include "aitune/cuda/cuda_event.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <optional>
#include <utility>

namespace aitune {

class CudaEventTimer {
 public:
  /// `stream` gives the stream the timed calls run on (for LibTorch: the current stream, asked
  /// anew for each call).
  explicit CudaEventTimer(std::function<cudaStream_t()> stream) : stream_(std::move(stream)) {}

  template <class Call>
  Timing measure(Call&& call) {
    if (!start_) {  // created on first use, on the device current then
      start_.emplace();
      stop_.emplace();
    }
    const cudaStream_t stream = stream_();
    AITUNE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto host_start = std::chrono::steady_clock::now();
    start_->record(stream);
    std::forward<Call>(call)();
    stop_->record(stream);
    stop_->synchronize();
    const auto host_stop = std::chrono::steady_clock::now();
    return Timing{std::chrono::duration<double, std::milli>(host_stop - host_start).count(),
                  static_cast<double>(CudaEvent::elapsed_ms(*start_, *stop_))};
  }

  [[nodiscard]] double now_ms() const { return HostTimer{}.now_ms(); }

 private:
  std::function<cudaStream_t()> stream_;
  std::optional<CudaEvent> start_;
  std::optional<CudaEvent> stop_;
};

static_assert(Timer<CudaEventTimer>);

}  // namespace aitune
