// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Tunes simulated backends (aitune::SimulatedBackend: log-normal noise, spikes, drift, on a
// virtual clock) with MinLatencyStrategy and prints the report. It shows the strategy's flow,
// baseline, race and report without LibTorch; the real-model command is aitune-tune.
#include <aitune/aitune.hpp>
#include <aitune/testing/simulated_backend.hpp>

#include <cstdio>
#include <utility>
#include <vector>

int main() {
  aitune::SimulatedMachine machine(2026);
  machine.drift = aitune::Drift{0.10, 20'000.0, 0.0, 0.0};
  const aitune::LatencyModel noise{1.0, 0.10, 0.02, 1.5, 4.0, 0.05, {3.0, 1.5}};
  machine.baseline = noise.with_median(10.0);

  std::vector<aitune::SimulatedBackend> candidates{
      aitune::SimulatedBackend("TorchScriptFrozen", noise.with_median(9.9)),
      aitune::SimulatedBackend("TorchScriptOptimized", noise.with_median(4.1)),
      aitune::SimulatedBackend("ChannelsLast", noise.with_median(4.2)),
      aitune::SimulatedBackend("CudaGraph", noise.with_median(1.0))
          .fail_build("this simulated backend cannot be built here"),
      aitune::SimulatedBackend("Bf16", noise.with_median(2.0)).wrong_outputs(0.25)};

  aitune::MinLatencyStrategy<aitune::SimulatedBackend, aitune::VirtualTimer> strategy(
      std::move(candidates), aitune::StrategyConfig{}, aitune::VirtualTimer(machine.clock));
  std::printf("%s\n", strategy.describe().c_str());
  const std::vector<double> samples{1.0, 2.0};
  const auto result = strategy.tune(machine, samples, "simulated");
  std::printf("\n%s", aitune::render_table(result.report).c_str());
  return 0;
}
