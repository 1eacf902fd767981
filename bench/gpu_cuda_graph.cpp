// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// How much a CUDA graph gains on a launch-bound model at batch size 1, on the GPU it runs on.
//
// The model is 100 tiny elementwise kernels: at batch size 1 the launches, not the math, take
// the time, which is what a CUDA graph removes. Each run is one tuning with the frozen module
// and its CUDA graph as candidates (the race measures them with the TorchEager baseline,
// interleaved); the table shows each run's paired ratio to the baseline with its interval, and
// the median speedup over the runs. This is where the speed claim of the [gpu] tests lives:
// tests check behaviour, benchmarks report speed.
//
//   aitune-bench-gpu-cuda-graph [runs] [json path]
#include "bench_common.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#if AITUNE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

int main(int argc, char** argv) {
  using namespace aitune;
  const int runs = argc > 1 ? std::stoi(argv[1]) : 5;
  const std::string json_path = argc > 2 ? argv[2] : "gpu_cuda_graph.json";
#if AITUNE_WITH_CUDA
  if (!torch::cuda::is_available()) {
    std::puts("no CUDA device: nothing to measure (this benchmark needs a GPU)");
    return 0;
  }
  torch::jit::Module module("LaunchBound");
  module.register_buffer("bias", torch::full({1, 64}, 0.001));
  module.define(R"(
    def forward(self, x):
        for _ in range(100):
            x = x * 0.999 + self.bias
        return x
  )");
  const lt::Model model{module, c10::Device(c10::kCUDA, 0)};
  const std::vector<lt::Sample> samples{lt::Sample{torch::randn({1, 64})}};

  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> speedups;
  fmt::print("{:<5}{:<34}{:>14}{:>30}{:>10}\n", "run", "selected", "graph median",
             "graph / baseline [CI]", "speedup");
  for (int run = 0; run < runs; ++run) {
    const auto config = StrategyConfig{}
                            .set_sink(null_sink())
                            .set_profiling(ProfilingConfig{}.set_race(
                                RaceConfig{}.set_seed(static_cast<std::uint64_t>(run) + 1)));
    MinLatencyStrategy<lt::AnyBackend> strategy(
        {lt::TorchScriptFrozen(), lt::CudaGraph(lt::TorchScriptFrozen())}, config);
    const TuneResult<lt::AnyBackend> result = strategy.tune(model, samples, "launch_bound");
    const CandidateReport& graph = result.report.candidates.at(1);
    const std::string ratio = graph.vs_baseline
                                  ? format_ratio(graph.vs_baseline->ratio, graph.vs_baseline->low,
                                                 graph.vs_baseline->high)
                                  : std::string("-");
    if (graph.speedup) speedups.push_back(*graph.speedup);
    fmt::print("{:<5}{:<34}{:>14}{:>30}{:>10}\n", run + 1, result.report.selected,
               graph.latency ? format_ms(graph.latency->median) : std::string("-"), ratio,
               graph.speedup ? format_speedup(*graph.speedup) : std::string("-"));
    rows.push_back({{"run", run + 1}, {"report", to_json(result.report)}});
  }
  nlohmann::json summary = nullptr;
  if (!speedups.empty()) {
    const bench::MedianWithInterval s = bench::median_with_interval(speedups);
    fmt::print("median speedup of the CUDA graph over the baseline: {:.2f}x [{:.2f}, {:.2f}] over "
               "{} run(s)\n",
               s.median, s.low, s.high, speedups.size());
    summary = {{"median", s.median}, {"low", s.low}, {"high", s.high}, {"runs", speedups.size()}};
  }
  bench::write_json(json_path, {{"benchmark", "gpu_cuda_graph"},
                                {"machine", bench::machine_json()},
                                {"gpu", at::cuda::getDeviceProperties(0)->name},
                                {"runs", rows},
                                {"speedup", summary}});
  fmt::print("wrote {}\n", json_path);
#else
  (void)runs;
  (void)json_path;
  std::puts("built without CUDA: nothing to measure (this benchmark needs a GPU)");
#endif
  return 0;
}
