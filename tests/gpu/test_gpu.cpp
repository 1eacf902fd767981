// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// GPU tests, tagged [gpu] (ctest label gpu). Built everywhere; where LibTorch has no CUDA or no
// device is visible, each passes with a message saying it was skipped - unless the environment
// sets AITUNE_REQUIRE_GPU=1 (the GPU check does), where a skip is a failure: a GPU check whose
// every test skipped must not go green.
#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace aitune;
using namespace aitune::lt;

namespace {

/// Why a GPU test cannot run here, or empty when it can.
std::string gpu_unavailable() {
  if (!AITUNE_WITH_CUDA) return "this LibTorch was built without CUDA";
  if (!torch::cuda::is_available()) return "no CUDA device is visible";
  return {};
}

bool gpu_required() {
  const char* value = std::getenv("AITUNE_REQUIRE_GPU");
  return value != nullptr && std::string(value) == "1";
}

#define AITUNE_REQUIRE_GPU()                                                                       \
  do {                                                                                             \
    if (const std::string why = gpu_unavailable(); !why.empty()) {                                 \
      if (gpu_required()) FAIL("AITUNE_REQUIRE_GPU=1, but " << why);                               \
      WARN("skipped: " << why);                                                                    \
      return;                                                                                      \
    }                                                                                              \
  } while (false)

StrategyConfig short_race() {
  return StrategyConfig{}
      .set_sink(null_sink())
      .set_profiling(ProfilingConfig{}
                         .set_race(RaceConfig{}.set_looks(10, 1.5, 3))
                         .set_time_budget_ms(60'000));
}

/// Many tiny kernels: at batch size 1 the launches, not the math, take the time.
[[maybe_unused]] torch::jit::Module make_launch_bound_net() {
  torch::jit::Module module("LaunchBound");
  module.register_buffer("bias", torch::full({1, 64}, 0.001));
  module.define(R"(
    def forward(self, x):
        for _ in range(100):
            x = x * 0.999 + self.bias
        return x
  )");
  return module;
}

}  // namespace

TEST_CASE("[gpu] The CUDA event timer agrees with the host clock on a long kernel", "[gpu]") {
  AITUNE_REQUIRE_GPU();
#if AITUNE_WITH_CUDA
  const Model model{make_launch_bound_net(), c10::Device(c10::kCUDA, 0)};
  DeviceTimer timer;
  timer.prepare(model);
  CHECK(timer.uses_cuda_events());
  const at::Tensor a = torch::randn({4096, 4096}, torch::device(torch::kCUDA));
  at::Tensor out;
  (void)timer.measure([&] { out = torch::mm(a, a); });  // warm cuBLAS up
  const Timing timing = timer.measure([&] {
    for (int i = 0; i < 20; ++i)
      out = torch::mm(a, a);
  });
  REQUIRE(timing.device_ms.has_value());
  INFO("device " << *timing.device_ms << " ms, host " << timing.host_ms << " ms");
  CHECK(*timing.device_ms > 1.0);
  // A long GPU-bound call: events and host clock agree within 10 % (plus launch slack).
  CHECK(std::abs(*timing.device_ms - timing.host_ms) <= 0.1 * timing.host_ms + 0.2);
#endif
}

TEST_CASE("[gpu] CUDA graph outputs equal eager outputs", "[gpu]") {
  AITUNE_REQUIRE_GPU();
#if AITUNE_WITH_CUDA
  const Model model{testing::make_conv_net(), c10::Device(c10::kCUDA, 0)};
  const std::vector<Sample> samples{Sample{torch::randn({1, 3, 16, 16})},
                                    Sample{torch::randn({1, 3, 24, 24})}};
  TorchEager eager;
  eager.build(model, samples);
  CudaGraph graph(TorchScriptFrozen{});
  graph.build(model, samples);
  CHECK(graph.graphs() == 2);  // one per input shape
  for (const auto& sample : samples) {
    const c10::IValue expected = eager.infer(sample);
    const c10::IValue first = graph.infer(sample);
    const c10::IValue second = graph.infer(Sample{sample[0].toTensor() * 2});
    CHECK(compare_outputs(&expected, first).passed);
    // The first result is a copy: the second replay did not overwrite it.
    CHECK(compare_outputs(&expected, first).passed);
    CHECK_FALSE(first.toTensor().equal(second.toTensor()));
  }
  // A shape not captured at build runs through the inner backend, with the same results.
  const Sample other{torch::randn({1, 3, 8, 8})};
  const c10::IValue expected_other = eager.infer(other);
  CHECK(compare_outputs(&expected_other, graph.infer(other)).passed);
  CHECK(graph.graphs() == 2);
#endif
}

TEST_CASE("[gpu] The strategy selects a CUDA graph for a launch-bound model", "[gpu]") {
  AITUNE_REQUIRE_GPU();
#if AITUNE_WITH_CUDA
  const Model model{make_launch_bound_net(), c10::Device(c10::kCUDA, 0)};
  const std::vector<Sample> samples{Sample{torch::randn({1, 64})}};
  MinLatencyStrategy<AnyBackend> strategy({TorchScriptFrozen(), CudaGraph(TorchScriptFrozen())},
                                          short_race());
  const auto result = strategy.tune(model, samples, "launch_bound");
  INFO(render_table(result.report));
  // The choice is the behaviour under test; how much faster it is lives in the GPU benchmark
  // (bench/gpu_cuda_graph.cpp).
  CHECK(result.report.selected == "CudaGraph(TorchScriptFrozen())");
#endif
}

TEST_CASE("[gpu] A model that cannot be captured fails at build with the reason", "[gpu]") {
  AITUNE_REQUIRE_GPU();
#if AITUNE_WITH_CUDA
  torch::jit::Module syncs("Syncs");
  syncs.define(R"(
    def forward(self, x):
        if bool(x.sum() > 0.0):
            return x * 2.0
        return x
  )");
  const Model model{syncs, c10::Device(c10::kCUDA, 0)};
  CudaGraph graph(TorchScriptFrozen{});
  CHECK_THROWS_WITH(graph.build(model, std::vector<Sample>{Sample{torch::ones({4})}}),
                    Catch::Contains("cannot be captured as a CUDA graph"));
  // The device still works afterwards.
  CHECK(torch::ones({2}, torch::device(torch::kCUDA)).sum().item<float>() == 2.0F);
#endif
}

TEST_CASE("[gpu] Half-precision candidates run on CUDA and pass their correctness check", "[gpu]") {
  AITUNE_REQUIRE_GPU();
  const Model model{testing::make_conv_net(), c10::Device(c10::kCUDA, 0)};
  const std::vector<Sample> samples{Sample{torch::randn({1, 3, 32, 32})}};
  MinLatencyStrategy<AnyBackend> strategy({TorchScriptFrozen(torch::kHalf),
                                           TorchScriptFrozen(torch::kBFloat16),
                                           ChannelsLast(torch::kHalf)},
                                          short_race());
  const auto result = strategy.tune(model, samples, "conv");
  for (const auto& candidate : result.report.candidates) {
    INFO(candidate.backend << ": " << candidate.reason);
    CHECK(candidate.status == CandidateStatus::ok);
  }
}

TEST_CASE("[gpu] A tuned CUDA-graph module is safe to call from 8 threads", "[gpu]") {
  AITUNE_REQUIRE_GPU();
#if AITUNE_WITH_CUDA
  const Model model{make_launch_bound_net(), c10::Device(c10::kCUDA, 0)};
  const std::vector<Sample> samples{Sample{torch::randn({1, 64}, torch::device(torch::kCUDA))}};
  const TunedModule tuned =
      tune(model, samples,
           {.candidates = std::vector<AnyBackend>{CudaGraph(TorchScriptFrozen())},
            .config = short_race()});
  std::vector<Sample> inputs;
  std::vector<c10::IValue> expected;
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(Sample{torch::randn({1, 64}, torch::device(torch::kCUDA))});
    expected.push_back(tuned.forward(inputs.back()));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < 25; ++call) {
        const int which = (t + call) % 8;
        if (!compare_outputs(&expected[which], tuned.forward(inputs[which])).passed) ++mismatches;
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  CHECK(mismatches == 0);
#endif
}

TEST_CASE("[gpu] Each backend's row has the device memory its build and check took", "[gpu]") {
  AITUNE_REQUIRE_GPU();
#if AITUNE_WITH_CUDA
  const Model model{testing::make_conv_net(), c10::Device(c10::kCUDA, 0)};
  const auto samples = testing::one_image(64);
  MinLatencyStrategy<AnyBackend> strategy({TorchScriptFrozen(), TorchScriptFrozen(torch::kHalf)},
                                          short_race().enable_peak_reset(true));
  const auto report = strategy.tune(model, samples, "conv").report;
  INFO(render_table(report));
  REQUIRE(report.baseline->memory);
  // The baseline's weights move to the GPU: it keeps at least their size there.
  std::int64_t weight_bytes = 0;
  for (const auto& parameter : testing::make_conv_net().parameters())
    weight_bytes += parameter.numel() * static_cast<std::int64_t>(parameter.element_size());
  CHECK(*report.baseline->memory->device_kept_bytes >= weight_bytes);
  for (const CandidateReport& row : report.candidates) {
    REQUIRE(row.memory);
    CHECK(*row.memory->device_peak_bytes > 0);  // one inference's activations at least
    CHECK(*row.memory->device_peak_bytes >= *row.memory->device_kept_bytes);
  }
  CHECK(render_table(report).find("GPU MiB kept/peak") != std::string::npos);
#endif
}
