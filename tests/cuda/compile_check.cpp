// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Compiled (syntax only) with AITUNE_WITH_CUDA=1 against a CPU-only LibTorch's CUDA headers, so
// the CUDA code paths are type-checked on machines without a GPU. Never linked or run.
#include <aitune/torch.hpp>

#if !AITUNE_WITH_CUDA
#error "this check must see the CUDA code paths"
#endif

namespace {
[[maybe_unused]] void instantiate_cuda_paths() {
  using namespace aitune::lt;
  CudaGraph graph{TorchScriptFrozen()};
  DeviceTimer timer;
  (void)timer.measure([] {});
  const Model model{torch::jit::Module("Empty"), c10::Device(c10::kCUDA, 0)};
  const std::vector<Sample> samples;
  (void)tune(model, samples, {.candidates = default_candidates(model.device)});
  aitune::MinLatencyStrategy<CudaGraph> only_graphs({graph});
  (void)only_graphs.describe();
}
}  // namespace
