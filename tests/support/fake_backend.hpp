// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Fake backends for the core tests: each "call" advances a shared VirtualClock by a scripted
// latency, so strategy tests are deterministic and take microseconds.

#include <aitune/all.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::testing {

/// How one fake backend behaves.
struct FakeBehaviour {
  std::string name = "Fake";
  std::vector<double> latencies_ms{1.0};  ///< cycled, one per call
  bool fail_build = false;
  std::optional<std::size_t> throw_on_call{};  ///< 1-based infer call that throws
  double output_offset = 0.0;                  ///< above 1e-9: wrong outputs
  std::string precision{};                     ///< non-empty: it computes in this lower precision
  std::string graph{};  ///< the graph it runs, shared with its other-precision variants
  /// Under an accuracy budget, the cosine similarity its check reports for the output.
  double cosine = 1.0;
  /// A lifecycle call that throws: "describe", "key", "activate" or "deactivate" (empty: none).
  /// It throws an int, not a std::exception: user code may throw anything.
  std::string throw_in{};
  /// Lines put before the message of every exception it throws (as LibTorch puts a traceback);
  /// FakeBackend::summarize_error keeps the last line only.
  std::string error_trace{};
  /// Host memory its build takes: kept while it lives, and only while the build runs. Each
  /// byte is written, so it is resident.
  std::size_t host_kept_bytes = 0;
  std::size_t host_scratch_bytes = 0;
  /// The same on the model's fake device (FakeModel::device), where there is one.
  std::int64_t device_kept_bytes = 0;
  std::int64_t device_scratch_bytes = 0;
  /// Called after each infer call with its 1-based number (say, to request a stop there).
  std::function<void(std::size_t)> after_call{};
  /// Shared by copies: "Name: activate" / "Name: deactivate", in order.
  std::shared_ptr<std::vector<std::string>> events = std::make_shared<std::vector<std::string>>();
  /// What its calls set FakeModel::process_value to, as a LibTorch backend run at its own thread
  /// count sets that count for the whole process; its after_calls() puts back what they found.
  std::optional<int> sets_process_value{};
  /// Set: a call's latency from its sample instead (a sample of 100 or more stands for an input
  /// of a shape: see FakeBackend::shape_of).
  std::function<double(double sample)> latency_of_sample{};
  /// Shared by copies: every sample it was called on, in order.
  std::shared_ptr<std::vector<double>> samples_seen = std::make_shared<std::vector<double>>();
  /// Set: its build refuses that sample (0-based) with a SampleError, as a quantised model
  /// refuses an input it was calibrated on.
  std::optional<std::size_t> refuse_sample{};
};

/// A device's allocator statistics, as the fake backends move them.
struct FakeDevice {
  DeviceMemoryReading memory{};

  void allocate(std::int64_t bytes) {
    memory.allocated_bytes += bytes;
    memory.peak_bytes = std::max(memory.peak_bytes, memory.allocated_bytes);
  }
};

/// The "model": the clock the backends advance and how the baseline behaves.
struct FakeModel {
  std::shared_ptr<VirtualClock> clock = std::make_shared<VirtualClock>();
  std::optional<FakeBehaviour> baseline = FakeBehaviour{"TorchEager", {10.0}};
  std::shared_ptr<FakeDevice> device{};  ///< null: a model on a device with nothing to report
  /// A setting the whole process shares (FakeBehaviour::sets_process_value), and each call's
  /// backend with the value it ran at.
  std::shared_ptr<int> process_value = std::make_shared<int>(0);
  std::shared_ptr<std::vector<std::pair<std::string, int>>> calls_seen =
      std::make_shared<std::vector<std::pair<std::string, int>>>();
};

class FakeBackend : public BackendLifecycle<FakeBackend> {
 public:
  using model_type = FakeModel;
  using sample_type = double;
  using output_type = double;

  explicit FakeBackend(FakeBehaviour behaviour) : behaviour_(std::move(behaviour)) {}
  FakeBackend(std::string name, double latency_ms) : behaviour_{} {
    behaviour_.name = std::move(name);
    behaviour_.latencies_ms = {latency_ms};
  }

  /// The customisation point the strategy uses to obtain the baseline.
  static FakeBackend make_baseline(const FakeModel& model) {
    if (!model.baseline) throw std::runtime_error("this fake model has no baseline");
    if (model.baseline->throw_in == "make_baseline") throw 42;
    return FakeBackend(*model.baseline);
  }

  /// Outputs must equal the reference within 1e-9; the check reports the error as a share of
  /// that, and the candidate's precision.
  static OutputCheck check_outputs(const FakeBackend& candidate, const double* reference,
                                   double actual) {
    OutputCheck verdict;
    if (!std::isfinite(actual)) verdict = OutputCheck::failed("output is not finite");
    if (reference != nullptr && std::isfinite(actual)) {
      const double error = std::abs(*reference - actual);
      verdict.accuracy.push_back(OutputAccuracy{"output", error / 1e-9});
      if (error > 1e-9) {
        verdict.passed = false;
        verdict.reason = fmt::format("max abs error {:.3g}", error);
        verdict.outside_tolerance_only = true;
      }
    }
    const std::string& precision = candidate.behaviour_.precision;
    verdict.precision = precision.empty() ? Precision::fp64 : parse_precision(precision);
    verdict.reduced_precision = !precision.empty();
    return verdict;
  }

  /// The same under an accuracy budget: the output's relative error (|error| / |reference|),
  /// the scripted cosine, and, where the budget counts top-k agreement, agreement while the
  /// relative error stays under 0.5.
  static OutputCheck check_outputs(const FakeBackend& candidate, const double* reference,
                                   double actual, const AccuracyBudget& budget) {
    OutputCheck verdict = check_outputs(candidate, reference, actual);
    if (verdict.accuracy.empty()) return verdict;
    OutputAccuracy& output = verdict.accuracy.front();
    const double relative = std::abs(actual - *reference) / std::max(std::abs(*reference), 1e-300);
    output.relative_error = relative;
    output.cosine = candidate.behaviour_.cosine;
    if (budget.measures_top_k(output.output)) {
      output.top_k_rows = 1;
      output.top_k_agreed = relative < 0.5 ? 1 : 0;
    }
    return verdict;
  }

  /// The customisation point for device memory (aitune::device_memory).
  static std::optional<DeviceMemoryReading> device_memory(const FakeModel& model) {
    if (!model.device) return std::nullopt;
    return model.device->memory;
  }
  static void reset_device_peak(const FakeModel& model) {
    if (model.device) model.device->memory.peak_bytes = model.device->memory.allocated_bytes;
  }

  /// The customisation point for a sample's shape (aitune::sample_shape): samples below 100 are
  /// of one shape, as a model of fixed shapes has; 100 and above stand for inputs of a length,
  /// their hundreds: 130 and 170 are "length 100", 250 "length 200".
  static std::string shape_of(double sample) {
    if (sample < 100.0) return {};
    return fmt::format("length {}", static_cast<int>(sample / 100.0) * 100);
  }

  /// The last line of an error: the customisation point for one-line reasons.
  static std::string summarize_error(const std::exception& error) {
    const std::string_view text = error.what();
    const auto newline = text.rfind('\n');
    return std::string(newline == std::string_view::npos ? text : text.substr(newline + 1));
  }

  /// The customisation point for outputs kept in a tuning cache (aitune::reference_codec): the
  /// samples and outputs as their shortest exact decimal text, comma-separated.
  static std::optional<std::string> digest_samples(std::span<const double> samples) {
    return fmt::format("{}", fmt::join(samples, ","));
  }
  static std::optional<std::string> encode_outputs(const std::vector<double>& outputs) {
    return fmt::format("{}", fmt::join(outputs, ","));
  }
  static std::vector<double> decode_outputs(const std::string& text) {
    std::vector<double> outputs;
    std::istringstream in(text);
    for (std::string field; std::getline(in, field, ',');) {
      std::size_t used = 0;
      outputs.push_back(std::stod(field, &used));  // throws std::invalid_argument on no number
      if (used != field.size()) throw std::invalid_argument("not a number: " + field);
    }
    return outputs;
  }

  /// A non-finite reference checks nothing: the customisation point for that warning.
  static std::string reference_warning(double reference) {
    return std::isfinite(reference) ? std::string() : "the reference is not finite";
  }

  [[nodiscard]] std::string describe() const {
    if (behaviour_.throw_in == "describe") throw 42;
    return behaviour_.name + "()";
  }
  [[nodiscard]] std::string key() const {
    if (behaviour_.throw_in == "key") throw 42;
    return "fake:" + behaviour_.name;
  }
  /// The customisation point for the graph it runs (aitune::graph_of).
  [[nodiscard]] const std::string& graph() const { return behaviour_.graph; }
  /// The customisation point that follows a run of calls (aitune::after_calls).
  void after_calls() {
    if (found_process_value_ && process_value_) *process_value_ = *found_process_value_;
    found_process_value_.reset();
  }

  [[nodiscard]] std::size_t calls() const noexcept { return calls_; }
  [[nodiscard]] std::size_t deactivations() const noexcept { return deactivations_; }
  [[nodiscard]] const std::vector<std::string>& events() const { return *behaviour_.events; }

 private:
  friend class BackendLifecycle<FakeBackend>;

  void do_build(const FakeModel& model, std::span<const double> samples) {
    if (behaviour_.fail_build) {
      throw std::runtime_error(behaviour_.error_trace + "scripted build failure");
    }
    if (behaviour_.refuse_sample) {
      throw SampleError(*behaviour_.refuse_sample, samples.size(), "scripted refusal");
    }
    clock_ = model.clock;
    process_value_ = model.process_value;
    calls_seen_ = model.calls_seen;
    if (behaviour_.host_scratch_bytes > 0) {
      std::vector<char> scratch(behaviour_.host_scratch_bytes, 1);
      touched_ += static_cast<std::size_t>(scratch.back());  // not optimised away
    }
    if (behaviour_.host_kept_bytes > 0) {
      kept_ = std::make_shared<std::vector<char>>(behaviour_.host_kept_bytes, 1);
    }
    if (model.device) {
      model.device->allocate(behaviour_.device_kept_bytes + behaviour_.device_scratch_bytes);
      model.device->allocate(-behaviour_.device_scratch_bytes);
    }
  }

  double do_infer(double sample) {
    ++calls_;
    if (const auto& wanted = behaviour_.sets_process_value; wanted && *process_value_ != *wanted) {
      if (!found_process_value_) found_process_value_ = *process_value_;
      *process_value_ = *wanted;
    }
    if (behaviour_.throw_on_call && calls_ == *behaviour_.throw_on_call) {
      throw std::runtime_error(
          fmt::format("{}scripted failure on call {}", behaviour_.error_trace, calls_));
    }
    calls_seen_->emplace_back(behaviour_.name, *process_value_);
    behaviour_.samples_seen->push_back(sample);
    const auto& latencies = behaviour_.latencies_ms;
    clock_->advance(behaviour_.latency_of_sample ? behaviour_.latency_of_sample(sample)
                                                 : latencies[(calls_ - 1) % latencies.size()]);
    if (behaviour_.after_call) behaviour_.after_call(calls_);
    return 2.0 * sample + behaviour_.output_offset;
  }

  void do_activate() {
    behaviour_.events->push_back(behaviour_.name + ": activate");
    if (behaviour_.throw_in == "activate") throw 42;
  }
  void do_deactivate() {
    ++deactivations_;
    behaviour_.events->push_back(behaviour_.name + ": deactivate");
    if (behaviour_.throw_in == "deactivate") throw 42;
  }

  FakeBehaviour behaviour_;
  std::shared_ptr<VirtualClock> clock_;
  std::size_t calls_ = 0;
  std::size_t deactivations_ = 0;
  std::shared_ptr<std::vector<char>> kept_{};  ///< host_kept_bytes, shared by copies
  std::size_t touched_ = 0;
  std::shared_ptr<int> process_value_{};
  std::optional<int> found_process_value_{};  ///< before this run of calls set it
  std::shared_ptr<std::vector<std::pair<std::string, int>>> calls_seen_{};
};

static_assert(Backend<FakeBackend>);

/// Collects sink lines for assertions.
struct SinkRecorder {
  std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();

  [[nodiscard]] MessageSink sink() const {
    return [lines = lines](std::string_view line) { lines->emplace_back(line); };
  }
  [[nodiscard]] bool contains(std::string_view needle) const {
    for (const auto& line : *lines) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  [[nodiscard]] std::string all() const { return fmt::format("{}", fmt::join(*lines, "\n")); }
};

using FakeStrategy = MinLatencyStrategy<FakeBackend, VirtualTimer>;

/// A strategy over `candidates` on the model's virtual clock, recording messages.
inline FakeStrategy make_strategy(const FakeModel& model, std::vector<FakeBackend> candidates,
                                  StrategyConfig config = {}, SinkRecorder* recorder = nullptr) {
  config.set_sink(recorder ? recorder->sink() : null_sink());
  return FakeStrategy(std::move(candidates), std::move(config), VirtualTimer(model.clock));
}

/// A run of the graph "ir" named `name`, computing in `precision` ("": the full one, "bf16"...),
/// its outputs off by 0.5 where `wrong` (as an IR with wrong weights gives in any precision; a
/// reduced precision's wide tolerance may still pass it), taking `ms`.
inline FakeBackend graph_run(std::string name, std::string precision, bool wrong, double ms) {
  FakeBehaviour behaviour{std::move(name), {ms}};
  behaviour.precision = std::move(precision);
  behaviour.graph = "ir";
  if (wrong) behaviour.output_offset = 0.5;
  return FakeBackend(behaviour);
}

inline const std::vector<double>& one_sample() {
  static const std::vector<double> samples{1.5};
  return samples;
}

/// `count` samples from 1 up in steps of 0.01, all below 100: of one shape
/// (FakeBackend::shape_of).
inline std::vector<double> samples_of_one_shape(std::size_t count) {
  std::vector<double> values;
  for (std::size_t i = 0; i < count; ++i)
    values.push_back(1.0 + static_cast<double>(i) / 100.0);
  return values;
}

}  // namespace aitune::testing
