// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// Backends of a `.pt2` model timed alone, from C++, as a C++ server calling one of them back to
// back runs it: the "alone" column of tools/bench_peers.py.
//
// The peers benchmark times its contestants from Python, where each call also pays for Python's
// argument conversion and output copies, and torch's own threads share the process: on
// MobileNetV3-Small on a 2-core AMD EPYC it had ONNX Runtime 11 % ahead of OpenVINO alone where
// the tuner, timing from C++, had OpenVINO 5 % ahead.
// The server this library is for is a C++ one, so the alone figures that decide whether a pick
// was right are taken here: each contestant is built from its backend key (the tuning report's
// selected_key) or from a peer's name, then timed in `--rounds` shuffled rounds, each a block of
// `--calls` consecutive calls whose first half is untimed (the pools and caches settle after
// another runtime ran). A round's value is the mean of its timed calls; the JSON keeps them all,
// and the peers benchmark pairs them round by round.
//
// usage: aitune-bench-alone MODEL.pt2 --input [NAME=]SHAPE [--input ...]
//                           --contestant LABEL=SPEC [--contestant ...]
//                           [--rounds 20] [--calls 20] [--json FILE]
// SPEC: a backend key of the pool aitune-tune tunes from (its default candidates at every runtime
//       thread count worth sweeping, the int8 variants, the LibTorch thread counts, the
//       baseline); or a peer run as shipped: "onnxruntime" (ONNX Runtime's defaults, its threads
//       spinning after calls), "openvino" (OpenVINO's defaults: bf16 where the CPU has it),
//       "onnxruntime:VARIANT" or "openvino:VARIANT" (another model of that runtime's family the
//       archive holds, as shipped: the peers harness's hand-quantised peers), "aoti:NAME" (the
//       archive's AOTInductor model NAME), "baseline" (how the model runs untuned).
#include "bench_common.hpp"
#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using aitune::lt::AnyBackend;
using aitune::lt::Model;

/// A backend to time, and the label the peers benchmark gave it.
struct Contestant {
  std::string label;
  std::string spec;
  std::optional<AnyBackend> backend{};
  std::vector<std::vector<double>> rounds{};  ///< each round's timed calls, in ms
};

/// Every backend aitune-tune may select for `model` (any of its thread options, with or without
/// an accuracy budget), so that a report's selected_key is found among their keys.
std::vector<AnyBackend> tunable_pool(const Model& model) {
  namespace lt = aitune::lt;
  std::vector<int> threads = lt::runtime_thread_counts(std::thread::hardware_concurrency());
  threads.push_back(0);
  std::vector<AnyBackend> pool =
      lt::with_torch_threads(model, lt::default_candidates(model, threads, 1, true));
  pool.push_back(lt::make_baseline(model));
  return pool;
}

/// The backend `spec` names (see the file's comment); ConfigError naming the keys it could be.
AnyBackend backend_of(const Model& model, const std::string& spec,
                      const std::vector<AnyBackend>& pool) {
  namespace lt = aitune::lt;
  for (const AnyBackend& backend : pool) {  // first: an AOTInductor key starts with "aoti:" too
    if (backend.key() == spec) return backend;
  }
  const lt::Pt2Archive& archive = *model.archive;
  // "RUNTIME" or "RUNTIME:VARIANT": the archive's model of that runtime, or another variant of
  // its family (a model quantised by hand, such as the peers harness's), as shipped.
  const auto variant_of = [&](std::string_view runtime, std::string_view family) {
    if (spec == runtime) return std::optional<std::string>(family);
    const std::string prefix = std::string(runtime) + ":";
    if (!spec.starts_with(prefix)) return std::optional<std::string>();
    const auto found = archive.runtime_variants.find(spec.substr(prefix.size()));
    if (found == archive.runtime_variants.end() || found->second.family != family) {
      return std::optional<std::string>();
    }
    return std::optional<std::string>(found->first);
  };
  if (const auto variant = variant_of("onnxruntime", "onnx")) {
    return lt::OnnxRuntime::from_archive(archive, *variant).set_spinning_stop(false);
  }
  if (const auto variant = variant_of("openvino", "openvino")) {
    return lt::OpenVino::from_archive(
        archive, lt::OpenVino::cpu_has_bf16() ? aitune::Precision::bf16 : aitune::Precision::fp32,
        *variant);
  }
  if (spec == "baseline") return lt::make_baseline(model);
  if (spec.starts_with("aoti:")) {
    const std::string name = spec.substr(5);
    for (const auto& info : archive.aoti_models) {
      if (info.name == name) return lt::AOTInductor::from_archive(archive, info);
    }
    throw aitune::ConfigError(
        fmt::format("'{}' holds no AOTInductor model '{}'", archive.path.string(), name));
  }
  std::string keys;
  for (const AnyBackend& backend : pool)
    keys += "\n  " + backend.key();
  std::string variants;
  for (const auto& [name, info] : archive.runtime_variants)
    variants += fmt::format(" {}:{}", info.family == "onnx" ? "onnxruntime" : "openvino", name);
  throw aitune::ConfigError(
      fmt::format("no backend of '{}' has the key '{}'; its keys:{}\nand its runtimes' models:{}",
                  archive.path.string(), spec, keys, variants));
}

/// `calls` consecutive calls of `backend`; the second half's latencies in ms.
std::vector<double> steady_block(AnyBackend& backend, const aitune::lt::Sample& sample, int calls) {
  std::vector<double> kept;
  for (int call = 0; call < calls; ++call) {
    const auto begin = std::chrono::steady_clock::now();
    (void)backend.infer(sample);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    if (call >= calls / 2) kept.push_back(ms);
  }
  backend.after_calls();
  return kept;
}

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (const double value : values)
    sum += value;
  return sum / static_cast<double>(values.size());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aitune;
  std::filesystem::path model_path;
  std::vector<lt::NamedInputSpec> inputs;  // as aitune-tune takes them: by position or by name
  std::vector<Contestant> contestants;
  int rounds = 20;
  int calls = 20;
  std::filesystem::path json_path = "alone.json";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--input" && has_value) {
        inputs.push_back(lt::parse_named_input_spec(argv[++i]));
      } else if (arg == "--contestant" && has_value) {
        const std::string text = argv[++i];
        const auto equals = text.find('=');
        if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
          throw ConfigError(fmt::format("--contestant takes LABEL=SPEC, not '{}'", text));
        }
        contestants.push_back({text.substr(0, equals), text.substr(equals + 1)});
      } else if (arg == "--rounds" && has_value) {
        rounds = std::stoi(argv[++i]);
      } else if (arg == "--calls" && has_value) {
        calls = std::stoi(argv[++i]);
      } else if (arg == "--json" && has_value) {
        json_path = argv[++i];
      } else if (!arg.starts_with("--") && model_path.empty()) {
        model_path = arg;
      } else {
        throw ConfigError(fmt::format("unknown or incomplete argument '{}'", arg));
      }
    }
    if (model_path.empty() || inputs.empty() || contestants.empty()) {
      throw ConfigError("give MODEL.pt2, --input and at least one --contestant");
    }
    if (rounds < 2 || calls < 2) throw ConfigError("--rounds and --calls take 2 or more");
  } catch (const std::exception& error) {
    fmt::print(stderr,
               "aitune-bench-alone: {}\nusage: {} MODEL.pt2 --input [NAME=]SHAPE [--input ...] "
               "--contestant LABEL=SPEC [...] [--rounds N] [--calls N] [--json FILE]\n"
               "SPEC: a backend key (a report's selected_key), onnxruntime[:VARIANT], "
               "openvino[:VARIANT], aoti:NAME or baseline\n",
               error.what(), argv[0]);
    return 2;
  }

  try {
    const lt::Model model = lt::load_model(model_path);
    if (!model.is_exported())
      throw ConfigError("aitune-bench-alone times a .pt2 archive's backends");
    const std::vector<lt::Sample> samples{lt::make_random_sample(
        lt::inputs_in_model_order(inputs, model, model_path.string()), model.device, 0)};
    const std::vector<AnyBackend> pool = tunable_pool(model);
    nlohmann::json failed = nlohmann::json::array();
    std::vector<Contestant*> order;
    for (Contestant& contestant : contestants) {
      AnyBackend backend = backend_of(model, contestant.spec, pool);
      try {  // a peer this archive or build cannot run is named and left out, as in Python
        backend.build(model, samples);
        for (int call = 0; call < 5; ++call)
          (void)backend.infer(samples.front());
        backend.after_calls();
      } catch (const std::exception& error) {
        const std::string cause = lt::summarize_error(error);
        fmt::print(stderr, "{}: failed: {}\n", contestant.label, cause);
        failed.push_back(
            {{"label", contestant.label}, {"spec", contestant.spec}, {"error", cause}});
        continue;
      }
      fmt::print(stderr, "{}: {}\n", contestant.label, backend.describe());
      contestant.backend.emplace(std::move(backend));
      order.push_back(&contestant);
    }
    if (order.empty()) throw Error("no contestant could be built");
    std::mt19937 random(1);
    for (int round = 0; round < rounds; ++round) {
      std::shuffle(order.begin(), order.end(), random);
      for (Contestant* contestant : order)
        contestant->rounds.push_back(steady_block(*contestant->backend, samples.front(), calls));
    }

    nlohmann::json rows = nlohmann::json::array();
    fmt::print("aitune-bench-alone: {} on {} ({} hardware threads, LibTorch {}); {} rounds of {} "
               "calls, the second half timed\n{:<40} {:>10}  {:<18}  {}\n",
               model_path.filename().string(), aitune::describe_cpu(),
               std::thread::hardware_concurrency(), lt::libtorch_version(), rounds, calls,
               "contestant", "median ms", "[95 %]", "backend");
    for (const Contestant& contestant : contestants) {
      if (!contestant.backend) continue;
      std::vector<double> means;
      for (const auto& kept : contestant.rounds)
        means.push_back(mean(kept));
      const auto median = bench::median_with_interval(means);
      fmt::print("{:<40} {:>10.3f}  {:<18}  {}\n", contestant.label, median.median,
                 fmt::format("[{:.3f}, {:.3f}]", median.low, median.high),
                 contestant.backend->describe());
      rows.push_back({{"label", contestant.label},
                      {"spec", contestant.spec},
                      {"key", contestant.backend->key()},
                      {"backend", contestant.backend->describe()},
                      {"round_means_ms", means},
                      {"rounds_ms", contestant.rounds}});
    }
    bench::write_json(json_path, {{"benchmark", "alone"},
                                  {"machine", bench::machine_json()},
                                  {"libtorch", lt::libtorch_version()},
                                  {"model", model_path.string()},
                                  {"rounds", rounds},
                                  {"calls", calls},
                                  {"contestants", rows},
                                  {"failed", failed}});
  } catch (const ConfigError& error) {  // in full: it may list the keys to choose from
    fmt::print(stderr, "aitune-bench-alone: {}\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    fmt::print(stderr, "aitune-bench-alone: {}\n", lt::summarize_error(error));
    return 1;
  }
  return 0;
}
