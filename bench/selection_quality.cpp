// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// How often does a tuning pick the right backend, and at what cost? Thousands of simulated
// tunings on a virtual clock (aitune::SimulatedBackend) with latency noise fitted to real
// traces of this machine (bench/latency_trace.cpp), our rule side by side with aitune's.
//
// usage: aitune-bench-selection [--tunings N] [--json FILE]
#include "bench_common.hpp"
#include <aitune/aitune.hpp>
#include <aitune/testing/simulated_backend.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using aitune::LatencyModel;
using aitune::SimulatedBackend;
using aitune::SimulatedMachine;

/// Noise fitted to bench/latency_trace.cpp on this machine (see README): log-normal body,
/// spikes, drift shared by all backends, a penalty on the first call after a switch, and slow
/// first calls (the JIT's profiling runs).
struct NoiseProfile {
  std::string name;
  double sigma;
  double spike_probability;
  double drift_amplitude;
  double drift_trend_per_s;
  double switch_penalty;
};

const std::vector<NoiseProfile> noise_profiles{
    // The traces' typical backends: body sigma 0.06-0.10, spikes up to 2 %, drift +-10 %.
    {"typical", 0.08, 0.015, 0.10, 0.0, 0.05},
    // The noisiest trace (eager MobileNetV3-Small): sigma 0.15, 15 % spikes, +-20 % drift.
    {"noisy", 0.15, 0.10, 0.20, 0.005, 0.07},
};

/// One tuning problem: the baseline's and each candidate's true median (ms), and which
/// outcome is right: the index of the candidate that should win, or -1 for the baseline.
struct Scenario {
  std::string name;
  std::vector<double> candidates_ms;
  int correct;  ///< candidate index, or -1: the baseline
  bool counts_calls_target =
      false;  ///< one candidate at least 2x faster: calls must not exceed aitune's
};

constexpr double baseline_ms = 10.0;

std::vector<Scenario> scenarios() {
  return {
      {"A-vs-A: candidate identical to the baseline", {10.0}, -1},
      {"three candidates identical to the baseline", {10.0, 10.0, 10.0}, -1},
      {"candidate 2 % faster", {9.8}, 0},
      {"candidate 5 % faster", {9.5}, 0},
      {"candidate 10 % faster", {9.0}, 0},
      // The best (#4, 6.0 ms) is 3 % faster than the runner-up (#2, 6.18 ms), listed after it.
      {"five candidates, best two 3 % apart", {9.0, 6.18, 8.0, 6.0, 9.5}, 3},
      {"one candidate 2x faster", {5.0}, 0, true},
      {"five candidates, one 2x faster", {9.5, 9.0, 5.0, 9.8, 10.0}, 2, true},
  };
}

/// How a rule is run.
struct Method {
  std::string name;
  aitune::StrategyConfig config;
};

// Overrides of the futility side, to choose its defaults (--futility-alpha, --futility-looks).
double futility_alpha = aitune::DecisionConfig{}.futility_alpha();
int futility_first = aitune::RaceConfig{}.futility_first_round();
int futility_every = aitune::RaceConfig{}.futility_every();
int block_calls = aitune::RaceConfig{}.block_calls();
int first_look = aitune::RaceConfig{}.first_look_rounds();

aitune::StrategyConfig ours() {
  return aitune::StrategyConfig{}
      .set_decision(aitune::DecisionConfig{}.set_futility_alpha(futility_alpha))
      .set_profiling(aitune::ProfilingConfig{}.set_race(
          aitune::RaceConfig{}
              .set_futility_looks(futility_first, futility_every)
              .set_block_calls(block_calls)
              .set_looks(first_look, aitune::RaceConfig{}.look_growth(),
                         aitune::RaceConfig{}.max_looks())));
}

aitune::StrategyConfig aitune_rule() {
  return aitune::StrategyConfig{}
      .set_decision(aitune::DecisionConfig{}.set_rule(aitune::DecisionRule::aitune_mean))
      .set_profiling(aitune::ProfilingConfig{}.set_schedule(aitune::Schedule::sequential));
}

aitune::StrategyConfig ours_with_blocks(int block_calls, bool discard) {
  aitune::StrategyConfig config = ours();
  aitune::RaceConfig race = config.profiling().race();
  race.set_block_calls(block_calls).set_discard_first_call(discard);
  return config.set_profiling(aitune::ProfilingConfig{}.set_race(race));
}

struct Outcome {
  int selected;  ///< candidate index, or -1 for the baseline
  std::size_t calls;
  bool settled;  ///< the race settled (rather than a budget or the looks ending it)
};

/// Penalties below 0 keep the profile's switch penalty.
Outcome tune_once(const Scenario& scenario, const NoiseProfile& noise,
                  const aitune::StrategyConfig& config, std::uint64_t seed,
                  double candidate_switch_penalty = -1.0, double baseline_switch_penalty = -1.0) {
  SimulatedMachine machine(seed);
  std::mt19937_64 phase_random(seed * 7919 + 17);
  const double phase = std::uniform_real_distribution<double>(0.0, 6.283185307179586)(phase_random);
  machine.drift = aitune::Drift{noise.drift_amplitude, 30'000.0, phase, noise.drift_trend_per_s};
  const LatencyModel model{baseline_ms,          noise.sigma, noise.spike_probability, 1.5, 3.0,
                           noise.switch_penalty, {3.0, 1.5}};
  machine.baseline = model;
  if (baseline_switch_penalty >= 0.0) machine.baseline.switch_penalty = baseline_switch_penalty;
  std::vector<SimulatedBackend> candidates;
  for (std::size_t i = 0; i < scenario.candidates_ms.size(); ++i) {
    LatencyModel candidate = model.with_median(scenario.candidates_ms[i]);
    if (candidate_switch_penalty >= 0.0) candidate.switch_penalty = candidate_switch_penalty;
    candidates.emplace_back(fmt::format("C{}", i), candidate);
  }
  aitune::StrategyConfig run_config = config;
  run_config.set_sink(aitune::null_sink());
  aitune::ProfilingConfig profiling = run_config.profiling();
  profiling.set_race(aitune::RaceConfig(profiling.race()).set_seed(seed));
  run_config.set_profiling(profiling);
  aitune::MinLatencyStrategy<SimulatedBackend, aitune::VirtualTimer> strategy(
      std::move(candidates), run_config, aitune::VirtualTimer(machine.clock));
  const std::vector<double> samples{1.0};
  const auto result = strategy.tune(machine, samples, scenario.name);
  int selected = -1;
  for (std::size_t i = 0; i < result.report.candidates.size(); ++i) {
    if (result.report.candidates[i].selected) selected = static_cast<int>(i);
  }
  std::size_t calls = 0;
  if (result.report.baseline) calls += result.report.baseline->calls;
  for (const auto& candidate : result.report.candidates)
    calls += candidate.calls;
  return {selected, calls, result.report.measurement.stop_reason == aitune::StopReason::settled};
}

/// Wilson score interval of a proportion (95 %).
std::pair<double, double> wilson(std::size_t hits, std::size_t n) {
  const double z = 1.96;
  const double p = static_cast<double>(hits) / static_cast<double>(n);
  const double denominator = 1.0 + z * z / static_cast<double>(n);
  const double centre = (p + z * z / (2.0 * static_cast<double>(n))) / denominator;
  const double half =
      z * std::sqrt(p * (1 - p) / static_cast<double>(n) + z * z / (4.0 * n * n)) / denominator;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

struct Tally {
  std::size_t tunings = 0;
  std::size_t correct = 0;
  std::vector<double> calls;
  std::size_t settled = 0;

  [[nodiscard]] double median_calls() const {
    return aitune::LatencyStats::from_samples(calls).median;
  }
};

Tally run_many(const Scenario& scenario, const NoiseProfile& noise,
               const aitune::StrategyConfig& config, std::size_t tunings,
               double candidate_switch_penalty = -1.0, double baseline_switch_penalty = -1.0) {
  Tally tally;
  for (std::size_t i = 0; i < tunings; ++i) {
    const Outcome outcome = tune_once(scenario, noise, config, 1000 + i, candidate_switch_penalty,
                                      baseline_switch_penalty);
    ++tally.tunings;
    tally.correct += outcome.selected == scenario.correct ? 1 : 0;
    tally.calls.push_back(static_cast<double>(outcome.calls));
    tally.settled += outcome.settled ? 1 : 0;
  }
  return tally;
}

nlohmann::json tally_json(const Tally& tally) {
  const auto [low, high] = wilson(tally.correct, tally.tunings);
  const auto calls = aitune::LatencyStats::from_samples(tally.calls);
  return {{"tunings", tally.tunings},
          {"correct", tally.correct},
          {"rate", static_cast<double>(tally.correct) / static_cast<double>(tally.tunings)},
          {"rate_ci95", {low, high}},
          {"calls_median", calls.median},
          {"calls_mean", calls.mean},
          {"calls_p90", calls.p90},
          {"settled", tally.settled}};
}

std::string rate_cell(std::size_t hits, std::size_t n) {
  const auto [low, high] = wilson(hits, n);
  return fmt::format("{:5.1f} % [{:4.1f}, {:4.1f}]",
                     100.0 * static_cast<double>(hits) / static_cast<double>(n), 100.0 * low,
                     100.0 * high);
}

std::string rate_cell(const Tally& tally) {
  return rate_cell(tally.correct, tally.tunings);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t tunings = 1000;
  std::string json_path = "selection_quality.json";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tunings" && i + 1 < argc) {
      tunings = static_cast<std::size_t>(std::stoul(argv[++i]));
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--block" && i + 1 < argc) {
      block_calls = std::stoi(argv[++i]);
    } else if (arg == "--first-look" && i + 1 < argc) {
      first_look = std::stoi(argv[++i]);
    } else if (arg == "--futility-alpha" && i + 1 < argc) {
      futility_alpha = std::stod(argv[++i]);
    } else if (arg == "--futility-looks" && i + 2 < argc) {
      futility_first = std::stoi(argv[++i]);
      futility_every = std::stoi(argv[++i]);
    } else {
      fmt::print(stderr,
                 "usage: {} [--tunings N] [--json FILE] [--futility-alpha A] "
                 "[--futility-looks FIRST EVERY] [--block CALLS] [--first-look ROUNDS]\n",
                 argv[0]);
      return 2;
    }
  }

  nlohmann::json json{{"benchmark", "selection_quality"},
                      {"machine", aitune::bench::machine_json()},
                      {"tunings_per_cell", tunings}};
  fmt::print("Selection quality: {} simulated tunings per cell (baseline {} ms), rate of the "
             "right outcome [95 % Wilson interval], how often our race settled (not ended by a "
             "budget or its last look), and the median calls per tuning (every call: warm-up and "
             "discarded calls included)\n",
             tunings, baseline_ms);
  const std::vector<Method> methods{{"ours", ours()}, {"aitune", aitune_rule()}};
  for (const auto& noise : noise_profiles) {
    fmt::print(
        "\nnoise '{}': sigma {}, spikes {:.1f} %, drift +-{:.0f} %, switch penalty {:.0f} %\n",
        noise.name, noise.sigma, noise.spike_probability * 100.0, noise.drift_amplitude * 100.0,
        noise.switch_penalty * 100.0);
    fmt::print("  {:<62}{:>24}{:>24}{:>8}{:>24}{:>8}\n", "scenario (right outcome rate)", "ours",
               "settled", "calls", "aitune rule", "calls");
    for (const auto& scenario : scenarios()) {
      std::vector<Tally> tallies;
      for (const auto& method : methods) {
        tallies.push_back(run_many(scenario, noise, method.config, tunings));
        json["noise"][noise.name][scenario.name][method.name] = tally_json(tallies.back());
      }
      const std::string label =
          scenario.correct < 0 ? scenario.name + " (baseline kept)" : scenario.name;
      fmt::print("  {:<62}{:>24}{:>24}{:>8.0f}{:>24}{:>8.0f}\n", label, rate_cell(tallies[0]),
                 rate_cell(tallies[0].settled, tallies[0].tunings), tallies[0].median_calls(),
                 rate_cell(tallies[1]), tallies[1].median_calls());
    }
  }

  // Block length and discarding the first call of a block. A fast model pays about 7 % on the
  // first call after a switch and a slow one nothing (bf16 vs eager in the traces): put the
  // penalty on the baseline in A-vs-A (a biased measurement then favours the candidate) and on
  // the candidate in the 5 % case (it then hides the gain).
  const NoiseProfile& typical = noise_profiles.front();
  const auto scenario_named = [](std::string_view prefix) {
    for (const Scenario& scenario : scenarios()) {
      if (scenario.name.starts_with(prefix)) return scenario;
    }
    throw std::logic_error("no such scenario");
  };
  const Scenario a_vs_a = scenario_named("A-vs-A");
  const Scenario five_percent = scenario_named("candidate 5 %");
  fmt::print("\nblock length and first-call discarding, '{}' noise, 7 % penalty on the first call "
             "after a switch for one side only:\n",
             typical.name);
  fmt::print("  {:<28}{:>34}{:>36}{:>10}\n", "calls per round (block)",
             "A-vs-A, baseline penalised", "5 % faster, candidate penalised", "calls");
  for (const auto& [calls_per_block, discard] : std::vector<std::pair<int, bool>>{
           {1, false}, {2, false}, {2, true}, {3, false}, {3, true}, {5, true}}) {
    const aitune::StrategyConfig config = ours_with_blocks(calls_per_block, discard);
    const Tally false_switches = run_many(a_vs_a, typical, config, tunings, 0.0, 0.07);
    const Tally found = run_many(five_percent, typical, config, tunings, 0.07, 0.0);
    const std::string label =
        fmt::format("{}{}", calls_per_block, discard ? ", first discarded" : "");
    fmt::print(
        "  {:<28}{:>34}{:>36}{:>10.0f}\n", label,
        fmt::format(
            "{} wrong",
            rate_cell(Tally{
                false_switches.tunings, false_switches.tunings - false_switches.correct, {}, 0})),
        rate_cell(found), found.median_calls());
    json["blocks"][label] = {{"a_vs_a_baseline_penalised", tally_json(false_switches)},
                             {"five_percent_candidate_penalised", tally_json(found)}};
  }
  aitune::bench::write_json(json_path, json);
  fmt::print("\nJSON written to {}\n", json_path);
  return 0;
}
