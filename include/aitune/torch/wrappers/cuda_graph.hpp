// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// CudaGraph: replays another backend's work as CUDA graphs, removing the per-kernel launch
/// overhead that dominates batch-size-1 latency on a GPU. Compiled when LibTorch has CUDA
/// (AITUNE_WITH_CUDA).
///
/// At build, for each input signature (shapes, dtypes and scalar values) of the samples, it
/// copies the sample into static input buffers, warms the inner backend up on a side stream
/// (cuBLAS handles, the JIT's profiling runs), then captures one call into a graph in a memory
/// pool of its own. `infer` copies the inputs into the static buffers, replays the graph on the
/// current stream and returns clones of the outputs, so the next replay cannot overwrite them;
/// an event orders replays issued from different streams. Inputs of a signature not captured at
/// build run through the inner backend (capturing while serving could disturb other threads'
/// CUDA work). A model that cannot be captured (it synchronises with the CPU, as `.item()` or
/// `.cpu()` do, or has data-dependent control flow) fails at build with that reason, its partial
/// capture is undone, and the tuning goes on. Inputs are tensors and scalars (int, float, bool,
/// string, None). Replays share static buffers, so calls are serialised (thread_safe() false).

#include "aitune/torch/libtorch.hpp"

#include <exception>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {
namespace detail {

/// Takes a failed CUDA-graph capture back, in an order that is safe whichever way the LibTorch
/// at hand cleans up itself (review G1): end the stream capture, stop routing allocations to
/// the graph's pool, destroy the graph object (from PyTorch's mid-2026 fix on, its destructor
/// releases the pool itself), and only then release the pool, and only if it is still in use:
/// releasing it twice trips an internal assert that terminates the process on some releases.
/// Every step may fail on a broken capture; none may end the tuning, so each failure is
/// swallowed here and the capture's own error is what the caller reports.
template <class EndCapture, class StopRouting, class DestroyGraph, class PoolInUse,
          class ReleasePool>
void undo_failed_capture(EndCapture&& end_capture, StopRouting&& stop_routing,
                         DestroyGraph&& destroy_graph, PoolInUse&& pool_in_use,
                         ReleasePool&& release_pool) noexcept {
  const auto attempt = [](auto&& step) noexcept {
    try {
      step();
    } catch (...) {
    }
  };
  attempt(end_capture);
  attempt(stop_routing);
  attempt(destroy_graph);
  bool in_use = false;
  attempt([&] { in_use = pool_in_use(); });  // an unknown pool (already freed) throws
  if (in_use) attempt(release_pool);
}

}  // namespace detail
}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt

#if AITUNE_WITH_CUDA

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/wrappers/wrapper.hpp"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cuda_runtime_api.h>

#if AITUNE_TORCH_AT_LEAST(2, 11)  // for the host allocator's pool routing (review G2)
#include <ATen/core/CachingHostAllocator.h>
#endif

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class CudaGraph : public WrapperBackend<CudaGraph> {
 public:
  template <class Inner>
  requires(!std::same_as<std::remove_cvref_t<Inner>, CudaGraph> &&
           TorchBackend<Inner>) explicit CudaGraph(Inner inner, int warmup_calls = 3)
      : WrapperBackend(AnyBackend(std::move(inner))), warmup_calls_(warmup_calls) {}

  /// Copies an unbuilt CudaGraph (graphs are never shared).
  CudaGraph(const CudaGraph& other) : WrapperBackend(other), warmup_calls_(other.warmup_calls_) {}
  CudaGraph(CudaGraph&&) noexcept = default;
  CudaGraph& operator=(CudaGraph&&) noexcept = default;
  CudaGraph& operator=(const CudaGraph&) = delete;
  ~CudaGraph() = default;

  [[nodiscard]] std::string describe() const { return "CudaGraph(" + inner_.describe() + ")"; }
  [[nodiscard]] std::string key() const { return "cuda_graph:" + inner_.key(); }
  /// The inner backend's identity, replayed as CUDA graphs.
  [[nodiscard]] BackendIdentity identity() const {
    BackendIdentity identity = inner_.identity();
    identity["cuda_graph"] = std::string("replayed");
    return identity;
  }
  /// Replays share static buffers. (Shapes not captured run through the inner backend, so the
  /// rest follows it: WrapperBackend.)
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return false; }
  /// Graphs captured (one per input signature of the samples).
  [[nodiscard]] std::size_t graphs() const noexcept { return graphs_.size(); }

 private:
  friend class BackendLifecycle<CudaGraph>;

  struct Captured {
    Sample static_inputs;
    c10::IValue static_output;
    std::unique_ptr<at::cuda::CUDAGraph> graph;  // not movable in LibTorch 2.x: held by pointer
  };

  void do_build(const Model& model, std::span<const Sample> samples) {
    if (!model.device.is_cuda()) {
      throw Error(
          fmt::format("CudaGraph needs a CUDA device; the model is on {}", model.device.str()));
    }
    for (const auto& sample : samples) {
      for (const auto& value : sample) {
        if (!(value.isTensor() || value.isInt() || value.isDouble() || value.isBool() ||
              value.isString() || value.isNone())) {
          throw Error(fmt::format("CudaGraph takes tensor and scalar inputs; an input is a {}",
                                  value.tagKind()));
        }
      }
    }
    device_ = model.device;
    samples_.assign(samples.begin(), samples.end());
    inner_.build(model, samples);
    capture_samples();
  }

  c10::IValue do_infer(const Sample& inputs) {
    const auto found = graphs_.find(signature(inputs));
    if (found == graphs_.end()) return inner_.infer(inputs);
    c10::InferenceMode inference_mode;
    const c10::cuda::CUDAGuard device_guard(device_);
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device_.index());
    done_.block(stream);  // a replay issued from another stream must finish with the buffers
    Captured& captured = found->second;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].isTensor()) captured.static_inputs[i].toTensor().copy_(inputs[i].toTensor());
    }
    captured.graph->replay();
    c10::IValue outputs = detach_copy(captured.static_output);
    done_.record(stream);
    return outputs;
  }

  void do_activate() {
    inner_.activate();
    capture_samples();
  }

  void capture_samples() {
    for (const auto& sample : samples_) {
      const std::string key = signature(sample);
      if (graphs_.find(key) == graphs_.end()) graphs_.emplace(key, capture(sample));
    }
  }

  void do_deactivate() {
    // Replays may still run on the GPU, and freeing a graph does not wait for them (review G4).
    if (!graphs_.empty()) {
      const c10::cuda::CUDAGuard device_guard(device_);
      done_.synchronize();
      c10::cuda::getCurrentCUDAStream(device_.index()).synchronize();
    }
    graphs_.clear();
    if (inner_.state() != BackendState::created) inner_.deactivate();
  }

  /// "float[1, 3, 224, 224];long[1, 64];i:3": what one graph is valid for.
  static std::string signature(const Sample& inputs) {
    std::string key;
    for (const auto& value : inputs) {
      if (value.isTensor()) {
        const at::Tensor& tensor = value.toTensor();
        key += fmt::format("{}{};", c10::toString(tensor.scalar_type()),
                           fmt::format("[{}]", fmt::join(tensor.sizes(), ", ")));
      } else {
        key += c10::str(value) + ";";
      }
    }
    return key;
  }

  /// The outputs' tensors cloned, so the next replay cannot overwrite what the caller holds.
  static c10::IValue detach_copy(const c10::IValue& value) {
    return map_tensors(value, [](const at::Tensor& tensor) { return tensor.clone(); });
  }

  Captured capture(const Sample& sample) {
    c10::InferenceMode inference_mode;  // static buffers are inference tensors: write them here
    const c10::cuda::CUDAGuard device_guard(device_);
    Captured captured;
    for (const auto& value : sample) {
      captured.static_inputs.push_back(
          value.isTensor() ? c10::IValue(value.toTensor().to(device_).clone()) : value);
    }
    // The side stream must see everything queued so far on the current one.
    c10::cuda::getCurrentCUDAStream(device_.index()).synchronize();
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, device_.index());
    const c10::cuda::CUDAStreamGuard stream_guard(side);
    try {
      for (int call = 0; call < warmup_calls_; ++call)
        (void)inner_.infer(captured.static_inputs);
      side.synchronize();
    } catch (const std::exception& error) {
      throw Error(
          fmt::format("warming up before capture failed: {}", detail::summarize_error(error)));
    }
    captured.graph = std::make_unique<at::cuda::CUDAGraph>();
    const auto pool = at::cuda::graph_pool_handle();  // this graph's own memory
#if AITUNE_TORCH_AT_LEAST(2, 1)
    // Thread-local mode: other threads of the server may go on using CUDA while we capture
    // (review G3); the capturing thread's own unsafe calls still fail the capture.
    captured.graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
#else
    captured.graph->capture_begin(pool);
#endif
    try {
      captured.static_output = inner_.infer(captured.static_inputs);
      captured.graph->capture_end();
    } catch (const std::exception& error) {
      const std::string cause = detail::summarize_error(error);
      undo_failed_capture(captured.graph, pool);
      throw Error(
          fmt::format("{} cannot be captured as a CUDA graph: {}", inner_.describe(), cause));
    }
    side.synchronize();
    return captured;
  }

  /// Takes a failed capture back (detail::undo_failed_capture says in which order and why), so a
  /// model that cannot be captured leaves no capture registered (which would defer frees
  /// forever), no allocation routing and no memory behind.
  void undo_failed_capture(std::unique_ptr<at::cuda::CUDAGraph>& graph,
                           decltype(at::cuda::graph_pool_handle()) pool) const {
    const c10::DeviceIndex index = device_.index();
    detail::undo_failed_capture(
        [&] {
          try {
            graph->capture_end();  // ends the stream capture; throws "Invalid capture" here
          } catch (...) {
          }
          cudaGraph_t partial = nullptr;
          if (cudaStreamEndCapture(c10::cuda::getCurrentCUDAStream(index).stream(), &partial) ==
                  cudaSuccess &&
              partial != nullptr) {
            (void)cudaGraphDestroy(partial);
          }
          (void)cudaGetLastError();
        },
        [&] {
#if AITUNE_TORCH_AT_LEAST(2, 1)
          try {
            c10::cuda::CUDACachingAllocator::endAllocateToPool(index, pool);
          } catch (...) {  // capture_end already did it
          }
#endif
#if AITUNE_TORCH_AT_LEAST(2, 11)  // capture_begin routes pinned host memory too (review G2)
          at::getHostAllocator(at::kCUDA)->end_allocate_to_pool(pool);
#endif
        },
        [&] { graph.reset(); },
        [&] {
#if AITUNE_TORCH_AT_LEAST(2, 11)
          return c10::cuda::CUDACachingAllocator::getPoolUseCount(index, pool) > 0;
#else  // no use count to ask: before the fix, the graph never released a failed capture's pool
          return AITUNE_TORCH_AT_LEAST(2, 1);
#endif
        },
        [&] {
#if AITUNE_TORCH_AT_LEAST(2, 1)
          c10::cuda::CUDACachingAllocator::releasePool(index, pool);
#endif
        });
    (void)pool;
  }

  int warmup_calls_;
  c10::Device device_ = c10::Device(c10::kCUDA, 0);
  std::vector<Sample> samples_{};
  std::map<std::string, Captured> graphs_{};
  at::cuda::CUDAEvent done_{};  ///< recorded after each replay's outputs are copied
};

static_assert(Backend<CudaGraph>);

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt

#endif  // AITUNE_WITH_CUDA
