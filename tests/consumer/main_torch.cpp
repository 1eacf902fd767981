// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Uses the LibTorch layer as a consumer would: tunes a small TorchScript module on the CPU and
// checks the settings aitune::torch carried. Every name comes through lt::, as the README's
// server does. Exits 0 on success.
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <vector>

namespace lt = aitune::lt;

int main() {
  static_assert(AITUNE_WITH_CUDA == EXPECT_CUDA,
                "aitune::torch sets AITUNE_WITH_CUDA from LibTorch");
  static_assert(AITUNE_WITH_OPENVINO == EXPECT_OPENVINO,
                "aitune::torch links OpenVINO where the consumer's configure found it");
  static_assert(
      AITUNE_WITH_ONNXRUNTIME == EXPECT_ONNXRUNTIME,
      "aitune::torch brings ONNX Runtime's header where the consumer's configure found it");
  // The library CMake found loads, and says its version.
  if (lt::OnnxRuntime::available() && lt::OnnxRuntime::version().empty()) {
    std::puts("ONNX Runtime's library did not load");
    return 1;
  }
  if (lt::OpenVino::available() && lt::OpenVino::version().empty()) return 1;
  torch::jit::Module module("Net");
  module.register_parameter("w", torch::randn({16, 16}), false);
  module.define("def forward(self, x):\n    return torch.relu(torch.matmul(x, self.w))\n");
  const lt::Model model{module, c10::Device(c10::kCPU), std::nullopt};
  const std::vector<lt::Sample> samples{lt::Sample{torch::randn({1, 16})}};
  const auto config = lt::StrategyConfig{}
                          .set_sink(lt::null_sink())
                          .set_profiling(lt::ProfilingConfig{}.set_time_budget_ms(5'000))
                          .set_module_name("net");
  const lt::TunedModule tuned = lt::tune(
      model, samples,
      {.candidates = std::vector<lt::AnyBackend>{lt::TorchScriptFrozen()}, .config = config});
  // fmt from the same headers LibTorch uses, linked without a mismatched fmt library.
  const std::string line =
      fmt::format("selected {} on LibTorch {}", tuned.selected(), lt::libtorch_version());
  std::puts(line.c_str());
  return tuned.forward(samples[0]).toTensor().sizes() == at::IntArrayRef{1, 16} ? 0 : 1;
}
