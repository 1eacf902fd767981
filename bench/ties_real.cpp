// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Ties on real models: three candidates identical to the baseline (TorchEager three times), tuned
// N times per model with our race (default settings, 60 s budget) and with aitune's schedule and
// rule (each backend alone, 10 + 20 calls, lowest mean). A tie is the common case in practice -
// frozen vs eager, two precisions running the same kernels - and the right answer is the
// baseline; the question is what it costs. Prints, per model and rule: how often the baseline
// was kept, how often our race settled (rather than a budget ending it), the calls per tuning
// (every call: warm-up and discarded ones included) and the tuning's wall time, with medians and
// p90s, and the stop reasons seen; writes the same as JSON.
//
// usage: aitune-bench-ties [--models-dir DIR] [--runs N] [--json FILE] [model ...]
//        (default models: squeezenet1_1 resnet18, as made by tools/make_models.py)
#include "bench_common.hpp"
#include "bench_models.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace aitune;
  std::filesystem::path models_dir = "models";
  std::string json_path = "ties_real.json";
  int runs = 10;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--models-dir" && has_value) {
      models_dir = argv[++i];
    } else if (arg == "--runs" && has_value) {
      runs = std::stoi(argv[++i]);
    } else if (arg == "--json" && has_value) {
      json_path = argv[++i];
    } else if (arg.starts_with("-")) {
      fmt::print(stderr, "usage: {} [--models-dir DIR] [--runs N] [--json FILE] [model ...]\n",
                 argv[0]);
      return 2;
    } else {
      names.push_back(arg);
    }
  }
  if (names.empty()) names = {"squeezenet1_1", "resnet18"};

  nlohmann::json json{
      {"benchmark", "ties_real"}, {"machine", bench::machine_json()}, {"runs", runs}};
  std::string table;
  try {
    for (const std::string& name : names) {
      const lt::Model model = lt::load_model(models_dir / (name + ".pt"));
      const std::vector<lt::Sample> samples{lt::make_random_sample(
          bench::read_shapes(models_dir / (name + ".shape")), c10::Device(c10::kCPU), 0)};
      for (const bool ours : {true, false}) {
        const std::string rule = ours ? "ours" : "aitune";
        std::vector<double> calls;
        std::vector<double> seconds;
        std::size_t kept = 0;
        std::size_t settled = 0;
        std::map<std::string, int> stops;
        for (int run = 0; run < runs; ++run) {
          ProfilingConfig profiling;
          profiling.set_race(RaceConfig{}.set_seed(static_cast<std::uint64_t>(run) + 1));
          if (!ours) profiling.set_schedule(Schedule::sequential);
          const auto config =
              StrategyConfig{}
                  .set_sink(null_sink())
                  .set_profiling(profiling)
                  .set_decision(DecisionConfig{}.set_rule(ours ? DecisionRule::confident_median
                                                               : DecisionRule::aitune_mean));
          const auto start = std::chrono::steady_clock::now();
          MinLatencyStrategy<lt::AnyBackend> strategy(
              {lt::TorchEager(), lt::TorchEager(), lt::TorchEager()}, config);
          const auto result = strategy.tune(model, samples, name);
          seconds.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          calls.push_back(static_cast<double>(result.report.measurement.calls));
          kept += result.baseline_selected() ? 1 : 0;
          settled += result.report.measurement.stop_reason == StopReason::settled ? 1 : 0;
          ++stops[std::string(to_string(result.report.measurement.stop_reason))];
          fmt::print(stderr, "{} / {} / run {}: {}, {} calls, {:.1f} s, {}\n", name, rule, run + 1,
                     result.baseline_selected() ? "baseline kept" : result.report.selected,
                     result.report.measurement.calls, seconds.back(),
                     result.report.measurement.stop_detail);
        }
        const auto c = LatencyStats::from_samples(calls);
        const auto s = LatencyStats::from_samples(seconds);
        std::string stop_text;
        for (const auto& [reason, count] : stops)
          stop_text += fmt::format("{}{} x{}", stop_text.empty() ? "" : ", ", reason, count);
        table += fmt::format("  {:<16}{:<8}{:>9}{:>9}{:>16}{:>18}   {}\n", name, rule,
                             fmt::format("{}/{}", kept, runs),
                             ours ? fmt::format("{}/{}", settled, runs) : std::string("-"),
                             fmt::format("{:.0f} [{:.0f}]", c.median, c.p90),
                             fmt::format("{:.1f} [{:.1f}]", s.median, s.p90), stop_text);
        json["results"][name][rule] = {
            {"baseline_kept", kept},      {"settled", settled},       {"calls", calls},
            {"seconds", seconds},         {"calls_median", c.median}, {"calls_p90", c.p90},
            {"seconds_median", s.median}, {"seconds_p90", s.p90},     {"stop_reasons", stops}};
      }
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "aitune-bench-ties: {}\n", error.what());
    return 1;
  }
  fmt::print("Ties on real models: three TorchEager candidates identical to the baseline, {} runs "
             "per row, {}\n",
             runs, aitune::describe_cpu());
  fmt::print("  {:<16}{:<8}{:>9}{:>9}{:>16}{:>18}   {}\n", "model", "rule", "kept", "settled",
             "calls [p90]", "seconds [p90]", "stop reasons");
  fmt::print("{}", table);
  bench::write_json(json_path, json);
  fmt::print("JSON written to {}\n", json_path);
  return 0;
}
