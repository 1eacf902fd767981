// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Tunes simulated backends (log-normal latency on a virtual clock) with MinLatencyStrategy and
// prints the report. It shows the strategy's flow, baseline and report without LibTorch; the
// real-model command is aitune-tune.
#include <aitune/aitune.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {

struct SimulatedModel {
  std::shared_ptr<aitune::VirtualClock> clock = std::make_shared<aitune::VirtualClock>();
  std::shared_ptr<std::mt19937_64> random = std::make_shared<std::mt19937_64>(2026);
};

/// A backend whose calls take `median_ms` times log-normal noise; it may fail to build or
/// return wrong outputs.
class SimulatedBackend : public aitune::BackendLifecycle<SimulatedBackend> {
 public:
  using model_type = SimulatedModel;
  using sample_type = double;
  using output_type = double;

  SimulatedBackend(std::string name, double median_ms, double sigma = 0.05)
      : name_(std::move(name)), median_ms_(median_ms), sigma_(sigma) {}

  static SimulatedBackend make_baseline(const SimulatedModel&) {
    return SimulatedBackend("TorchEager", 10.0);
  }
  static aitune::OutputCheck check_outputs(const SimulatedBackend&, const double* reference,
                                           double actual) {
    if (reference != nullptr && std::abs(*reference - actual) > 1e-6) {
      return aitune::OutputCheck::failed("max abs error " + std::to_string(*reference - actual));
    }
    return aitune::OutputCheck::ok();
  }

  SimulatedBackend&& failing_build() && {
    fails_build_ = true;
    return std::move(*this);
  }
  SimulatedBackend&& wrong() && {
    wrong_ = true;
    return std::move(*this);
  }

  std::string describe() const { return name_ + "()"; }
  std::string key() const { return "simulated:" + name_; }

  void do_build(const SimulatedModel& model, std::span<const double>) {
    if (fails_build_) throw aitune::Error("this simulated backend cannot be built here");
    model_ = &model;
  }
  double do_infer(double x) {
    std::lognormal_distribution<double> noise(0.0, sigma_);
    model_->clock->advance(median_ms_ * noise(*model_->random));
    return wrong_ ? x + 0.25 : 2.0 * x;
  }

 private:
  std::string name_;
  double median_ms_;
  double sigma_;
  bool fails_build_ = false;
  bool wrong_ = false;
  const SimulatedModel* model_ = nullptr;
};

}  // namespace

int main() {
  SimulatedModel model;
  std::vector<SimulatedBackend> candidates;
  candidates.emplace_back("TorchScriptFrozen", 7.5);
  candidates.emplace_back("TorchScriptOptimized", 4.1);
  candidates.push_back(SimulatedBackend("CudaGraph", 1.0).failing_build());
  candidates.push_back(SimulatedBackend("Bf16", 2.0).wrong());

  aitune::MinLatencyStrategy<SimulatedBackend, aitune::VirtualTimer> strategy(
      std::move(candidates), aitune::StrategyConfig{}, aitune::VirtualTimer(model.clock));
  std::printf("%s\n", strategy.describe().c_str());
  const std::vector<double> samples{1.0, 2.0};
  const auto result = strategy.tune(model, samples, "simulated");
  std::printf("\n%s", aitune::render_table(result.report).c_str());
  return 0;
}
