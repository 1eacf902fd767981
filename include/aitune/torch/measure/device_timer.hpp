// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// DeviceTimer: the timer LibTorch strategies use by default (aitune::default_timer,
/// customization.hpp). The strategy calls `prepare` with the model before measuring; on a CUDA
/// device every call is then timed with CUDA events on the current stream of that device
/// (CudaEventTimer), elsewhere with the host clock. Compiled without CUDA it is the host timer.

#include "aitune/core/error.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

#if AITUNE_WITH_CUDA
#include "aitune/cuda/cuda_event_timer.hpp"

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

namespace detail {
/// A CUDA model needs CUDA-event timing: the host clock would time kernel launches, not the
/// kernels (they run asynchronously). A build without it (AITUNE_WITH_CUDA=0 while LibTorch has
/// CUDA, e.g. a project that links LibTorch but not aitune::torch) refuses such a model.
inline void require_device_clock(c10::Device device, bool cuda_timing_compiled) {
  if (device.is_cuda() && !cuda_timing_compiled) {
    throw ConfigError(fmt::format(
        "the model is on {}, but this build of aitune has no CUDA timing (AITUNE_WITH_CUDA=0), "
        "so it would time kernel launches on the host clock instead of the kernels: link the "
        "aitune::torch target (find_package(aitune COMPONENTS torch)), which defines "
        "AITUNE_WITH_CUDA=1 for a CUDA LibTorch",
        device.str()));
  }
}
}  // namespace detail

class DeviceTimer {
 public:
  /// Chooses the clock for `model`'s device; refuses a CUDA model without CUDA timing.
  void prepare(const Model& model) {
    detail::require_device_clock(model.device, AITUNE_WITH_CUDA != 0);
    if (model.device != device_) {
      device_ = model.device;
#if AITUNE_WITH_CUDA
      cuda_.reset();
#endif
    }
  }

  [[nodiscard]] bool uses_cuda_events() const noexcept {
    return AITUNE_WITH_CUDA && device_.is_cuda();
  }

  template <class Call>
  Timing measure(Call&& call) {
#if AITUNE_WITH_CUDA
    if (device_.is_cuda()) {
      const c10::cuda::CUDAGuard guard(device_);
      if (!cuda_) {
        cuda_.emplace(
            [index = device_.index()] { return c10::cuda::getCurrentCUDAStream(index).stream(); });
      }
      return cuda_->measure(std::forward<Call>(call));
    }
#endif
    return host_.measure(std::forward<Call>(call));
  }

  [[nodiscard]] double now_ms() const {
    return host_.now_ms();
  }

 private:
  c10::Device device_ = c10::Device(c10::kCPU);
  HostTimer host_;
#if AITUNE_WITH_CUDA
  std::optional<CudaEventTimer> cuda_;
#endif
};

static_assert(Timer<DeviceTimer>);

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
