// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Tunes two toy backends through the public API; exits 0 when the faster one is selected.
#include <aitune/aitune.hpp>

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace {

struct Model {
  std::shared_ptr<aitune::VirtualClock> clock = std::make_shared<aitune::VirtualClock>();
};

class Toy : public aitune::BackendLifecycle<Toy> {
 public:
  using model_type = Model;
  using sample_type = int;
  using output_type = int;

  Toy(std::string name, double latency_ms) : name_(std::move(name)), latency_ms_(latency_ms) {}
  static Toy make_baseline(const Model&) { return Toy("Eager", 5.0); }

  std::string describe() const { return name_ + "()"; }
  std::string key() const { return name_; }
  void do_build(const Model& model, std::span<const int>) { clock_ = model.clock; }
  int do_infer(int x) {
    clock_->advance(latency_ms_);
    return x * 2;
  }

 private:
  std::string name_;
  double latency_ms_;
  std::shared_ptr<aitune::VirtualClock> clock_;
};

}  // namespace

int main() {
  Model model;
  aitune::MinLatencyStrategy<Toy, aitune::VirtualTimer> strategy(
      {Toy("Slow", 7.0), Toy("Fast", 2.0)}, aitune::StrategyConfig{}.set_sink(aitune::null_sink()),
      aitune::VirtualTimer(model.clock));
  const std::vector<int> samples{1};
  const auto result = strategy.tune(model, samples, "toy");
  std::printf("%s", aitune::render_table(result.report).c_str());
  return result.report.selected == "Fast()" ? 0 : 1;
}
