// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// One call from a model to a TunedModule (lt::tune with TuneOptions), and the default
/// candidates for a model or a device.

#include "aitune/core/cache/cached_tuning.hpp"
#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/strategy/min_latency_strategy.hpp"
#include "aitune/core/strategy/strategy_config.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/aot_inductor.hpp"
#include "aitune/torch/backends/onnx_runtime.hpp"
#include "aitune/torch/backends/openvino.hpp"
#include "aitune/torch/backends/torchscript.hpp"
#include "aitune/torch/libtorch_messages.hpp"
#include "aitune/torch/measure/device_timer.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/serve/tuned_module.hpp"
#include "aitune/torch/tune/tuning_key.hpp"
#include "aitune/torch/wrappers/cuda_graph.hpp"
#include "aitune/torch/wrappers/torch_threads.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The candidates worth trying by default: frozen, optimize_for_inference, channels-last, and
/// the reduced precisions the device runs well (bf16 on the CPU; fp16 and bf16 on CUDA, where
/// CUDA-graph replays of the frozen variants are added: at batch size 1 launch overhead often
/// dominates).
[[nodiscard]] inline std::vector<AnyBackend> default_candidates(c10::Device device) {
  std::vector<AnyBackend> candidates{TorchScriptFrozen(), TorchScriptOptimized(), ChannelsLast()};
  if (device.is_cuda()) {
    candidates.emplace_back(TorchScriptFrozen(c10::ScalarType::Half));
    candidates.emplace_back(ChannelsLast(c10::ScalarType::Half));
  }
  candidates.emplace_back(TorchScriptFrozen(c10::ScalarType::BFloat16));
#if AITUNE_WITH_CUDA
  if (device.is_cuda()) {
    candidates.emplace_back(CudaGraph(TorchScriptFrozen()));
    candidates.emplace_back(CudaGraph(TorchScriptFrozen(c10::ScalarType::Half)));
    candidates.emplace_back(CudaGraph(ChannelsLast(c10::ScalarType::Half)));
  }
#endif
  return candidates;
}

/// The intra-op thread counts worth sweeping a runtime session (ONNX Runtime, OpenVINO) over on
/// `cores` hardware threads: 1, about the square root of `cores`, and `cores`, without repeats
/// (1 and 2 on 2 cores; 1, 2, 4 on 4; 1, 4, 16 on 16). At batch size 1 a small model often runs
/// fastest on fewer threads than the runtime's own default, all cores, and a single thread is
/// the one count another process on the machine cannot stall (the others wait for a descheduled
/// thread at every parallel region). Three counts at most, so that a machine with many cores
/// does not multiply the tuning's candidates. Empty where the count is unknown (0).
[[nodiscard]] inline std::vector<int> runtime_thread_counts(unsigned cores) {
  if (cores == 0) return {};
  const auto root = static_cast<unsigned>(std::lround(std::sqrt(static_cast<double>(cores))));
  std::vector<int> counts;
  for (const unsigned count : {1U, root, cores}) {
    if (std::find(counts.begin(), counts.end(), static_cast<int>(count)) == counts.end()) {
      counts.push_back(static_cast<int>(count));
    }
  }
  return counts;
}

/// The runtime sessions' thread counts default_candidates tries: one thread, then the runtime's
/// own default (0), on a machine with more than one hardware thread (`cores`; 0: unknown, the
/// runtime's default alone). One thread often wins at batch size 1 on small models, leaves the
/// other cores to the server, and cannot be stalled by a descheduled sibling thread; listed
/// first, it takes a near tie. Their near ties cost little tuning time since the baseline
/// leaves such a race once every candidate in it beats the baseline (docs/measurement.md).
[[nodiscard]] inline std::vector<int>
default_runtime_threads(unsigned cores = std::thread::hardware_concurrency()) {
  if (cores <= 1) return {0};
  return {1, 0};
}

/// The candidates worth trying for `model`: for a torch.export archive, each AOTInductor
/// compilation it holds but the baseline's (its baseline, the native runtime, runs the
/// ExportedProgram; without one, the first compilation is the baseline: aoti_baseline_of), then
/// its ONNX model on ONNX Runtime and its OpenVINO IR on OpenVINO (in f32, and in bf16 where the
/// CPU has it), where the archive holds them or records why their conversion failed: such a
/// candidate's build fails with that cause, as it does where this build or this machine lacks
/// the runtime, so the report names it. Each runtime session is listed at every intra-op thread
/// count of `runtime_threads` (0: the runtime's default; by default default_runtime_threads,
/// one thread and the runtime's default; runtime_thread_counts gives a wider sweep). For a
/// TorchScript model, default_candidates(device).
[[nodiscard]] inline std::vector<AnyBackend>
default_candidates(const Model& model,
                   const std::vector<int>& runtime_threads = default_runtime_threads()) {
  if (!model.is_exported()) return default_candidates(model.device);
  const Pt2Archive& archive = *model.archive;
  const AotiModelInfo* baseline = aoti_baseline_of(model);
  std::vector<AnyBackend> candidates;
  for (const auto& info : archive.aoti_models) {
    if (&info != baseline) candidates.emplace_back(AOTInductor::from_archive(archive, info));
  }
  if (runtime_threads.empty() ||
      std::any_of(runtime_threads.begin(), runtime_threads.end(), [](int n) { return n < 0; })) {
    throw ConfigError("default_candidates: the runtime sessions' thread counts are 0 (the "
                      "runtime's default) or more, at least one");
  }
  // A failed conversion is named once, not at every thread count.
  const auto at_counts = [&](const std::string& variant, auto make_session) {
    if (!archive.runtime_variants.contains(variant)) {
      if (archive.failed_variants.contains(variant)) candidates.emplace_back(make_session());
      return;
    }
    for (const int count : runtime_threads) {
      auto session = make_session();
      session.set_threads(count);
      candidates.emplace_back(std::move(session));
    }
  };
  at_counts("onnx", [&] { return OnnxRuntime::from_archive(archive); });
  at_counts("openvino", [&] { return OpenVino::from_archive(archive); });
  if (archive.runtime_variants.contains("openvino") && OpenVino::cpu_has_bf16()) {
    at_counts("openvino",
              [&] { return OpenVino::from_archive(archive, OpenVino::Precision::bf16); });
  }
  return candidates;
}

/// LibTorch intra-op thread counts worth measuring besides the process's own: those of
/// runtime_thread_counts(`cores`) that differ from at::get_num_threads() (on 2 cores with
/// LibTorch's default of 2, just 1).
[[nodiscard]] inline std::vector<int>
torch_thread_counts(unsigned cores = std::thread::hardware_concurrency()) {
  std::vector<int> counts = runtime_thread_counts(cores);
  std::erase(counts, at::get_num_threads());
  return counts;
}

/// `candidates`, then the baseline and each candidate that runs on LibTorch's threads (not an
/// ONNX Runtime or OpenVINO session, which have their own: default_candidates' runtime_threads)
/// again as TorchThreads at each count of `counts` (1 or more; the process's own count and
/// repeats are skipped; so is a candidate with the baseline's key). Setting LibTorch's count
/// reaches past one backend (TorchThreads): the tuning sets it for those candidates' calls only
/// and puts it back after them (aitune::after_calls), and the module a tuning returns serves a
/// winner at the serving threads' count unless TuneOptions::torch_threads is
/// TunedThreads::apply. Each count adds as many candidates as the tuning had LibTorch ones, and
/// takes a share of the error level. A CUDA model gets none: the count does not change its
/// kernels.
[[nodiscard]] inline std::vector<AnyBackend>
with_torch_threads(const Model& model, std::vector<AnyBackend> candidates,
                   const std::vector<int>& counts = torch_thread_counts()) {
  if (std::any_of(counts.begin(), counts.end(), [](int n) { return n < 1; })) {
    throw ConfigError("with_torch_threads: LibTorch thread counts are 1 or more");
  }
  if (model.device.is_cuda()) return candidates;
  std::vector<const AnyBackend*> on_torch_threads;
  const AnyBackend baseline = AnyBackend::make_baseline(model);
  on_torch_threads.push_back(&baseline);
  for (const AnyBackend& candidate : candidates) {
    if (candidate.target<OnnxRuntime>() == nullptr && candidate.target<OpenVino>() == nullptr &&
        candidate.target<TorchThreads>() == nullptr && candidate.key() != baseline.key()) {
      on_torch_threads.push_back(&candidate);
    }
  }
  std::vector<AnyBackend> added;  // apart: on_torch_threads points into candidates
  const int process_threads = at::get_num_threads();
  std::vector<int> done{process_threads};
  for (const int count : counts) {
    if (std::find(done.begin(), done.end(), count) != done.end()) continue;
    done.push_back(count);
    for (const AnyBackend* backend : on_torch_threads)
      added.emplace_back(TorchThreads(*backend, count));
  }
  std::move(added.begin(), added.end(), std::back_inserter(candidates));
  return candidates;
}

/// The input contract of a tuning of `model` over `candidates`: the samples' exact shapes when
/// its baseline or any candidate is made for them only (a `.pt2` program, an AOTInductor
/// compilation), else their ranks. Whichever backend a tuning selects, and
/// whether it is served while a background tuning runs, the module then accepts the same inputs.
[[nodiscard]] inline ShapeCheck shape_check_for(const Model& model,
                                                const std::vector<AnyBackend>& candidates) {
  const bool specialised =
      AnyBackend::make_baseline(model).shape_specialised() ||
      std::any_of(candidates.begin(), candidates.end(),
                  [](const AnyBackend& candidate) { return candidate.shape_specialised(); });
  return specialised ? ShapeCheck::exact : ShapeCheck::rank;
}

/// What a tuning may be told besides the model and samples. Every field has a default, so
/// `lt::tune(model, samples)` takes them all; name the fields you set:
/// `lt::tune(model, samples, {.config = config, .cache = &cache})`.
struct TuneOptions {
  /// The backends to try, in order of preference for near ties (default: default_candidates).
  std::optional<std::vector<AnyBackend>> candidates{};
  /// The strategy's settings (default: the interleaved race, the confident-median rule, a 60 s
  /// budget, progress lines on standard error; `StrategyConfig{}.set_sink(null_sink())`
  /// silences them) and the module's name in the report (StrategyConfig::set_module_name).
  StrategyConfig config{};
  /// A tuning cache, for a server's start-up (not owned: it must outlive the call, and a
  /// BackgroundTunedModule). On a hit the decision it holds for this model, inputs, machine,
  /// candidates and settings (tuning_key) is rebuilt and checked once with no measurement,
  /// against the baseline's outputs stored with it (or, for other sample values, the baseline
  /// built again); on a miss the tuning's decision is stored. A cached choice that fails its
  /// check now is a warning and a tuning that replaces the entry; an unreadable cache file is a
  /// warning (the config's sink) and a tuning. The report says which (TuneReport::cache_hit).
  const TuningCache* cache = nullptr;
  /// The cache key, for a caller that made it already with tuning_key(model, samples,
  /// candidates, config, cache) to look it up itself (default: made here). A key made otherwise
  /// must cover as much, or a hit can hand back a stale decision. Needs `cache`.
  std::optional<nlohmann::json> key{};
  /// What the module does when a TorchThreads won (with_torch_threads): by default it serves
  /// the inner backend at the serving threads' LibTorch count and its report's decision
  /// recommends the winner's count; TunedThreads::apply serves it at that count.
  TunedThreads torch_threads = TunedThreads::recommend;
};

/// Tunes `model` on its batch-size-1 `samples` with MinLatencyStrategy and returns the tuned
/// module; see TuneOptions for the candidates, settings and cache.
[[nodiscard]] inline TunedModule tune(const Model& model, const std::vector<Sample>& samples,
                                      TuneOptions options = {}) {
  if (options.key && options.cache == nullptr) {
    throw ConfigError("TuneOptions::key is a tuning cache's key: set TuneOptions::cache too");
  }
  // LibTorch's warnings raised while tuning go where the tuning's own messages go.
  const TorchWarningRoute torch_warnings(options.config.logger());
  std::vector<AnyBackend> candidates =
      options.candidates ? std::move(*options.candidates) : default_candidates(model);
  const ShapeCheck shapes = shape_check_for(model, candidates);
  if (options.cache == nullptr) {
    MinLatencyStrategy<AnyBackend> strategy(std::move(candidates), std::move(options.config));
    return TunedModule(strategy.tune(model, samples), samples, shapes, options.torch_threads);
  }
  const nlohmann::json key =
      options.key ? std::move(*options.key)
                  : tuning_key(model, samples, candidates, options.config, *options.cache);
  MinLatencyStrategy<AnyBackend> strategy(std::move(candidates), std::move(options.config));
  return TunedModule(
      tune_with_cache(strategy, *options.cache, key, model, std::span<const Sample>(samples)),
      samples, shapes, options.torch_threads);
}

}  // namespace AITUNE_LT_ABI

// The core names a LibTorch user needs, under lt:: too: one namespace serves from loading a model
// to reading its report (each is the aitune:: name itself, not a copy).
using aitune::CancelledError;
using aitune::CandidateReport;
using aitune::CandidateStatus;
using aitune::ConfigError;
using aitune::DecisionConfig;
using aitune::DecisionRule;
using aitune::default_time_budget_ms;
using aitune::Error;
using aitune::Logger;
using aitune::LogLevel;
using aitune::MessageSink;
using aitune::NoCorrectBackendError;
using aitune::null_sink;
using aitune::ProfilingConfig;
using aitune::Progress;
using aitune::RaceConfig;
using aitune::render_table;
using aitune::report_from_json;
using aitune::Schedule;
using aitune::stderr_sink;
using aitune::StrategyConfig;
using aitune::to_json;
using aitune::to_label;
using aitune::TuneReport;
using aitune::TuningCache;
using aitune::WarmupConfig;
using aitune::write_json_file;

}  // namespace aitune::lt
