// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// BackgroundTunedModule: the baseline serves at once, the tuning's choice takes over when it
// ends; cancelled or failed, the baseline goes on serving.
#include "support/cache_files.hpp"
#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace aitune;
using namespace aitune::lt;
using namespace aitune::testing;

namespace {

/// Holds the tuning at its first progress report until release(): the test then knows the
/// tuning is still running while it looks.
struct Gate {
  std::promise<void> opened;
  std::shared_future<void> open = opened.get_future().share();
  std::atomic<bool> reached{false};

  StrategyConfig config() {
    return StrategyConfig{}
        .set_profiling(ProfilingConfig{}.set_time_budget_ms(500.0))
        .set_sink(null_sink())
        .set_progress([this](const Progress&) {
          reached = true;
          open.wait();
        });
  }
  void wait_until_reached() const {
    while (!reached)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void release() { opened.set_value(); }
};

std::vector<AnyBackend> two_candidates() {
  return {AnyBackend(TorchScriptFrozen()), AnyBackend(TorchScriptOptimized())};
}

/// The model every test serves, its one sample, and the output that sample must give.
struct ConvNetCase {
  Model model{make_conv_net()};
  std::vector<Sample> samples = one_image(16);
  at::Tensor expected = make_conv_net().forward(samples[0]).toTensor();

  [[nodiscard]] bool matches(const c10::IValue& output) const {
    return torch::allclose(output.toTensor(), expected, 1e-4, 1e-4);
  }
};

}  // namespace

TEST_CASE("A background-tuned module serves the baseline at once, then the tuning's choice",
          "[background][tune]") {
  const ConvNetCase net;
  Gate gate;
  BackgroundTunedModule module(net.model, net.samples,
                               {.candidates = two_candidates(), .config = gate.config()});
  gate.wait_until_reached();

  const std::shared_ptr<const TunedModule> first = module.current();
  CHECK(module.state() == BackgroundTunedModule::State::tuning);
  CHECK(first->baseline_selected());
  CHECK(first->selected() == "TorchEager()");
  CHECK(first->report().decision == "the baseline serves while the tuning runs");
  CHECK(net.matches(module.forward(net.samples[0])));

  gate.release();
  REQUIRE(module.wait() == BackgroundTunedModule::State::tuned);
  CHECK(module.failure().empty());
  const std::shared_ptr<const TunedModule> tuned = module.current();
  CHECK(tuned != first);
  CHECK(tuned->report().measurement.calls > 0);  // measured, not the placeholder report
  CHECK(tuned->report().strategy == "Min Latency Strategy");
  CHECK(net.matches(module.forward(net.samples[0])));
  CHECK(net.matches(first->forward(net.samples[0])));  // a holder keeps the old one alive
}

TEST_CASE("Requests from several threads go on while the background tuning switches",
          "[background][tune][concurrency]") {
  const ConvNetCase net;
  Gate gate;
  BackgroundTunedModule module(net.model, net.samples,
                               {.candidates = two_candidates(), .config = gate.config()});
  std::atomic<int> served{0};
  std::atomic<int> wrong{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> clients;
  for (int t = 0; t < 2; ++t) {
    clients.emplace_back([&] {
      while (!done) {
        if (!net.matches(module.forward(net.samples[0]))) ++wrong;
        ++served;
      }
    });
  }
  gate.wait_until_reached();
  gate.release();
  const auto state = module.wait();
  const int at_switch = served.load();
  while (served < at_switch + 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  done = true;
  for (auto& client : clients)
    client.join();
  CHECK(state == BackgroundTunedModule::State::tuned);
  CHECK(wrong == 0);
  CHECK(served >= at_switch + 10);
}

TEST_CASE("A cancelled background tuning leaves the baseline serving",
          "[background][tune][concurrency]") {
  const ConvNetCase net;
  Gate gate;
  BackgroundTunedModule module(net.model, net.samples,
                               {.candidates = two_candidates(), .config = gate.config()});
  gate.wait_until_reached();
  module.cancel();
  gate.release();
  CHECK(module.wait() == BackgroundTunedModule::State::cancelled);
  CHECK_THAT(module.failure(), Catch::Matchers::Contains("cancel"));
  CHECK(module.current()->baseline_selected());
  CHECK(module.current()->report().decision == "the baseline serves while the tuning runs");
  CHECK(module.forward(net.samples[0]).isTensor());
}

TEST_CASE("A background tuning that fails says why and leaves the baseline serving",
          "[background][tune]") {
  const ConvNetCase net;
  // Without performance validation a tuning whose every candidate fails throws.
  const auto config = StrategyConfig{}
                          .enable_performance_validation(false)
                          .set_sink(null_sink())
                          .set_module_name("net");
  BackgroundTunedModule module(
      net.model, net.samples,
      {.candidates = std::vector<AnyBackend>{PerturbedOutputs(TorchEager())}, .config = config});
  CHECK(module.wait_for(std::chrono::seconds(60)) == BackgroundTunedModule::State::failed);
  CHECK_THAT(module.failure(), Catch::Matchers::Contains("net"));
  CHECK(module.current()->baseline_selected());
  CHECK(module.forward(net.samples[0]).isTensor());
}

TEST_CASE("A model that cannot take the samples fails at once, before anything is served",
          "[background][tune]") {
  const Model model{make_conv_net()};
  CHECK_THROWS(BackgroundTunedModule(
      model, {Sample{torch::ones({1, 2})}},
      {.candidates = two_candidates(), .config = StrategyConfig{}.set_sink(null_sink())}));
}

TEST_CASE("A background tuning works on its own copy of the cache: the caller's may go first",
          "[background][tune][cache]") {
  const ConvNetCase net;
  // A file, no folder: the wheel's libtorch.so exports an older std::filesystem whose
  // remove_all crashes (test_tuning_key.cpp).
  const auto file = std::filesystem::temp_directory_path() /
                    ("aitune_background_cache_" + std::to_string(::getpid()) + ".json");
  testing::remove_cache_files(file);
  Gate gate;
  std::optional<BackgroundTunedModule> module;
  {
    // A cache local to a block that ends before the tuning does (as a refactored start-up
    // might): the module's worker must not read it after this.
    TuningCache cache(file);
    module.emplace(
        net.model, net.samples,
        TuneOptions{.candidates = two_candidates(), .config = gate.config(), .cache = &cache});
    gate.wait_until_reached();
  }
  gate.release();
  REQUIRE(module->wait() == BackgroundTunedModule::State::tuned);
  const TuningCache reopened(file);
  const nlohmann::json key =
      tuning_key(net.model, net.samples, two_candidates(), gate.config(), reopened);
  CHECK(reopened.find(key, Logger(null_sink())).has_value());  // the decision was stored
  module.reset();
  testing::remove_cache_files(file);
}
