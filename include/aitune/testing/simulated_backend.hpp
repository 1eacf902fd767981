// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Simulated backends on a virtual clock, with latency noise like a real machine's: a
/// log-normal body, rare spikes of several times the median, slow drift shared by every
/// backend, a penalty on the first call after another backend ran (evicted caches), and slow
/// first calls (JIT profiling). They let a strategy be exercised thousands of times in seconds:
/// the selection-quality benchmark, the strategy tests and the simulated example use them.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/timer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune {

/// How long one simulated backend's calls take.
struct LatencyModel {
  double median_ms = 1.0;
  double sigma = 0.0;              ///< log-normal body: sd of log(latency / median)
  double spike_probability = 0.0;  ///< chance that a call is a spike
  double spike_factor_min = 1.5;   ///< spikes take median x a factor, log-uniform in [min, max]
  double spike_factor_max = 4.0;
  double switch_penalty = 0.0;           ///< extra fraction on the first call after another backend
  std::vector<double> warmup_factors{};  ///< multipliers of the first calls (JIT, cold caches)
  bool cost_scales_with_sample = false;  ///< a call on sample x takes x times as long
  /// The switch penalty lasts this long: every call begun within it pays it, not only the first
  /// (the previous backend's thread pool still spinning).
  double switch_window_ms = 0.0;
  /// Or the penalty fades: a call begun t ms after the switch pays switch_penalty x
  /// exp(-t / switch_decay_ms), as another runtime's threads give the cores back gradually.
  double switch_decay_ms = 0.0;

  /// The same noise around another median.
  [[nodiscard]] LatencyModel with_median(double ms) const {
    LatencyModel copy = *this;
    copy.median_ms = ms;
    return copy;
  }
};

/// Slow machine-wide drift: (1 + amplitude sin(2 pi t / period + phase)) (1 + trend t).
struct Drift {
  double amplitude = 0.0;
  double period_ms = 60'000.0;
  double phase = 0.0;
  double trend_per_s = 0.0;

  [[nodiscard]] double factor(double now_ms) const {
    return (1.0 + amplitude * std::sin(2.0 * std::numbers::pi * now_ms / period_ms + phase)) *
           (1.0 + trend_per_s * now_ms / 1000.0);
  }
};

/// The "model" simulated backends are built from: the machine they run on.
struct SimulatedMachine {
  std::shared_ptr<VirtualClock> clock = std::make_shared<VirtualClock>();
  std::shared_ptr<std::mt19937_64> random = std::make_shared<std::mt19937_64>(1);
  Drift drift{};
  /// Which backend called last (for the switch penalty), shared by all of them.
  std::shared_ptr<std::uint64_t> last_caller = std::make_shared<std::uint64_t>(0);
  /// When the last caller took over (for the switch window).
  std::shared_ptr<double> switched_at_ms = std::make_shared<double>(0.0);
  /// How the baseline (make_baseline) behaves.
  std::string baseline_name = "TorchEager";
  LatencyModel baseline{};

  explicit SimulatedMachine(std::uint64_t seed = 1)
      : random(std::make_shared<std::mt19937_64>(seed)) {}
};

class SimulatedBackend : public BackendLifecycle<SimulatedBackend> {
 public:
  using model_type = SimulatedMachine;
  using sample_type = double;
  using output_type = double;

  SimulatedBackend(std::string name, LatencyModel latency)
      : name_(std::move(name)), latency_(std::move(latency)) {}

  [[nodiscard]] static SimulatedBackend make_baseline(const SimulatedMachine& machine) {
    return SimulatedBackend(machine.baseline_name, machine.baseline);
  }

  [[nodiscard]] static OutputCheck check_outputs(const SimulatedBackend&, const double* reference,
                                                 double actual) {
    if (!std::isfinite(actual)) return OutputCheck::failed("output is not finite");
    if (reference != nullptr && std::abs(*reference - actual) > 1e-9) {
      return OutputCheck::failed(
          fmt::format("max abs error {:.3g}", std::abs(*reference - actual)));
    }
    return OutputCheck::ok();
  }

  /// This backend cannot be built: build throws `why`.
  SimulatedBackend& fail_build(std::string why) {
    build_failure_ = std::move(why);
    return *this;
  }
  /// This backend's outputs are off by `offset`.
  SimulatedBackend& wrong_outputs(double offset) {
    output_offset_ = offset;
    return *this;
  }

  [[nodiscard]] std::string describe() const { return name_ + "()"; }
  [[nodiscard]] std::string key() const { return "simulated:" + name_; }
  [[nodiscard]] const LatencyModel& latency() const noexcept { return latency_; }
  [[nodiscard]] std::uint64_t calls() const noexcept { return calls_; }

 private:
  friend class BackendLifecycle<SimulatedBackend>;

  void do_build(const SimulatedMachine& machine, std::span<const double>) {
    if (!build_failure_.empty()) throw Error(build_failure_);
    clock_ = machine.clock;
    random_ = machine.random;
    last_caller_ = machine.last_caller;
    switched_at_ms_ = machine.switched_at_ms;
    drift_ = machine.drift;
    static std::atomic<std::uint64_t> next_id{1};
    id_ = next_id++;
  }

  double do_infer(double x) {
    std::mt19937_64& random = *random_;
    const double now_ms = clock_->now_ms();
    double factor = drift_.factor(now_ms);
    if (latency_.sigma > 0.0) factor *= std::exp(latency_.sigma * normal_(random));
    if (latency_.spike_probability > 0.0 && uniform_(random) < latency_.spike_probability) {
      const double log_min = std::log(latency_.spike_factor_min);
      const double log_max = std::log(latency_.spike_factor_max);
      factor *= std::exp(log_min + (log_max - log_min) * uniform_(random));
    }
    if (*last_caller_ != id_) *switched_at_ms_ = now_ms;
    const double since_switch_ms = now_ms - *switched_at_ms_;
    if (latency_.switch_decay_ms > 0.0) {
      factor *=
          1.0 + latency_.switch_penalty * std::exp(-since_switch_ms / latency_.switch_decay_ms);
    } else if (*last_caller_ != id_ || since_switch_ms < latency_.switch_window_ms) {
      factor *= 1.0 + latency_.switch_penalty;
    }
    if (calls_ < latency_.warmup_factors.size()) factor *= latency_.warmup_factors[calls_];
    if (latency_.cost_scales_with_sample) factor *= x;
    *last_caller_ = id_;
    ++calls_;
    clock_->advance(latency_.median_ms * factor);
    return 2.0 * x + output_offset_;
  }

  std::string name_;
  LatencyModel latency_;
  std::string build_failure_{};
  double output_offset_ = 0.0;
  std::shared_ptr<VirtualClock> clock_;
  std::shared_ptr<std::mt19937_64> random_;
  std::shared_ptr<std::uint64_t> last_caller_;
  std::shared_ptr<double> switched_at_ms_;
  Drift drift_{};
  std::uint64_t id_ = 0;
  std::uint64_t calls_ = 0;
  std::normal_distribution<double> normal_{0.0, 1.0};
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
};

static_assert(Backend<SimulatedBackend>);

}  // namespace aitune
