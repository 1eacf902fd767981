// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What the backends of other runtimes (ONNX Runtime, OpenVINO) share: the converted model a
/// `.pt2` archive holds (tools/export_model.py writes it beside the AOTInductor compilations),
/// the sample's inputs in the order the converted graph takes them, and its flat outputs rebuilt
/// into the structure the program returns (model/output_structure.hpp), so such a candidate returns
/// what the baseline returns; and RuntimeSession, the base of such a backend: what it is apart
/// from its runtime's calls.

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/report/backend_identity.hpp"
#include "aitune/core/text/format.hpp"
#include "aitune/torch/backends/candidate_plan.hpp"
#include "aitune/torch/backends/family.hpp"
#include "aitune/torch/check/calibration_inputs.hpp"
#include "aitune/torch/check/stored_reference.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/archive_variants.hpp"
#include "aitune/torch/model/input_gate.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/model/output_structure.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// A converted model read from a model's archive: its files' bytes, its inputs' places in a
/// sample, and the structure its flat outputs are rebuilt into.
struct ConvertedModel {
  RuntimeVariantInfo info;
  std::vector<std::string> files{};  ///< the bytes of info.records, in order
  /// For each of the graph's inputs, the index of the sample's value it takes.
  std::vector<std::size_t> input_order{};
  std::optional<OutputStructure> structure{};
  std::string unknown_structure{};         ///< why there is no structure
  std::vector<std::size_t> none_leaves{};  ///< the structure's None leaves, which have no output

  /// Reads the variant `variant` ("onnx", "openvino") of `model`'s archive, a model of
  /// `family` (the runtime's, "onnx" or "openvino"). Throws an Error that says why there is
  /// none: a TorchScript model, a conversion that failed at export (with the cause recorded
  /// then), an archive made without it, or a record of another family under its name.
  [[nodiscard]] static ConvertedModel read(const Model& model, const std::string& variant,
                                           const std::string& runtime, const std::string& family) {
    if (!model.archive) {
      throw Error(fmt::format("{} runs the '{}' model of a .pt2 archive (tools/export_model.py "
                              "--variants {}); this model is TorchScript",
                              runtime, variant, variant));
    }
    const Pt2Archive& archive = *model.archive;
    const auto found = archive.runtime_variants.find(variant);
    if (!archive.records_problem.empty()) throw Error(archive.records_problem);
    if (const auto unusable = archive.unusable_variants.find(variant);
        unusable != archive.unusable_variants.end()) {
      throw Error(unusable->second);
    }
    if (found == archive.runtime_variants.end()) {
      if (const auto failed = archive.failed_variants.find(variant);
          failed != archive.failed_variants.end()) {
        throw Error(fmt::format("the {} conversion failed when '{}' was exported: {}", variant,
                                archive.path.filename().string(), failed->second));
      }
      throw Error(fmt::format("'{}' holds no {} model (tools/export_model.py --variants ...,{} "
                              "writes one)",
                              archive.path.string(), variant, variant));
    }
    if (found->second.family != family) {
      // Its files would be read as another runtime's (an index past its one record).
      throw Error(fmt::format("the archive's extra/aitune.json records variants.{} as of the "
                              "family '{}': {} runs models of the family '{}'",
                              aitune::detail::printable_excerpt(variant, 100), found->second.family,
                              runtime, family));
    }
    ConvertedModel converted{found->second};
    for (const auto& record : converted.info.records) {
      converted.files.push_back(detail::read_archive_record(archive.path, record));
    }
    converted.read_structure(archive);
    return converted;
  }

  /// Throws when one of `samples` is an input this model was calibrated on
  /// (aitune::lt::refuse_calibration_inputs).
  void refuse_calibration_inputs(std::span<const Sample> samples) const {
    lt::refuse_calibration_inputs(info.calibration_digests, info.name, samples);
  }

  /// The output structure `archive` records, and its None leaves, into which outputs() rebuilds
  /// the flat outputs; where it cannot be used, unknown_structure says why (the outputs then
  /// come back flat).
  void read_structure(const Pt2Archive& archive) {
    structure.reset();
    none_leaves = archive.output_none_leaves;
    if (!archive.output_spec_problem.empty()) {
      unknown_structure = archive.output_spec_problem;
    } else if (archive.output_spec.empty()) {
      unknown_structure = "its archive records no output structure";
    } else if (auto parsed = parse_output_structure(archive.output_spec);
               std::holds_alternative<OutputStructure>(parsed)) {
      structure = std::get<OutputStructure>(std::move(parsed));
      unknown_structure = none_leaves_problem();
      if (!unknown_structure.empty()) structure.reset();
    } else {
      unknown_structure = "its output structure cannot be used: " + std::get<std::string>(parsed);
    }
  }

  /// Places the graph's inputs, named `graph_inputs` in its order, in a sample of the model's
  /// inputs, named `model_inputs` (input_names_of): by name where every graph input has one
  /// there (a converter may leave out an input the model never reads), else by position.
  void place_inputs(const std::vector<std::string>& graph_inputs,
                    const std::vector<std::string>& model_inputs) {
    input_order.clear();
    for (const auto& name : graph_inputs) {
      const auto at = std::find(model_inputs.begin(), model_inputs.end(), name);
      if (at == model_inputs.end()) break;
      input_order.push_back(static_cast<std::size_t>(at - model_inputs.begin()));
    }
    if (input_order.size() == graph_inputs.size()) return;
    input_order.clear();
    for (std::size_t i = 0; i < graph_inputs.size(); ++i)
      input_order.push_back(i);
  }

  /// The sample's tensor for the graph's input `i`, contiguous on the CPU.
  [[nodiscard]] at::Tensor input(const Sample& sample, std::size_t i,
                                 std::string_view runtime) const {
    const std::size_t index = input_order.at(i);
    if (index >= sample.size()) {
      throw Error(fmt::format("{} takes {} inputs; the sample has {}", runtime, input_order.size(),
                              sample.size()));
    }
    if (!sample[index].isTensor()) {
      throw Error(fmt::format("{} takes tensors only; input {} is a {}", runtime, index,
                              sample[index].tagKind()));
    }
    return sample[index].toTensor().to(c10::kCPU).contiguous();
  }

  /// The graph's flat outputs in the program's structure (an undefined tensor, which becomes
  /// None, in the place of each None leaf), or flat where the structure is unknown.
  [[nodiscard]] c10::IValue outputs(std::vector<at::Tensor> flat) const {
    if (!structure || !fits(flat.size())) return flat_outputs(std::move(flat));
    for (const std::size_t leaf : none_leaves)  // ascending: each lands in its place
      flat.insert(flat.begin() + static_cast<std::ptrdiff_t>(leaf), at::Tensor());
    return rebuild_outputs(*structure, flat);
  }

  /// Why the outputs come back flat (empty when they are rebuilt): for the correctness check.
  [[nodiscard]] std::string flat_reason(std::size_t outputs) const {
    if (!structure) return unknown_structure;
    if (!fits(outputs)) {
      return fmt::format("it returns {} outputs and its output structure has {} (of them {} None)",
                         outputs, structure->leaves(), none_leaves.size());
    }
    return {};
  }

 private:
  /// Why the archive's None leaves cannot be placed in the structure (empty when they can):
  /// each must be a leaf of it, named once, in increasing order (outputs() inserts them so).
  [[nodiscard]] std::string none_leaves_problem() const {
    const bool increasing = std::adjacent_find(none_leaves.begin(), none_leaves.end(),
                                               [](std::size_t a, std::size_t b) {
                                                 return a >= b;
                                               }) == none_leaves.end();
    const bool within = std::all_of(none_leaves.begin(), none_leaves.end(),
                                    [&](std::size_t leaf) { return leaf < structure->leaves(); });
    if (increasing && within) return {};
    std::vector<std::size_t> shown(none_leaves.begin(),
                                   none_leaves.begin() +
                                       std::min<std::ptrdiff_t>(8, std::ssize(none_leaves)));
    return fmt::format("its archive's None leaves [{}{}] are not {} of its output structure's {}",
                       fmt::join(shown, ", "), none_leaves.size() > shown.size() ? ", ..." : "",
                       increasing ? "all leaves" : "in increasing order, each once, the leaves",
                       structure->leaves());
  }

  /// Whether `outputs` outputs and the None leaves fill the structure, the Nones each once, in
  /// increasing order and in its range.
  [[nodiscard]] bool fits(std::size_t outputs) const {
    return outputs + none_leaves.size() == structure->leaves() && none_leaves_problem().empty();
  }
};

/// The torch dtype that `to_runtime` (a family's map of torch dtypes to its element types) maps
/// to `type`; nullopt for one torch has not (ONNX's strings). One map, read both ways.
template <class RuntimeType, class ToRuntime>
[[nodiscard]] std::optional<c10::ScalarType> torch_dtype_of(const RuntimeType& type,
                                                            ToRuntime to_runtime) {
  for (const auto dtype : {c10::ScalarType::Float, c10::ScalarType::Double, c10::ScalarType::Half,
                           c10::ScalarType::BFloat16, c10::ScalarType::Long, c10::ScalarType::Int,
                           c10::ScalarType::Short, c10::ScalarType::Char, c10::ScalarType::Byte,
                           c10::ScalarType::Bool}) {
    if (to_runtime(dtype) == type) return dtype;
  }
  return std::nullopt;
}

/// Which of an archive's converted models of one family a session runs: the family's own
/// ("onnx", "openvino") or another variant of it, such as its int8 quantisation ("onnx_int8").
struct VariantChoice {
  std::string name;
  std::string quantization{};  ///< as the archive records it ("int8"); empty: none
  bool takes_range = false;

  /// `variant` of `archive` (its record read: quantization, range).
  [[nodiscard]] static VariantChoice of(const Pt2Archive& archive, std::string variant) {
    VariantChoice choice{std::move(variant)};
    if (const auto found = archive.runtime_variants.find(choice.name);
        found != archive.runtime_variants.end()) {
      choice.quantization = found->second.quantization;
      choice.takes_range = found->second.takes_range;
    }
    return choice;
  }

  /// ", int8" for a quantised model (in describe()), else nothing.
  [[nodiscard]] std::string described() const {
    return quantization.empty() ? std::string() : ", " + quantization;
  }
  /// ":onnx_main" (in describe(), after the archive's name) for a variant of `family` under a
  /// name of its own, not the family's nor the export tool's int8 one: two of a family tell
  /// apart. Else nothing.
  [[nodiscard]] std::string named(std::string_view family) const {
    if (name == family || name == fmt::format("{}_int8", family)) return {};
    return ":" + aitune::detail::printable_excerpt(name, 100);
  }
  /// ":onnx_int8" where it is not the family's own (`family`): the keys of those stay as they
  /// were before other variants existed.
  [[nodiscard]] std::string keyed(std::string_view family) const {
    return name == family ? std::string() : ":" + name;
  }
};

/// The base of a backend that runs one of an archive's converted models on another runtime
/// (OnnxRuntime, OpenVino): the archive and variant it runs, its thread count, what its build
/// checks before the runtime sees the model, the gate every call passes first, the traits the
/// tuner asks of it, and the family's part of the catalogue (default_sessions, names, named).
/// `Derived` names its `family` (a RuntimeFamily), lists the sessions it tries of one variant
/// (`sessions_of(archive, variant, plan)`), says how a session at a thread count is set for a
/// plan (`at_count(session, count, plan)`, which may return another session to try after it), and
/// the names it answers to for one variant (`named_forms(archive, variant)`: each name with its
/// session); it opens its session, runs calls and says what it is (describe, key, identity).
template <class Derived>
class RuntimeSession : public BackendLifecycle<Derived> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  /// The family's default sessions of `model`'s archive for `plan`: Derived::sessions_of each
  /// variant of the family it holds or names (converted_variants), the quantised ones where
  /// `quantized`, the others where not.
  [[nodiscard]] static std::vector<Derived>
  default_sessions(const Model& model, const CandidatePlan& plan, bool quantized) {
    std::vector<Derived> sessions;
    if (!model.is_exported()) return sessions;
    const Pt2Archive& archive = *model.archive;
    for (const std::string& variant : converted_variants(archive, quantized)) {
      if (variant_family(archive, variant) != Derived::family.name) continue;
      for (Derived& session : Derived::sessions_of(archive, variant, plan))
        sessions.push_back(std::move(session));
    }
    return sessions;
  }

  /// The names the family answers to in `archive` (Derived::named_forms of each variant
  /// named_variants lists): of its quantised variants where `quantized`, of the others where not.
  /// Each takes a thread count after an @ ("onnx@1").
  [[nodiscard]] static std::vector<std::string> names(const Pt2Archive& archive, bool quantized) {
    std::vector<std::string> all;
    for (const std::string& variant : named_variants(archive)) {
      if (is_quantized_variant(archive, variant) != quantized) continue;
      for (auto& [name, session] : Derived::named_forms(archive, variant))
        all.push_back(std::move(name));
    }
    return all;
  }

  /// The session `name` stands for in `archive` (names), at the thread count after its @; none
  /// where the family has no such name. Throws ConfigError for a bad thread count, or for a
  /// quantised variant's session unless `quantized` (a tuning under an accuracy budget).
  [[nodiscard]] static std::optional<Derived> named(const Pt2Archive& archive,
                                                    const std::string& name, bool quantized) {
    const std::string base = name.substr(0, name.find('@'));
    for (const std::string& variant : named_variants(archive)) {
      for (auto& [form, session] : Derived::named_forms(archive, variant)) {
        if (form != base) continue;
        const int threads = session_threads_of(name);
        if (is_quantized_variant(archive, variant)) {
          const auto recorded = archive.runtime_variants.find(variant);
          refuse_unbudgeted(base,
                            recorded == archive.runtime_variants.end()
                                ? std::string("int8")
                                : recorded->second.quantization,
                            quantized);
        }
        // Set as a tuning sets its default session at that count: a name builds the same key.
        session.set_threads(threads);
        (void)Derived::at_count(session, threads, CandidatePlan{});
        return std::move(session);
      }
    }
    return std::nullopt;
  }

  /// The threads the runtime runs one call on; 0 (the default) lets it pick.
  Derived& set_threads(int threads) {
    if (threads < 0) {
      throw ConfigError(
          fmt::format("{}'s thread count cannot be negative", Derived::family.runtime));
    }
    threads_ = threads;
    return static_cast<Derived&>(*this);
  }
  [[nodiscard]] int threads() const noexcept { return threads_; }

  /// The archive it loads the model from: the tuning cache's key covers its content.
  [[nodiscard]] std::vector<std::filesystem::path> loaded_files() const {
    return package_.empty() ? std::vector<std::filesystem::path>{}
                            : std::vector<std::filesystem::path>{package_};
  }
  /// Calls from several threads run at once (each runtime says how).
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return true; }
  /// The converted model it runs: every session of it shares its verdict, whatever its threads
  /// or precision, and so do the family's other variants of it, made from it
  /// (aitune::graph_of).
  [[nodiscard]] std::string graph() const {
    return std::string(Derived::family.name) + ":" + package_.string();
  }
  /// The archive's variant it runs ("onnx", "onnx_int8").
  [[nodiscard]] const std::string& variant() const noexcept { return variant_.name; }
  /// Its calls run on the runtime's own threads (set_threads), not LibTorch's.
  [[nodiscard]] static constexpr TorchThreadUse torch_thread_use() noexcept {
    return TorchThreadUse::none;
  }
  /// Converted for the example inputs' shapes, but on the axes exported as a range where the
  /// archive's record says it takes the range.
  [[nodiscard]] static constexpr bool shape_specialised() noexcept { return true; }
  [[nodiscard]] bool takes_range() const noexcept { return variant_.takes_range; }

 protected:
  /// The variants of the family a name may stand for in `archive`: those it holds or names
  /// (usable or not), then the export tool's own ("onnx", "onnx_int8"), which fail with why where
  /// the archive lacks them.
  [[nodiscard]] static std::vector<std::string> named_variants(const Pt2Archive& archive) {
    std::vector<std::string> variants;
    for (const bool quantized : {false, true}) {
      for (std::string& variant : converted_variants(archive, quantized)) {
        if (variant_family(archive, variant) == Derived::family.name)
          variants.push_back(std::move(variant));
      }
    }
    const std::string own(Derived::family.name);
    for (const std::string& tool_name : {own, own + "_int8"}) {
      if (std::find(variants.begin(), variants.end(), tool_name) == variants.end())
        variants.push_back(tool_name);
    }
    return variants;
  }

  /// `make()` at each of `plan`'s thread counts, each then set for the plan by
  /// Derived::at_count, which may return another session to list after it; `make()` alone,
  /// unshaped, for a variant the archive names but cannot run (its conversion failed, its record
  /// cannot be used, or its records cannot be read): its build says why, and the report names it
  /// once, not at every count.
  template <class Make>
  static void at_thread_counts(const Pt2Archive& archive, const std::string& variant,
                               const CandidatePlan& plan, std::vector<Derived>& sessions,
                               Make make) {
    if (!archive.runtime_variants.contains(variant) || !archive.records_problem.empty()) {
      if (archive.failed_variants.contains(variant) ||
          archive.unusable_variants.contains(variant) || !archive.records_problem.empty()) {
        sessions.push_back(make());
      }
      return;
    }
    for (const int count : plan.runtime_threads) {
      Derived session = make();
      session.set_threads(count);
      std::optional<Derived> next = Derived::at_count(session, count, plan);
      sessions.push_back(std::move(session));
      if (next) sessions.push_back(std::move(*next));
    }
  }

  /// The fields every session's identity has: its family, variant, archive, threads and the
  /// variant's quantisation (empty: none).
  [[nodiscard]] BackendIdentity session_identity() const {
    return {{"family", std::string(Derived::family.name)},
            {"variant", variant_.name},
            {"package", package_.string()},
            {"threads", threads_},
            {"quantization", variant_.quantization}};
  }

  explicit RuntimeSession(std::filesystem::path package)
      : package_(std::move(package)), variant_{std::string(Derived::family.name)} {}

  /// What a build checks before the runtime sees the model: the archive is the one it was made
  /// for, its variant is there and of the family, no sample is a calibration input, and the
  /// model is on the CPU; then reads the model's input names and what a call takes.
  void read_converted(const Model& model, std::span<const Sample> samples) {
    const auto& self = static_cast<const Derived&>(*this);
    if (model.archive && !package_.empty() && model.archive->path != package_) {
      throw Error(fmt::format("{} was made for '{}', but the model is '{}'", self.describe(),
                              package_.string(), model.archive->path.string()));
    }
    if (model.archive) package_ = model.archive->path;
    converted_ = ConvertedModel::read(model, variant_.name, Derived::family.runtime,
                                      std::string(Derived::family.name));
    converted_.refuse_calibration_inputs(samples);
    if (!model.device.is_cpu()) {
      throw Error(fmt::format("{} runs on the CPU here ({}); the model is tuned on {}",
                              Derived::family.runtime, Derived::family.cpu_device,
                              model.device.str()));
    }
    model_inputs_ = input_names_of(model);
    gate_ = InputGate::of(model, samples, variant_.takes_range,
                          fmt::format("{} models", Derived::family.runtime));
  }

  /// Refuses a sample a call cannot take, as a TunedModule would, never leaving it to the
  /// runtime (an index out of bounds is answered, and OpenVINO at one thread hands back the
  /// previous request's outputs).
  void check_call(const Sample& sample) const {
    gate_.check(sample, [this] { return static_cast<const Derived&>(*this).describe(); });
  }

  // The life-cycle steps every family shares. It writes, where this build has its runtime,
  // open() (its session from the converted model, kept so that activate can open it again) and
  // run() (one call); close(); `missing_runtime`, how a build gets the runtime ({0}: its name);
  // and a do_build of its own where its build checks more first.
  friend class BackendLifecycle<Derived>;

  void do_build(const Model& model, std::span<const Sample> samples) {
    read_converted(model, samples);
    open_session();
  }
  /// Derived::open(), where this build has the runtime; else throws what it lacks.
  void open_session() {
    if constexpr (Derived::available()) {
      self().open();
    } else {
      throw Error(fmt::format(
          "this build has no {} ({})", Derived::family.runtime,
          fmt::format(fmt::runtime(Derived::missing_runtime), Derived::family.runtime)));
    }
  }
  /// A call passes the gate first (check_call), then runs on the runtime, where this build has
  /// it.
  c10::IValue do_infer(const Sample& sample) {
    check_call(sample);
    if constexpr (Derived::available()) {
      return self().run(sample);
    } else {
      throw Error(fmt::format("this build has no {}", Derived::family.runtime));
    }
  }
  void do_activate() { open_session(); }
  void do_deactivate() { self().close(); }

  /// `policy` with what the variant adds: its quantisation, and why outputs come back flat.
  [[nodiscard]] OutputPolicy with_variant(OutputPolicy policy) const {
    policy.quantization = variant_.quantization;
    policy.unknown_structure = unknown_structure_;
    return policy;
  }

  Derived& self() { return static_cast<Derived&>(*this); }

  std::filesystem::path package_{};
  int threads_ = 0;
  VariantChoice variant_;  ///< the archive's model it runs
  ConvertedModel converted_{};
  std::vector<std::string> model_inputs_{};  ///< the model's input names (input_names_of)
  InputGate gate_{};                         ///< what a call takes, from build
  std::string unknown_structure_{};          ///< why outputs come back flat, once opened
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
