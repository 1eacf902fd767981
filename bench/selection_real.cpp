// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Decision stability on a real model: tune it N times with two candidates identical to the
// baseline (TorchEager, TorchEager) and N times with the default candidates, with our rule and
// with aitune's, and count how often the decision changed from one run to the next.
//
// usage: aitune-bench-selection-real MODEL.pt SHAPE [--runs N] [--budget-s S] [--json FILE]
//        [--verbose]
#include "bench_common.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace {

struct Series {
  std::vector<std::string> decisions;
  std::vector<double> calls;
  std::vector<double> seconds;
};

/// "baseline", or "#k candidate" (a TorchEager candidate and the baseline describe themselves
/// alike, so positions tell them apart).
std::string decision_of(const aitune::TuneReport& report) {
  if (report.baseline_selected) return "baseline";
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    if (report.candidates[i].selected) {
      return fmt::format("#{} {}", i + 1, report.candidates[i].backend);
    }
  }
  return "none";
}

std::size_t changes(const std::vector<std::string>& decisions) {
  std::size_t count = 0;
  for (std::size_t i = 1; i < decisions.size(); ++i)
    count += decisions[i] != decisions[i - 1];
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  if (argc < 3) {
    fmt::print(stderr, "usage: {} MODEL.pt SHAPE [--runs N] [--budget-s S] [--json FILE]\n",
               argv[0]);
    return 2;
  }
  int runs = 10;
  double budget_s = 20.0;
  std::string json_path = "selection_real.json";
  bool verbose = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--verbose") {
      verbose = true;  // every tuning's report table on standard error
    } else if (arg == "--runs" && has_value) {
      runs = std::stoi(argv[++i]);
    } else if (arg == "--budget-s" && has_value) {
      budget_s = std::stod(argv[++i]);
    } else if (arg == "--json" && has_value) {
      json_path = argv[++i];
    }
  }
  try {
    const lt::Model model = lt::load_model(argv[1]);
    const std::vector<lt::Sample> samples{
        lt::make_random_sample({lt::parse_input_spec(argv[2])}, c10::Device(c10::kCPU), 0)};

    const auto rule_config = [&](bool ours, int run) {
      ProfilingConfig profiling;
      profiling.set_time_budget_ms(budget_s * 1000.0)
          .set_race(RaceConfig{}.set_seed(static_cast<std::uint64_t>(run) + 1));
      if (!ours) profiling.set_schedule(Schedule::sequential);
      return StrategyConfig{}
          .set_sink(null_sink())
          .set_profiling(profiling)
          .set_decision(DecisionConfig{}.set_rule(ours ? DecisionRule::confident_median
                                                       : DecisionRule::aitune_mean));
    };
    const std::vector<std::pair<std::string, std::vector<lt::AnyBackend>>> sets{
        {"two TorchEager candidates (identical to the baseline)",
         {lt::TorchEager(), lt::TorchEager()}},
        {"default candidates", lt::default_candidates(c10::Device(c10::kCPU))}};

    nlohmann::json json{{"benchmark", "selection_real"},
                        {"machine", bench::machine_json()},
                        {"model", argv[1]},
                        {"input", argv[2]},
                        {"runs", runs},
                        {"time_budget_s", budget_s}};
    std::string table;
    for (const auto& [set_name, candidates] : sets) {
      for (const bool ours : {true, false}) {
        const std::string rule = ours ? "ours" : "aitune";
        Series series;
        for (int run = 0; run < runs; ++run) {
          const auto start = std::chrono::steady_clock::now();
          MinLatencyStrategy<lt::AnyBackend> strategy(candidates, rule_config(ours, run));
          const auto result = strategy.tune(model, samples, "model");
          series.seconds.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          series.decisions.push_back(decision_of(result.report));
          std::size_t calls = result.report.baseline ? result.report.baseline->calls : 0;
          for (const auto& candidate : result.report.candidates)
            calls += candidate.calls;
          series.calls.push_back(static_cast<double>(calls));
          fmt::print(stderr, "{} / {} / run {}: {}\n", set_name, rule, run + 1,
                     series.decisions.back());
          if (verbose) fmt::print(stderr, "{}\n", render_table(result.report));
        }
        const std::set<std::string> distinct(series.decisions.begin(), series.decisions.end());
        const auto calls = LatencyStats::from_samples(series.calls);
        const auto seconds = LatencyStats::from_samples(series.seconds);
        table += fmt::format("  {:<54}{:<8}{:>9}{:>10}{:>12.0f}{:>12.1f}   {}\n", set_name, rule,
                             fmt::format("{}/{}", changes(series.decisions), runs - 1),
                             distinct.size(), calls.mean, seconds.mean, fmt::join(distinct, "; "));
        json["results"][set_name][rule] = {{"decisions", series.decisions},
                                           {"changes", changes(series.decisions)},
                                           {"distinct", distinct.size()},
                                           {"calls_mean", calls.mean},
                                           {"seconds_mean", seconds.mean}};
      }
    }
    fmt::print("Decision stability on {} ({}), {} runs per row, time budget {} s per tuning, {}\n",
               argv[1], argv[2], runs, budget_s, aitune::describe_cpu());
    fmt::print("  {:<54}{:<8}{:>9}{:>10}{:>12}{:>12}   {}\n", "candidates", "rule", "changes",
               "distinct", "calls", "seconds", "decisions seen");
    fmt::print("{}", table);
    bench::write_json(json_path, json);
    fmt::print("JSON written to {}\n", json_path);
  } catch (const std::exception& error) {
    fmt::print(stderr, "aitune-bench-selection-real: {}\n", error.what());
    return 1;
  }
  return 0;
}
