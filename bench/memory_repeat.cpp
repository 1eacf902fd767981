// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Memory over repeated tunings: one model tuned N times in one process with the default candidates
// and settings, the resident set size (VmRSS, after malloc_trim) read after each tuning, with the
// tuned module released - then a failed and a cancelled tuning. Two ways a server does it:
//   reloaded  the model file loaded afresh for each tuning: the bound applies here; a leak of
//             ours shows as growth from the second tuning on (the first also pays LibTorch's
//             one-time costs: kernels, thread pools, allocator caches);
//   same      one loaded Model tuned again and again: LibTorch keeps every clone of a TorchScript
//             module (each build clones; freezing clones again) in the module's CompilationUnit,
//             with its compiled graphs, until the module is destroyed - reported, not bounded.
// Prints a table and writes JSON; exits 1 when the reloaded growth exceeds the stated bound.
//
// usage: aitune-bench-memory [--models-dir DIR] [--runs N] [--bound-mib M] [--only TEXT]
//                            [--json FILE] [model]
//        (default: squeezenet1_1 as made by tools/make_models.py, 4 runs, 16 MiB; --only: the
//        default candidates whose description contains TEXT)
#include "bench_common.hpp"
#include "bench_models.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>
#include <malloc.h>

#include <fstream>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace {

/// The resident set size of this process, in MiB (VmRSS in /proc/self/status), after glibc has
/// returned the free memory it keeps to the system (malloc_trim): what remains is in use.
double resident_mib() {
  malloc_trim(0);
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1.0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  std::filesystem::path models_dir = "models";
  std::string json_path = "memory.json";
  std::string name = "squeezenet1_1";
  int runs = 4;
  double bound_mib = 16.0;
  std::string only;  // a part of a candidate's description: tune that one alone
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--models-dir" && has_value) {
      models_dir = argv[++i];
    } else if (arg == "--runs" && has_value) {
      runs = std::max(2, std::stoi(argv[++i]));
    } else if (arg == "--bound-mib" && has_value) {
      bound_mib = std::stod(argv[++i]);
    } else if (arg == "--json" && has_value) {
      json_path = argv[++i];
    } else if (arg == "--only" && has_value) {
      only = argv[++i];
    } else if (arg.starts_with("-")) {
      fmt::print(stderr,
                 "usage: {} [--models-dir DIR] [--runs N] [--bound-mib M] [--only TEXT] [--json "
                 "FILE] [model]\n",
                 argv[0]);
      return 2;
    } else {
      name = arg;
    }
  }

  const std::filesystem::path file = models_dir / (name + ".pt");
  const std::vector<lt::Sample> samples{lt::make_random_sample(
      bench::read_shapes(models_dir / (name + ".shape")), c10::Device(c10::kCPU), 0)};
  const auto config = [&] {
    return StrategyConfig{}
        .set_sink(null_sink())
        .set_profiling(ProfilingConfig{}.set_time_budget_ms(20'000))
        .set_module_name(name);
  };
  const auto candidates = [&](const lt::Model& model) {
    std::vector<lt::AnyBackend> chosen;
    for (lt::AnyBackend& candidate : lt::default_candidates(model)) {
      if (candidate.describe().find(only) != std::string::npos) chosen.push_back(candidate);
    }
    return chosen;
  };
  nlohmann::json modes = nlohmann::json::object();
  std::string table =
      fmt::format("{:<10}{:<22}{:>14}{:>12}\n", "model", "after", "resident MiB", "vs 2nd");
  double reloaded_growth = 0.0;
  double same_slope = 0.0;
  for (const bool reload : {true, false}) {
    const std::string mode = reload ? "reloaded" : "same";
    std::vector<nlohmann::json> rows;
    double second = 0.0;
    const auto record = [&](const std::string& label) {
      const double mib = resident_mib();
      if (rows.size() == 1) second = mib;
      table += fmt::format("{:<10}{:<22}{:>14.1f}{:>12}\n", mode, label, mib,
                           rows.size() >= 1 ? fmt::format("{:+.1f}", mib - second) : "-");
      rows.push_back({{"after", label}, {"resident_mib", mib}});
    };
    std::optional<lt::Model> kept;
    // The model for the next tuning: loaded afresh, or the one kept. Called once per tuning -
    // a second call would reload and destroy the model the first returned.
    const auto next_model = [&]() -> const lt::Model& {
      if (reload || !kept) kept.emplace(lt::load_model(file));
      return *kept;
    };
    for (int run = 1; run <= runs; ++run) {
      const lt::Model& model = next_model();
      (void)lt::tune(model, samples, {.candidates = candidates(model), .config = config()});
      record(fmt::format("tuning {}", run));
    }
    // A tuning where every candidate fails, and one cancelled in the middle.
    try {
      std::vector<lt::AnyBackend> canaries;
      canaries.emplace_back(lt::PerturbedOutputs(lt::TorchScriptFrozen()));
      (void)lt::tune(next_model(), samples,
                     {.candidates = std::move(canaries),
                      .config = config().enable_performance_validation(false)});
    } catch (const NoCorrectBackendError&) {
    }
    record("a failed tuning");
    try {
      std::stop_source stop;
      auto cancelling = config().set_sink([&](std::string_view line) {
        if (line.find("measuring") != std::string_view::npos) stop.request_stop();
      });
      const lt::Model& model = next_model();
      (void)lt::tune(
          model, samples,
          {.candidates = candidates(model), .config = cancelling.set_stop_token(stop.get_token())});
    } catch (const CancelledError&) {
    }
    record("a cancelled tuning");
    const double growth = rows.back()["resident_mib"].get<double>() - second;
    const double slope =
        (rows[static_cast<std::size_t>(runs) - 1]["resident_mib"].get<double>() - second) /
        std::max(1, runs - 2);
    (reload ? reloaded_growth : same_slope) = reload ? growth : slope;
    modes[mode] = {{"rows", rows}, {"growth_after_second_mib", growth}};
  }
  const bool within = reloaded_growth <= bound_mib;
  fmt::print("Resident memory over {} tunings of {} (default candidates{}), {}\n{}", runs, name,
             only.empty() ? "" : fmt::format(" matching '{}'", only), aitune::describe_cpu(),
             table);
  fmt::print("reloaded: growth after the 2nd tuning {:+.1f} MiB (bound {:.0f} MiB): {}\n",
             reloaded_growth, bound_mib, within ? "within" : "OVER THE BOUND");
  fmt::print("same Model object: {:+.1f} MiB per tuning, kept by LibTorch until the model is "
             "destroyed\n",
             same_slope);
  bench::write_json(json_path, {{"benchmark", "memory_repeat"},
                                {"machine", bench::machine_json()},
                                {"model", name},
                                {"modes", modes},
                                {"same_model_mib_per_tuning", same_slope},
                                {"bound_mib", bound_mib},
                                {"within_bound", within}});
  return within ? 0 : 1;
}
