// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Tunes real models (made by tools/make_models.py) and prints, per model, each backend's median
// and p90 latency, its paired ratio to the baseline, the selected backend and the tuning wall
// time; writes the same as JSON. With only <model>.pt: TorchEager is the baseline of the default
// TorchScript candidates. With <model>.pt2 beside it (same weights): one race holds both
// families side by side - the native runtime running the ExportedProgram is the baseline, and
// TorchEager, the TorchScript variants and every AOTInductor model in the archive are candidates.
//
// usage: aitune-bench-models [--models-dir DIR] [--json FILE] [--device cpu|cuda] [model ...]
#include "bench_common.hpp"
#include "bench_models.hpp"
#include <aitune/torch.hpp>

#include <ATen/Parallel.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace aitune;
  std::filesystem::path models_dir = "models";
  std::filesystem::path json_path = "bench_models.json";
  std::string device_name = "cpu";
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--models-dir" && has_value) {
      models_dir = argv[++i];
    } else if (arg == "--json" && has_value) {
      json_path = argv[++i];
    } else if (arg == "--device" && has_value) {
      device_name = argv[++i];
    } else if (arg.starts_with("-")) {
      fmt::print(stderr, "usage: {} [--models-dir DIR] [--json FILE] [--device D] [model ...]\n",
                 argv[0]);
      return 2;
    } else {
      names.push_back(arg);
    }
  }
  if (names.empty()) {
    names = {"resnet18", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0",
             "transformer_encoder"};
  }

  try {
    const c10::Device device = lt::parse_device(device_name);
    nlohmann::json results = nlohmann::json::array();
    std::string table;
    for (const auto& name : names) {
      lt::Model model = lt::load_model(models_dir / (name + ".pt"), device);
      std::vector<lt::AnyBackend> candidates = lt::default_candidates(device);
      if (const auto exported = models_dir / (name + ".pt2"); std::filesystem::exists(exported)) {
        model.archive = lt::load_model(exported, device).archive;
        candidates.insert(candidates.begin(), lt::TorchEager());
        for (auto& compiled : lt::default_candidates(lt::Model{{}, device, model.archive, false}))
          candidates.push_back(std::move(compiled));
      }
      const std::vector<lt::Sample> samples{
          lt::make_random_sample(bench::read_shapes(models_dir / (name + ".shape")), device, 0)};
      const auto start = std::chrono::steady_clock::now();
      const lt::TunedModule tuned =
          lt::tune(model, samples,
                   {.candidates = std::move(candidates),
                    .config = StrategyConfig{}.set_sink(null_sink()).set_module_name(name)});
      const double tuning_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const TuneReport& report = tuned.report();

      table +=
          fmt::format("\n{} (selected {}, tuning {:.1f} s)\n", name, report.selected, tuning_s);
      table += fmt::format("  {:<50}{:<16}{:>12}{:>12}{:>26}{:>10}{:>7}{:>11}{:>11}\n", "backend",
                           "status", "median", "p90", "ratio [CI]", "speedup", "calls", "precision",
                           "error/tol");
      const auto row = [&](const CandidateReport& c) {
        const std::string ratio =
            c.vs_baseline
                ? format_ratio(c.vs_baseline->ratio, c.vs_baseline->low, c.vs_baseline->high)
                : std::string("-");
        const OutputAccuracy* worst = worst_accuracy(c);
        table += fmt::format("  {:<50}{:<16}{:>12}{:>12}{:>26}{:>10}{:>7}{:>11}{:>11}\n",
                             (c.selected ? "* " : "") + c.backend, to_label(c.status),
                             c.latency ? format_ms(c.latency->median) : "-",
                             c.latency ? format_ms(c.latency->p90) : "-", ratio,
                             c.speedup ? format_speedup(*c.speedup) : "-", c.calls,
                             c.precision ? std::string(to_label(*c.precision)) : "-",
                             worst ? format_fixed(worst->worst_error_ratio * 100.0, 1) + " %"
                                   : std::string("-"));
      };
      if (report.baseline) row(*report.baseline);
      for (const auto& candidate : report.candidates)
        row(candidate);
      fmt::print(stderr, "{}: selected {} ({:.1f} s)\n", name, report.selected, tuning_s);

      nlohmann::json entry = to_json(report);
      entry["tuning_wall_s"] = tuning_s;
      results.push_back(entry);
    }
    fmt::print("aitune-bench-models on {} ({} hardware threads, LibTorch {}, {} intra-op "
               "threads), default settings (interleaved race, confident median rule)\n{}",
               aitune::describe_cpu(), std::thread::hardware_concurrency(), lt::libtorch_version(),
               at::get_num_threads(), table);
    nlohmann::json json{{"benchmark", "models"},
                        {"machine", bench::machine_json()},
                        {"device", device.str()},
                        {"libtorch", lt::libtorch_version()},
                        {"intra_op_threads", at::get_num_threads()},
                        {"models", results}};
    bench::write_json(json_path, json);
    fmt::print("\nJSON written to {}\n", json_path.string());
  } catch (const std::exception& error) {
    fmt::print(stderr, "aitune-bench-models: {}\n", error.what());
    return 1;
  }
  return 0;
}
