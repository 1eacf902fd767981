// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The candidate catalogue: the backends worth trying for a model or a device by default, the
/// runtime sessions' thread counts, and the same LibTorch candidates at other thread counts
/// (with_torch_threads).

#include "aitune/core/error.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/aot_inductor.hpp"
#include "aitune/torch/backends/onnx_runtime.hpp"
#include "aitune/torch/backends/openvino.hpp"
#include "aitune/torch/backends/torchscript.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/archive_variants.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/tune/baseline.hpp"
#include "aitune/torch/wrappers/cuda_graph.hpp"
#include "aitune/torch/wrappers/torch_threads.hpp"

#include <ATen/Parallel.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
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

/// The runtime sessions' thread counts worth trying when `callers` call at once on `cores`
/// hardware threads: default_runtime_threads, and each caller's share of the cores (cores /
/// callers, at least 1) before the runtime's default where it is not there already.
[[nodiscard]] inline std::vector<int>
runtime_threads_for_callers(int callers, unsigned cores = std::thread::hardware_concurrency()) {
  std::vector<int> counts = default_runtime_threads(cores);
  if (callers <= 1 || cores == 0) return counts;
  const int share = std::max(1, static_cast<int>(cores) / callers);
  if (std::find(counts.begin(), counts.end(), share) == counts.end()) {
    counts.insert(std::find(counts.begin(), counts.end(), 0), share);
  }
  return counts;
}

/// The candidates worth trying for `model`: for a torch.export archive, each AOTInductor
/// compilation it holds but the baseline's (its baseline, the native runtime, runs the
/// ExportedProgram; without one, the first fp32 compilation is the baseline: aoti_baseline_of),
/// then its ONNX model on ONNX Runtime and its OpenVINO IR on OpenVINO (in f32, and in bf16 where
/// the CPU has it), where the archive holds them or records why their conversion failed: such a
/// candidate's build fails with that cause, as it does where this build or this machine lacks
/// the runtime, so the report names it. Each runtime session is listed at every intra-op thread
/// count of `runtime_threads` (0: the runtime's default; by default default_runtime_threads,
/// one thread and the runtime's default; runtime_thread_counts gives a wider sweep); an OpenVINO
/// session on fewer threads than the hardware threads may make copies to serve as many callers
/// at once as fit (OpenVino::set_copies: cores / threads). Tuned at `callers` at once
/// (ProfilingConfig::set_callers: default_candidates_for_callers), an
/// OpenVINO session at the runtime's default threads is listed again with a stream per caller,
/// up to the cores. With `quantized` (a tuning under an accuracy budget: StrategyConfig::
/// set_accuracy_budget), the archive's quantised models (onnx_int8, openvino_int8: int8 at
/// export; an OpenVINO one in f32 and, where the CPU has it, bf16) join too, at the same thread
/// counts, and so do its quantised compilations (aoti_int8,
/// or the cause it could not be made); without it none is tried. For a TorchScript
/// model, default_candidates(device).
[[nodiscard]] inline std::vector<AnyBackend>
default_candidates(const Model& model,
                   const std::vector<int>& runtime_threads = default_runtime_threads(),
                   int callers = 1, bool quantized = false) {
  if (!model.is_exported()) return default_candidates(model.device);
  const Pt2Archive& archive = *model.archive;
  const AotiModelInfo* baseline = aoti_baseline_of(model);
  std::vector<AnyBackend> candidates;
  for (const auto& info : archive.aoti_models) {
    if (&info != baseline && info.quantization.empty()) {
      candidates.emplace_back(AOTInductor::from_archive(archive, info));
    }
  }
  for (const AotiModelInfo& info : unheld_compilations(archive))
    candidates.emplace_back(AOTInductor::from_archive(archive, info));
  if (runtime_threads.empty() ||
      std::any_of(runtime_threads.begin(), runtime_threads.end(), [](int n) { return n < 0; })) {
    throw ConfigError("default_candidates: the runtime sessions' thread counts are 0 (the "
                      "runtime's default) or more, at least one");
  }
  const unsigned cores = std::thread::hardware_concurrency();
  // A failed conversion is named once, not at every thread count; so are the conversions of an
  // archive whose records cannot be read (what they would have described is unknown).
  const auto at_counts = [&](const std::string& variant, auto make_session) {
    if (!archive.runtime_variants.contains(variant) || !archive.records_problem.empty()) {
      if (archive.failed_variants.contains(variant) ||
          archive.unusable_variants.contains(variant) || !archive.records_problem.empty()) {
        candidates.emplace_back(make_session());
      }
      return;
    }
    for (const int count : runtime_threads) {
      auto session = make_session();
      session.set_threads(count);
      // An OpenVINO session on fewer threads than the cores serves that many more callers at
      // once on copies of its own (ONNX Runtime runs each call on its caller's thread already).
      if constexpr (requires { session.set_copies(1); }) {
        if (count > 0 && cores / static_cast<unsigned>(count) > 1) {
          session.set_copies(static_cast<int>(cores / static_cast<unsigned>(count)));
        }
      }
      candidates.emplace_back(std::move(session));
      // Under a server's load, OpenVINO's default-thread session also with a stream per caller
      // (up to the cores), each with its share of them.
      if constexpr (requires { session.set_streams(1); }) {
        if (count == 0 && callers > 1 && cores > 1) {
          auto streams = make_session();
          streams.set_streams(std::min(callers, static_cast<int>(cores)));
          candidates.emplace_back(std::move(streams));
        }
      }
    }
  };
  // Every converted model, under whatever name the archive gives it (onnx, openvino, or a
  // name of the user's own); an OpenVINO one in bf16 too where the CPU has it.
  const auto sessions_of = [&](const std::string& variant) {
    if (variant_family(archive, variant) == "onnx") {
      at_counts(variant, [&] { return OnnxRuntime::from_archive(archive, variant); });
      return;
    }
    at_counts(variant, [&] { return OpenVino::from_archive(archive, Precision::fp32, variant); });
    // For a quantised IR, its float layers in bf16: OpenVINO's own default there, so what a
    // user who quantised by hand with NNCF runs (on a Zen 4 EPYC, SqueezeNet 1.1's int8 IR took
    // 0.85x the time of its fp32 run).
    if (archive.runtime_variants.contains(variant) && OpenVino::cpu_has_bf16()) {
      at_counts(variant, [&] { return OpenVino::from_archive(archive, Precision::bf16, variant); });
    }
  };
  for (const std::string& variant : converted_variants(archive, /*quantized=*/false))
    sessions_of(variant);
  if (!quantized) return candidates;
  for (const auto& info : archive.aoti_models) {
    if (!info.quantization.empty()) {
      candidates.emplace_back(AOTInductor::from_archive(archive, info));
    }
  }
  // A quantised compilation the export tool could not make (or repair): named, with its cause.
  if (const auto failed = archive.failed_variants.find("aoti_int8");
      failed != archive.failed_variants.end()) {
    AotiModelInfo info{failed->first};
    info.quantization = "int8";
    info.unusable = fmt::format("the aoti_int8 quantisation failed when '{}' was exported: {}",
                                archive.path.filename().string(), failed->second);
    candidates.emplace_back(AOTInductor::from_archive(archive, info));
  }
  for (const std::string& variant : converted_variants(archive, /*quantized=*/true))
    sessions_of(variant);
  return candidates;
}

/// default_candidates for a tuning at `callers` at once (ProfilingConfig::set_callers): the
/// sessions' thread counts of runtime_threads_for_callers, and OpenVINO's streams per caller.
/// At one caller, default_candidates(model).
[[nodiscard]] inline std::vector<AnyBackend>
default_candidates_for_callers(const Model& model, int callers, bool quantized = false) {
  return default_candidates(model, runtime_threads_for_callers(callers), callers, quantized);
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

/// `candidates`, then the baseline and each candidate that runs on LibTorch's threads at the
/// process's count (its torch_thread_use(); not an ONNX Runtime or OpenVINO session, which have
/// threads of their own: default_candidates' runtime_threads, nor a TorchThreads) again as
/// TorchThreads at each count of `counts` (1 or more; the process's own count and
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
  const AnyBackend baseline = make_baseline(model);
  on_torch_threads.push_back(&baseline);
  for (const AnyBackend& candidate : candidates) {
    if (candidate.torch_thread_use() == TorchThreadUse::process_count &&
        candidate.key() != baseline.key()) {
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

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
