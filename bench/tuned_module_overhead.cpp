// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// What TunedModule::forward costs on top of calling the selected backend directly.
//
// A tiny model (one add on 8 floats: a few microseconds of TorchScript dispatch) makes the
// wrapper's cost visible. Direct calls and tuned-module calls alternate in blocks, in a
// shuffled order, so drift lands on both; each block gives a per-call time, and the paired
// per-round difference (tuned - direct) is summarised by its median and a 95 % interval.
#include "bench_common.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

double per_call_us(int calls, auto&& call) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i)
    call();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(stop - start).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  const std::string json_path = argc > 1 ? argv[1] : "tuned_module_overhead.json";
  constexpr int rounds = 200;
  constexpr int calls_per_block = 200;

  torch::jit::Module module("Tiny");
  module.register_buffer("bias", torch::ones({1, 8}));
  module.define("def forward(self, x):\n    return x + self.bias\n");
  const lt::Model model{module, c10::Device(c10::kCPU)};
  const std::vector<lt::Sample> samples{lt::Sample{torch::randn({1, 8})}};
  const auto config = StrategyConfig{}
                          .set_sink(null_sink())
                          .set_profiling(ProfilingConfig{}.set_stop_rule(NumSteps(5, 10)));
  const lt::TunedModule tuned = lt::tune(
      model, samples,
      {.candidates = std::vector<lt::AnyBackend>{lt::TorchScriptFrozen()}, .config = config});
  lt::AnyBackend& direct = tuned.backend();
  const lt::Sample& input = samples.front();

  for (int i = 0; i < 2000; ++i) {  // warm both paths
    (void)direct.infer(input);
    (void)tuned.forward(input);
  }
  std::mt19937 shuffle(42);
  std::vector<double> direct_us;
  std::vector<double> tuned_us;
  std::vector<double> difference_us;
  for (int round = 0; round < rounds; ++round) {
    double d = 0.0;
    double t = 0.0;
    const auto time_direct = [&] {
      d = per_call_us(calls_per_block, [&] { (void)direct.infer(input); });
    };
    const auto time_tuned = [&] {
      t = per_call_us(calls_per_block, [&] { (void)tuned.forward(input); });
    };
    if (shuffle() % 2 == 0) {
      time_direct();
      time_tuned();
    } else {
      time_tuned();
      time_direct();
    }
    direct_us.push_back(d);
    tuned_us.push_back(t);
    difference_us.push_back(t - d);
  }

  const auto direct_stats = LatencyStats::from_samples(direct_us);
  const auto tuned_stats = LatencyStats::from_samples(tuned_us);
  const auto diff = bench::median_with_interval(difference_us);
  fmt::print("TunedModule::forward vs the selected backend's infer ({}), {} rounds x {} calls, "
             "on {}\n",
             tuned.selected(), rounds, calls_per_block, aitune::describe_cpu());
  fmt::print("{:<28}{:>14}{:>14}\n", "per call", "median", "p90");
  fmt::print("{:<28}{:>11.3f} us{:>11.3f} us\n", "backend.infer (direct)", direct_stats.median,
             direct_stats.p90);
  fmt::print("{:<28}{:>11.3f} us{:>11.3f} us\n", "TunedModule::forward", tuned_stats.median,
             tuned_stats.p90);
  fmt::print("overhead per call: median {:.3f} us, 95 % interval [{:.3f}, {:.3f}] us\n",
             diff.median, diff.low, diff.high);

  nlohmann::json json{
      {"benchmark", "tuned_module_overhead"},
      {"machine", bench::machine_json()},
      {"rounds", rounds},
      {"calls_per_block", calls_per_block},
      {"direct_us", {{"median", direct_stats.median}, {"p90", direct_stats.p90}}},
      {"tuned_us", {{"median", tuned_stats.median}, {"p90", tuned_stats.p90}}},
      {"overhead_us", {{"median", diff.median}, {"ci95_low", diff.low}, {"ci95_high", diff.high}}}};
  bench::write_json(json_path, json);
  fmt::print("JSON written to {}\n", json_path);
  return 0;
}
