// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Candidates by name: what `aitune-tune --backends` takes, for a library caller who wants to
/// force one family or one session ("onnx@1", "aoti_freezing", "frozen").

#include "aitune/core/error.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/aot_inductor.hpp"
#include "aitune/torch/backends/onnx_runtime.hpp"
#include "aitune/torch/backends/openvino.hpp"
#include "aitune/torch/backends/torchscript.hpp"
#include "aitune/torch/model/archive_variants.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/wrappers/perturbed_outputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

namespace detail {

/// A TorchScript model's candidates by name.
struct ScriptCandidate {
  std::string_view name;
  AnyBackend (*make)();
};
inline const ScriptCandidate script_candidates[] = {
    {"eager", [] { return AnyBackend(TorchEager()); }},
    {"frozen", [] { return AnyBackend(TorchScriptFrozen()); }},
    {"optimized", [] { return AnyBackend(TorchScriptOptimized()); }},
    {"channels_last", [] { return AnyBackend(ChannelsLast()); }},
    {"bf16", [] { return AnyBackend(TorchScriptFrozen(c10::ScalarType::BFloat16)); }},
    {"fp16", [] { return AnyBackend(TorchScriptFrozen(c10::ScalarType::Half)); }},
    // Wrong outputs on purpose: shows the correctness check at work.
    {"perturbed", [] { return AnyBackend(PerturbedOutputs(TorchScriptFrozen())); }},
};

/// A session of a converted variant by name: the variant and what the name's suffix sets.
struct SessionName {
  std::string name;  ///< "onnx_basic"
  std::string variant;
  std::string family;
  OnnxOptimization optimization = OnnxOptimization::all;
  Precision precision = Precision::fp32;
};

/// Every converted variant's sessions by name in `archive`: those it holds or names (usable or
/// not) and the export tool's own names (which fail with why where the archive lacks them). An
/// ONNX model's at each graph optimisation level (onnx, onnx_extended, onnx_basic,
/// onnx_disabled), an OpenVINO IR's in f32 and bf16 (openvino, openvino_bf16).
[[nodiscard]] inline std::vector<SessionName> session_names(const Pt2Archive& archive) {
  std::vector<std::string> variants = converted_variants(archive, false);
  for (std::string& name : converted_variants(archive, true))
    variants.push_back(std::move(name));
  for (const char* name : {"onnx", "openvino", "onnx_int8", "openvino_int8"}) {
    if (std::find(variants.begin(), variants.end(), name) == variants.end())
      variants.emplace_back(name);
  }
  std::vector<SessionName> names;
  for (const std::string& variant : variants) {
    std::string family = variant_family(archive, variant);
    if (family.empty()) family = family_by_name(variant);  // the export tool's, not held
    if (family == "onnx") {
      names.push_back({variant, variant, family});
      for (const OnnxOptimization level :
           {OnnxOptimization::extended, OnnxOptimization::basic, OnnxOptimization::disabled}) {
        names.push_back({fmt::format("{}_{}", variant, OnnxRuntime::optimization_name(level)),
                         variant, family, level});
      }
    } else if (family == "openvino") {
      names.push_back({variant, variant, family});
      names.push_back({variant + "_bf16", variant, family, OnnxOptimization::all, Precision::bf16});
    }
  }
  return names;
}

/// Throws ConfigError for the reduced-precision model `name` (of `quantization`) in a tuning
/// without an accuracy budget.
inline void refuse_unbudgeted(const std::string& name, const std::string& quantization,
                              bool quantized) {
  if (quantized) return;
  throw ConfigError(fmt::format("'{}': an {} model moves the outputs past any tolerance; say how "
                                "far they may move with an accuracy budget "
                                "(StrategyConfig::set_accuracy_budget; aitune-tune --accuracy)",
                                name, quantization));
}

}  // namespace detail

/// The most threads a runtime session may be given: this machine's hardware threads. More only
/// oversubscribe the cores, and a session makes its threads when it is created, which no stop
/// can interrupt (ONNX Runtime took over a minute to make 4096 on 2 cores). 4096 where the count
/// is unknown.
[[nodiscard]] inline int max_session_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 4096 : static_cast<int>(std::min(cores, 4096U));
}

/// A runtime session's thread count as text: a whole number from `least` to
/// max_session_threads(), else nothing.
[[nodiscard]] inline std::optional<int> session_thread_count(std::string_view text, int least) {
  int threads = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), threads);
  if (error != std::errc() || end != text.data() + text.size() || threads < least ||
      threads > max_session_threads()) {
    return std::nullopt;
  }
  return threads;
}

/// The session thread count after the @ of `name` ("onnx@2"), or 0 (the runtime's default)
/// without one. Throws ConfigError unless it is a whole number from 1 to the hardware threads.
[[nodiscard]] inline int session_threads_of(const std::string& name) {
  const auto at = name.find('@');
  if (at == std::string::npos) return 0;
  const std::optional<int> threads = session_thread_count(std::string_view(name).substr(at + 1), 1);
  if (!threads) {
    throw ConfigError(fmt::format("'{}': after the @ comes the session's thread count, from 1 "
                                  "to {} (this machine's hardware threads)",
                                  name, max_session_threads()));
  }
  return *threads;
}

/// The names candidate_named takes for `model`. A TorchScript model: eager, frozen, optimized,
/// channels_last, bf16, fp16, perturbed (wrong outputs on purpose). A `.pt2` archive: the names
/// of its AOTInductor compilations, then each converted model's sessions under the variant's own
/// name (onnx, onnx_main, openvino_int8): an ONNX model's at a lower graph optimisation level
/// too (onnx_extended, onnx_basic, onnx_disabled), an OpenVINO IR's in bf16 too (openvino_bf16,
/// openvino_int8_bf16). A session's name takes its intra-op thread count after an @ (onnx@1).
[[nodiscard]] inline std::vector<std::string> candidate_names(const Model& model) {
  std::vector<std::string> names;
  if (!model.is_exported()) {
    for (const auto& candidate : detail::script_candidates)
      names.emplace_back(candidate.name);
    return names;
  }
  for (const AotiModelInfo& info : model.archive->aoti_models)
    names.push_back(info.name);
  for (const AotiModelInfo& info : unheld_compilations(*model.archive))
    names.push_back(info.name);
  for (detail::SessionName& session : detail::session_names(*model.archive))
    names.push_back(std::move(session.name));
  return names;
}

/// The candidate `name` stands for on `model` (candidate_names): forcing one family or one
/// session from C++ as `aitune-tune --backends` does. A quantised model (an int8 compilation or
/// converted model) only where `quantized` (a tuning under an accuracy budget). A named variant
/// the archive lacks, or whose record cannot be used, still makes its candidate: its build fails
/// with why, and the report says so. Throws ConfigError for a name the model has no candidate
/// under (listing those it has), a bad thread count, or a quantised model without `quantized`.
[[nodiscard]] inline AnyBackend candidate_named(const Model& model, const std::string& name,
                                                bool quantized = false) {
  const auto unknown = [&] {
    // The names are the archive's: cleaned, and a few dozen said (an archive may hold thousands).
    constexpr std::size_t listed_at_most = 40;
    const std::vector<std::string> names = candidate_names(model);
    std::vector<std::string> listed;
    for (std::size_t i = 0; i < names.size() && i < listed_at_most; ++i)
      listed.push_back(aitune::detail::printable_excerpt(names[i], 100));
    if (names.size() > listed_at_most)
      listed.push_back(fmt::format("and {} more", names.size() - listed_at_most));
    return ConfigError(fmt::format(
        "{} has no candidate named '{}': it has {}{}",
        model.is_exported() ? fmt::format("'{}'", model.archive->path.string())
                            : std::string("a TorchScript model"),
        aitune::detail::printable_excerpt(name, 100), fmt::join(listed, ", "),
        model.is_exported() ? " (a runtime session's with @THREADS where wanted)" : ""));
  };
  if (!model.is_exported()) {
    for (const auto& candidate : detail::script_candidates) {
      if (candidate.name == name) return candidate.make();
    }
    throw unknown();
  }
  const Pt2Archive& archive = *model.archive;
  const std::string base = name.substr(0, name.find('@'));
  for (const detail::SessionName& session : detail::session_names(archive)) {
    if (session.name != base) continue;
    const int threads = session_threads_of(name);
    if (is_quantized_variant(archive, session.variant)) {
      const auto recorded = archive.runtime_variants.find(session.variant);
      detail::refuse_unbudgeted(
          base, recorded == archive.runtime_variants.end() ? "int8" : recorded->second.quantization,
          quantized);
    }
    if (session.family == "onnx") {
      return OnnxRuntime::from_archive(archive, session.variant)
          .set_optimization(session.optimization)
          .set_threads(threads);
    }
    return OpenVino::from_archive(archive, session.precision, session.variant).set_threads(threads);
  }
  std::vector<AotiModelInfo> compiled = archive.aoti_models;
  for (AotiModelInfo& info : unheld_compilations(archive))
    compiled.push_back(std::move(info));
  const auto found = std::find_if(compiled.begin(), compiled.end(),
                                  [&](const AotiModelInfo& info) { return info.name == name; });
  if (found == compiled.end()) throw unknown();
  if (!found->quantization.empty()) detail::refuse_unbudgeted(name, found->quantization, quantized);
  return AOTInductor::from_archive(archive, *found);
}

/// candidate_named for each of `names`, in order.
[[nodiscard]] inline std::vector<AnyBackend> candidates_named(const Model& model,
                                                              const std::vector<std::string>& names,
                                                              bool quantized = false) {
  std::vector<AnyBackend> candidates;
  for (const std::string& name : names)
    candidates.push_back(candidate_named(model, name, quantized));
  return candidates;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
