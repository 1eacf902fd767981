// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The candidate catalogue: the backends worth trying for a model by default, and the candidates
/// by name (what `aitune-tune --backends` takes: "onnx@1", "aoti_freezing", "frozen"). It loops
/// over the families once; each family's header says what it tries and the names it answers to
/// (`default_sessions`, `names`, `named`), so a new family is one line in ArchiveFamilies.

#include "aitune/core/error.hpp"
#include "aitune/core/text/format.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/aot_inductor.hpp"
#include "aitune/torch/backends/candidate_plan.hpp"
#include "aitune/torch/backends/onnx_runtime.hpp"
#include "aitune/torch/backends/openvino.hpp"
#include "aitune/torch/backends/torchscript.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/wrappers/cuda_graph.hpp"
#include "aitune/torch/wrappers/perturbed_outputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// A list of backend families, each a class with a RuntimeFamily `family` and the static
/// members `default_sessions(model, plan, quantized)`, `names(archive, quantized)` and
/// `named(archive, name, quantized)` (an optional session).
template <class... Families>
struct FamilyList {};

/// The families a `.pt2` archive's candidates come from, in the order they are listed: its
/// AOTInductor compilations, then its ONNX models, then its OpenVINO IRs.
using ArchiveFamilies = FamilyList<AOTInductor, OnnxRuntime, OpenVino>;

/// The names of `families` ("aoti", "onnx", "openvino"), in their order: what a candidate's
/// identity says in its "family" field.
template <class... Families>
[[nodiscard]] std::vector<std::string> family_names(FamilyList<Families...>) {
  return {std::string(Families::family.name)...};
}

/// The candidates worth trying for a TorchScript model by default: frozen,
/// optimize_for_inference, channels-last, and the reduced precisions the device runs well (bf16
/// on the CPU; fp16 and bf16 on CUDA, where CUDA-graph replays of the frozen variants are added:
/// at batch size 1 launch overhead often dominates).
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

/// The candidates worth trying for `model` under `plan`: for a torch.export archive, each
/// family's default sessions (`Family::default_sessions`) in the order of `families`, first the
/// full-precision and reduced-precision ones, then, under an accuracy budget (plan.quantized),
/// the quantised ones. What the archive names but cannot run (a failed conversion, a record that
/// cannot be used, a runtime this build or machine lacks) still makes a candidate, whose build
/// fails with why, so the report names it. For a TorchScript model, default_candidates(device).
/// Throws ConfigError for thread counts a session cannot take (CandidatePlan::check).
template <class... Families>
[[nodiscard]] std::vector<AnyBackend>
default_candidates(const Model& model, const CandidatePlan& plan, FamilyList<Families...>) {
  if (!model.is_exported()) return default_candidates(model.device);
  plan.check();
  std::vector<AnyBackend> candidates;
  const auto add = [&](auto sessions) {
    for (auto& session : sessions)
      candidates.emplace_back(std::move(session));
  };
  (add(Families::default_sessions(model, plan, false)), ...);
  if (plan.quantized) (add(Families::default_sessions(model, plan, true)), ...);
  return candidates;
}

/// default_candidates(model, plan, families) for ArchiveFamilies.
[[nodiscard]] inline std::vector<AnyBackend> default_candidates(const Model& model,
                                                                const CandidatePlan& plan) {
  return default_candidates(model, plan, ArchiveFamilies{});
}

/// default_candidates(model, plan) for a plan of these fields: each runtime
/// session at every count of `runtime_threads` (0: the runtime's default), tuned at `callers` at
/// once, the quantised models joining where `quantized`.
[[nodiscard]] inline std::vector<AnyBackend>
default_candidates(const Model& model,
                   const std::vector<int>& runtime_threads = default_runtime_threads(),
                   int callers = 1, bool quantized = false) {
  CandidatePlan plan{runtime_threads, callers};
  plan.quantized = quantized;
  return default_candidates(model, plan, ArchiveFamilies{});
}

/// default_candidates for a tuning at `callers` at once (ProfilingConfig::set_callers):
/// CandidatePlan::for_callers's thread counts, and OpenVINO's streams per caller. At one caller,
/// default_candidates(model).
[[nodiscard]] inline std::vector<AnyBackend>
default_candidates_for_callers(const Model& model, int callers, bool quantized = false) {
  return default_candidates(model, CandidatePlan::for_callers(callers, quantized),
                            ArchiveFamilies{});
}

/// The names candidate_named takes for `model`. A TorchScript model: those of
/// script_candidates (eager, frozen, optimized, channels_last, bf16, fp16), and perturbed (wrong
/// outputs on purpose: the correctness check at work). A `.pt2` archive: each family's names
/// (`Family::names`) in the order of `families`, those of full-precision and reduced-precision
/// models first, then the quantised ones': its AOTInductor compilations; each converted
/// model's sessions under the variant's own name (onnx, onnx_main, openvino_int8), an ONNX
/// model's at a lower graph optimisation level too (onnx_extended, onnx_basic, onnx_disabled), an
/// OpenVINO IR's in bf16 too (openvino_bf16, openvino_int8_bf16). A runtime session's name takes
/// its intra-op thread count after an @ (onnx@1).
template <class... Families>
[[nodiscard]] std::vector<std::string> candidate_names(const Model& model,
                                                       FamilyList<Families...>) {
  std::vector<std::string> names;
  if (!model.is_exported()) {
    for (const ScriptCandidate& candidate : script_candidates)
      names.emplace_back(candidate.name);
    names.emplace_back("perturbed");
    return names;
  }
  const auto add = [&](std::vector<std::string> more) {
    for (std::string& name : more)
      names.push_back(std::move(name));
  };
  for (const bool quantized : {false, true})
    (add(Families::names(*model.archive, quantized)), ...);
  return names;
}

[[nodiscard]] inline std::vector<std::string> candidate_names(const Model& model) {
  return candidate_names(model, ArchiveFamilies{});
}

/// The candidate `name` stands for on `model` (candidate_names): forcing one family or one
/// session from C++ as `aitune-tune --backends` does. A quantised model (an int8 compilation or
/// converted model) only where `quantized` (a tuning under an accuracy budget). A named variant
/// the archive lacks, or whose record cannot be used, still makes its candidate: its build fails
/// with why, and the report says so. Throws ConfigError for a name the model has no candidate
/// under (listing those it has), a bad thread count, or a quantised model without `quantized`.
template <class... Families>
[[nodiscard]] AnyBackend candidate_named(const Model& model, const std::string& name,
                                         bool quantized, FamilyList<Families...> families) {
  if (!model.is_exported()) {
    for (const ScriptCandidate& candidate : script_candidates) {
      if (candidate.name == name) return candidate.make();
    }
    if (name == "perturbed") return PerturbedOutputs(TorchScriptFrozen());
  } else {
    std::optional<AnyBackend> found;
    const auto look = [&](auto session) {
      if (!found && session) found.emplace(std::move(*session));
    };
    // Each family is asked in turn, and one that knows the name answers (or throws why not).
    ((found ? void() : look(Families::named(*model.archive, name, quantized))), ...);
    if (found) return std::move(*found);
  }
  // The names are the archive's: cleaned, and a few dozen said (an archive may hold thousands).
  constexpr std::size_t listed_at_most = 40;
  const std::vector<std::string> names = candidate_names(model, families);
  std::vector<std::string> listed;
  for (std::size_t i = 0; i < names.size() && i < listed_at_most; ++i)
    listed.push_back(aitune::detail::printable_excerpt(names[i], 100));
  if (names.size() > listed_at_most)
    listed.push_back(fmt::format("and {} more", names.size() - listed_at_most));
  throw ConfigError(
      fmt::format("{} has no candidate named '{}': it has {}{}",
                  model.is_exported() ? fmt::format("'{}'", model.archive->path.string())
                                      : std::string("a TorchScript model"),
                  aitune::detail::printable_excerpt(name, 100), fmt::join(listed, ", "),
                  model.is_exported() ? " (a runtime session's with @THREADS where wanted)" : ""));
}

[[nodiscard]] inline AnyBackend candidate_named(const Model& model, const std::string& name,
                                                bool quantized = false) {
  return candidate_named(model, name, quantized, ArchiveFamilies{});
}

/// candidate_named for each of `names`, in order.
template <class... Families>
[[nodiscard]] std::vector<AnyBackend>
candidates_named(const Model& model, const std::vector<std::string>& names, bool quantized,
                 FamilyList<Families...> families) {
  std::vector<AnyBackend> candidates;
  for (const std::string& name : names)
    candidates.push_back(candidate_named(model, name, quantized, families));
  return candidates;
}

[[nodiscard]] inline std::vector<AnyBackend> candidates_named(const Model& model,
                                                              const std::vector<std::string>& names,
                                                              bool quantized = false) {
  return candidates_named(model, names, quantized, ArchiveFamilies{});
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
