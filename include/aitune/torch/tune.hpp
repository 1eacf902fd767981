// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// One call from a model to a TunedModule, and the default candidate list for a device.

#include "aitune/core/cached_tuning.hpp"
#include "aitune/core/min_latency_strategy.hpp"
#include "aitune/core/strategy_config.hpp"
#include "aitune/core/tuning_cache.hpp"
#include "aitune/torch/any_backend.hpp"
#include "aitune/torch/aot_inductor.hpp"
#include "aitune/torch/cuda_graph.hpp"
#include "aitune/torch/device_timer.hpp"
#include "aitune/torch/model.hpp"
#include "aitune/torch/script_backend.hpp"
#include "aitune/torch/tuned_module.hpp"
#include "aitune/torch/tuning_key.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {

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

/// The candidates worth trying for `model`: for a torch.export archive, each AOTInductor
/// compilation it holds (its baseline, the native runtime, runs the ExportedProgram); for a
/// TorchScript model, default_candidates(device).
[[nodiscard]] inline std::vector<AnyBackend> default_candidates(const Model& model) {
  if (!model.is_exported()) return default_candidates(model.device);
  std::vector<AnyBackend> candidates;
  for (const auto& info : model.archive->aoti_models) {
    candidates.emplace_back(AOTInductor::from_archive(*model.archive, info));
  }
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

/// Tunes `model` over `candidates` with MinLatencyStrategy and returns the tuned module.
[[nodiscard]] inline TunedModule tune(const Model& model, const std::vector<Sample>& samples,
                                      std::vector<AnyBackend> candidates,
                                      StrategyConfig config = {},
                                      std::string module_name = "model") {
  const ShapeCheck shapes = shape_check_for(model, candidates);
  MinLatencyStrategy<AnyBackend> strategy(std::move(candidates), std::move(config));
  return TunedModule(strategy.tune(model, samples, std::move(module_name)), samples, shapes);
}

/// The one call: tunes `model` on its batch-size-1 `samples` over default_candidates(model)
/// with the default settings and returns the tuned module. The defaults: the interleaved race
/// and the confident-median rule, a 60 s budget (default_time_budget_ms, as aitune-tune), and
/// progress lines on standard error (`StrategyConfig{}.set_sink(null_sink())` silences them).
[[nodiscard]] inline TunedModule tune(const Model& model, const std::vector<Sample>& samples,
                                      StrategyConfig config = {},
                                      std::string module_name = "model") {
  return tune(model, samples, default_candidates(model), std::move(config), std::move(module_name));
}

/// As the call below, with the key already made by tuning_key(model, samples, candidates, config,
/// cache): for a caller that also looks the key up itself (aitune-tune skips its input check
/// on a hit). A key made otherwise must cover as much, or a hit can hand back a stale decision.
[[nodiscard]] inline TunedModule tune(const Model& model, const std::vector<Sample>& samples,
                                      const TuningCache& cache, const nlohmann::json& key,
                                      std::vector<AnyBackend> candidates,
                                      StrategyConfig config = {},
                                      std::string module_name = "model") {
  const ShapeCheck shapes = shape_check_for(model, candidates);
  MinLatencyStrategy<AnyBackend> strategy(std::move(candidates), std::move(config));
  return TunedModule(tune_with_cache(strategy, cache, key, model, std::span<const Sample>(samples),
                                     std::move(module_name)),
                     samples, shapes);
}

/// The call for a server's start-up: the decision `cache` holds for this model, inputs,
/// machine, candidates and settings (tuning_key), rebuilt and checked once with no measurement,
/// against the baseline's outputs stored with it (or, for other sample values, against the
/// baseline built again); or, on a miss, a tuning whose decision is then stored. A cached choice
/// that fails its check now is a warning and a tuning that replaces the entry; an unreadable
/// cache file is a warning (config's sink) and a tuning. The report says which happened
/// (TuneReport::cache_hit).
[[nodiscard]] inline TunedModule tune(const Model& model, const std::vector<Sample>& samples,
                                      const TuningCache& cache, std::vector<AnyBackend> candidates,
                                      StrategyConfig config = {},
                                      std::string module_name = "model") {
  const nlohmann::json key = tuning_key(model, samples, candidates, config, cache);
  return tune(model, samples, cache, key, std::move(candidates), std::move(config),
              std::move(module_name));
}

/// As above over default_candidates(model).
[[nodiscard]] inline TunedModule tune(const Model& model, const std::vector<Sample>& samples,
                                      const TuningCache& cache, StrategyConfig config = {},
                                      std::string module_name = "model") {
  return tune(model, samples, cache, default_candidates(model), std::move(config),
              std::move(module_name));
}

}  // namespace aitune::lt
