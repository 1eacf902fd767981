// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The README's server: load, take the tuned backend from the cache (tune once on a miss), serve.
//   minimal-server MODEL.pt2|MODEL.pt CACHE.json INPUT_SHAPE [TIME_BUDGET_S]
#include <aitune/torch.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace lt = aitune::lt;

int main(int argc, char** argv) try {
  if (argc < 4) {
    std::fputs("usage: minimal-server MODEL CACHE.json 1x3x224x224 [TIME_BUDGET_S]\n", stderr);
    return 2;
  }
  const lt::Model model = lt::load_model(argv[1], lt::parse_device("cpu"));
  // Fixed inputs (seed 0): with a key (AITUNE_CACHE_KEY_FILE) a cache hit checks its choice
  // against the outputs stored with the decision, without building the baseline.
  const std::vector<lt::Sample> samples{
      lt::make_random_sample({lt::parse_input_spec(argv[3])}, model.device, /*seed=*/0)};
  const lt::TuningCache cache(argv[2]);  // a hit is rebuilt and checked, never measured again
  const double budget_ms = argc > 4 ? std::stod(argv[4]) * 1000.0 : lt::default_time_budget_ms;
  const auto config =
      lt::StrategyConfig{}.set_profiling(lt::ProfilingConfig{}.set_time_budget_ms(budget_ms));
  const lt::TunedModule tuned = lt::tune(model, samples, {.config = config, .cache = &cache});
  std::puts(lt::render_table(tuned.report()).c_str());

  std::vector<std::thread> workers;  // forward() may be called from many threads at once
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&] {
      for (int i = 0; i < 25; ++i)
        (void)tuned.forward(samples[0]);
    });
  for (std::thread& worker : workers)
    worker.join();
  std::printf("served 100 requests with %s\n", tuned.selected().c_str());
  return 0;
} catch (const std::exception& error) {  // lt::Error, and LibTorch's c10::Error
  std::fprintf(stderr, "minimal-server: %s\n", error.what());
  return 1;
}
