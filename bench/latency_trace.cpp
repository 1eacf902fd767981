// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Records real per-call latencies of two backends of one model, to see what a measurement
// schedule must cope with and to fit the simulator of bench/selection_quality.cpp:
//   1. each backend alone, N consecutive calls: noise body, spikes, drift;
//   2. the two interleaved in blocks of 6 calls: the cost of the first calls after a switch.
//
// usage: aitune-bench-latency-trace MODEL.pt SHAPE BACKEND_A BACKEND_B [calls] [json]
//        backends: eager, frozen, optimized, channels_last, bf16
#include "bench_common.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace {

aitune::lt::AnyBackend make_backend(const std::string& name) {
  using namespace aitune::lt;
  if (name == "eager") return TorchEager();
  if (name == "frozen") return TorchScriptFrozen();
  if (name == "optimized") return TorchScriptOptimized();
  if (name == "channels_last") return ChannelsLast();
  if (name == "bf16") return TorchScriptFrozen(c10::ScalarType::BFloat16);
  throw aitune::Error("unknown backend " + name);
}

double time_call_ms(aitune::lt::AnyBackend& backend, const aitune::lt::Sample& sample) {
  const auto start = std::chrono::steady_clock::now();
  (void)backend.infer(sample);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Noise body (sigma of log latency around the median), spikes (calls above 1.5x the median)
/// and drift (median of the last tenth over the first tenth).
nlohmann::json summarise(const std::vector<double>& calls) {
  const auto stats = aitune::LatencyStats::from_samples(calls);
  std::vector<double> logs;
  std::size_t spikes = 0;
  double spike_sum = 0.0;
  for (double t : calls) {
    if (t > 1.5 * stats.median) {
      ++spikes;
      spike_sum += t / stats.median;
    } else {
      logs.push_back(std::log(t / stats.median));
    }
  }
  double sq = 0.0;
  for (double l : logs)
    sq += l * l;
  const std::size_t tenth = calls.size() / 10;
  const double first = aitune::median_of(std::span(calls).first(tenth));
  const double last = aitune::median_of(std::span(calls).last(tenth));
  return {{"median_ms", stats.median},
          {"p90_ms", stats.p90},
          {"body_sigma", std::sqrt(sq / static_cast<double>(logs.size()))},
          {"spike_rate", static_cast<double>(spikes) / static_cast<double>(calls.size())},
          {"spike_mean_factor", spikes ? spike_sum / static_cast<double>(spikes) : 0.0},
          {"drift_last_over_first", last / first}};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  if (argc < 5) {
    fmt::print(stderr, "usage: {} MODEL.pt SHAPE BACKEND_A BACKEND_B [calls] [json]\n", argv[0]);
    return 2;
  }
  const int calls = argc > 5 ? std::stoi(argv[5]) : 400;
  const std::string json_path = argc > 6 ? argv[6] : "latency_trace.json";
  const lt::Model model = lt::load_model(argv[1]);
  const std::vector<lt::Sample> samples{
      lt::make_random_sample({lt::parse_input_spec(argv[2])}, c10::Device(c10::kCPU), 0)};
  std::vector<lt::AnyBackend> backends{make_backend(argv[3]), make_backend(argv[4])};
  nlohmann::json json{
      {"benchmark", "latency_trace"}, {"machine", bench::machine_json()}, {"model", argv[1]}};
  for (auto& backend : backends) {
    backend.build(model, samples);
    for (int i = 0; i < 10; ++i)
      (void)backend.infer(samples[0]);
  }

  fmt::print("{} on {}: {} consecutive calls each\n", argv[1], aitune::describe_cpu(), calls);
  for (auto& backend : backends) {
    std::vector<double> trace;
    for (int i = 0; i < calls; ++i)
      trace.push_back(time_call_ms(backend, samples[0]));
    const auto summary = summarise(trace);
    fmt::print(
        "  {:<32} median {:8.3f} ms  p90 {:8.3f} ms  body sigma {:.3f}  spikes {:.2f} % "
        "(x{:.2f})  drift {:.3f}\n",
        backend.describe(), summary["median_ms"].get<double>(), summary["p90_ms"].get<double>(),
        summary["body_sigma"].get<double>(), 100 * summary["spike_rate"].get<double>(),
        summary["spike_mean_factor"].get<double>(), summary["drift_last_over_first"].get<double>());
    json["alone"][backend.describe()] = summary;
    json["alone"][backend.describe()]["trace_ms"] = trace;
  }

  constexpr int block = 6;
  const int rounds = std::max(20, calls / (2 * block));
  fmt::print("interleaved A,B,A,B... in blocks of {} ({} rounds): median by position in block\n",
             block, rounds);
  for (std::size_t which = 0; which < backends.size(); ++which) {
    std::vector<std::vector<double>> by_position(block);
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t b = 0; b < backends.size(); ++b) {
        for (int i = 0; i < block; ++i) {
          const double t = time_call_ms(backends[b], samples[0]);
          if (b == which) by_position[static_cast<std::size_t>(i)].push_back(t);
        }
      }
    }
    std::vector<double> medians;
    for (const auto& position : by_position)
      medians.push_back(median_of(position));
    fmt::print("  {:<32}", backends[which].describe());
    for (double m : medians)
      fmt::print(" {:8.3f}", m);
    fmt::print(" ms\n");
    json["interleaved_by_position_ms"][backends[which].describe()] = medians;
  }
  bench::write_json(json_path, json);
  return 0;
}
