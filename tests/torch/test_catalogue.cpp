// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// The candidate catalogue (torch/tune/catalogue.hpp): its names cover every family, a name builds
// the key of the default candidate it stands for, a family joins by one line in a family list,
// and every candidate says what it is in its identity. Nothing is built: an archive's contents
// are written out here, as its records would give them.

#include "torch/torch_catch.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace aitune;
using namespace aitune::lt;

namespace {

/// An archive that holds a model of every family in full precision and in int8: what
/// tools/export_model.py --variants aoti_default,aoti_int8,onnx,onnx_int8,openvino,openvino_int8
/// writes. AOTInductor's compilations are candidates where the native runtime is the baseline.
Model every_family() {
  Model model;
  model.archive = Pt2Archive{"every_family.pt2", {"model"}, {}};
  model.archive->aoti_models.push_back({"aoti_default"});
  AotiModelInfo aoti_int8{"aoti_int8"};
  aoti_int8.quantization = "int8";
  model.archive->aoti_models.push_back(aoti_int8);
  for (const std::string family : {"onnx", "openvino"}) {
    model.archive->runtime_variants.emplace(family, RuntimeVariantInfo{family, {}, family});
    RuntimeVariantInfo int8{family + "_int8", {}, family};
    int8.quantization = "int8";
    model.archive->runtime_variants.emplace(int8.name, int8);
  }
  return model;
}

std::vector<std::string> keys_of(const std::vector<AnyBackend>& candidates) {
  std::vector<std::string> keys;
  for (const AnyBackend& candidate : candidates)
    keys.push_back(candidate.key());
  return keys;
}

std::set<std::string> families_of(const std::vector<AnyBackend>& candidates) {
  std::set<std::string> families;
  for (const AnyBackend& candidate : candidates)
    families.insert(identity_text(candidate.identity(), "family"));
  return families;
}

/// A made-up runtime family, as its own header would declare it: a backend that hands back its
/// sample's first input, its RuntimeFamily, and its part of the catalogue.
class EchoRuntime : public BackendLifecycle<EchoRuntime> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  static constexpr RuntimeFamily family{"echo", "Echo", "its CPU", "echo"};

  explicit EchoRuntime(int threads = 0) : threads_(threads) {}

  [[nodiscard]] static std::vector<EchoRuntime>
  default_sessions(const Model&, const CandidatePlan& plan, bool quantized) {
    std::vector<EchoRuntime> sessions;
    if (quantized) return sessions;
    for (const int count : plan.runtime_threads)
      sessions.emplace_back(count);
    return sessions;
  }
  [[nodiscard]] static std::vector<std::string> names(const Pt2Archive&, bool quantized) {
    if (quantized) return {};
    return {std::string(family.name)};
  }
  [[nodiscard]] static std::optional<EchoRuntime> named(const Pt2Archive&, const std::string& name,
                                                        bool) {
    if (name.substr(0, name.find('@')) != family.name) return std::nullopt;
    return EchoRuntime(session_threads_of(name));
  }

  [[nodiscard]] std::string describe() const { return fmt::format("Echo({})", threads_); }
  [[nodiscard]] std::string key() const { return fmt::format("{}:{}", family.key, threads_); }
  [[nodiscard]] BackendIdentity identity() const {
    return {{"family", std::string(family.name)}, {"threads", threads_}};
  }

 private:
  friend class BackendLifecycle<EchoRuntime>;
  void do_build(const Model&, std::span<const Sample>) {}
  c10::IValue do_infer(const Sample& sample) { return sample.at(0); }

  int threads_;
};

}  // namespace

TEST_CASE("The catalogue's names cover every family, and each family's defaults are among them",
          "[catalogue]") {
  const Model model = every_family();
  const std::vector<std::string> names = candidate_names(model);
  std::vector<AnyBackend> named;
  for (const std::string& name : names)
    named.push_back(candidate_named(model, name, /*quantized=*/true));
  INFO(fmt::format("names: {}", fmt::join(names, ", ")));
  // Full-precision and reduced-precision models' names first, then the quantised ones'.
  CHECK(names == std::vector<std::string>{"aoti_default", "onnx", "onnx_extended", "onnx_basic",
                                          "onnx_disabled", "openvino", "openvino_bf16", "aoti_int8",
                                          "onnx_int8", "onnx_int8_extended", "onnx_int8_basic",
                                          "onnx_int8_disabled", "openvino_int8",
                                          "openvino_int8_bf16"});
  // One name at least per family of the list, and no candidate of a family outside it.
  const std::vector<std::string> families = family_names(ArchiveFamilies{});
  CHECK(families == std::vector<std::string>{"aoti", "onnx", "openvino"});
  CHECK(families_of(named) == std::set<std::string>(families.begin(), families.end()));
  // Every default candidate at the runtime's default threads has a name that builds its key
  // (the defaults' thread counts are the names' @THREADS: the next test).
  CandidatePlan plan{{0}};
  plan.quantized = true;
  const std::vector<std::string> named_keys = keys_of(named);
  for (const std::string& key : keys_of(default_candidates(model, plan, ArchiveFamilies{}))) {
    INFO(key);
    CHECK(std::find(named_keys.begin(), named_keys.end(), key) != named_keys.end());
  }
  // A TorchScript model's names are TorchScript's, and perturbed.
  const Model script;
  const std::vector<std::string> script_names = candidate_names(script);
  CHECK(script_names.front() == "eager");
  CHECK(script_names.back() == "perturbed");
  for (const std::string& name : script_names) {
    CHECK(identity_text(candidate_named(script, name).identity(), "family") ==
          ScriptModuleBackend::family.name);
  }
}

TEST_CASE("Names build the keys the default candidates have, at each thread count and for "
          "callers at once",
          "[catalogue]") {
  const Model model = every_family();
  // What `aitune-tune --backends` passes to lt::candidates_named for the sessions the defaults
  // try at one thread and at the runtime's default (its make_candidates has no catalogue).
  std::vector<std::string> names{"aoti_default", "onnx@1", "onnx", "openvino@1", "openvino"};
  // Where LibTorch has no native runtime, aoti_default is the baseline, not a candidate.
  const bool aoti_baseline = AOTInductor::baseline_of(model) != nullptr;
  if (aoti_baseline) names.erase(names.begin());
  if (OpenVino::cpu_has_bf16()) {
    names.emplace_back("openvino_bf16@1");
    names.emplace_back("openvino_bf16");
  }
  const std::vector<std::string> defaults =
      keys_of(default_candidates(model, CandidatePlan{{1, 0}}, ArchiveFamilies{}));
  // Without a family list, the archive's families (an empty list was deduced once).
  CHECK(keys_of(default_candidates(model, CandidatePlan{{1, 0}})) == defaults);
  CHECK(keys_of(candidates_named(model, names)) == defaults);
  // The int8 models only under a budget, by name as by default.
  CHECK_THROWS_WITH(candidate_named(model, "onnx_int8@1"),
                    Catch::Contains("an int8 model moves the outputs past any tolerance"));
  CandidatePlan budgeted{{1}};
  budgeted.quantized = true;
  std::vector<std::string> int8_names{"aoti_default", "onnx@1", "openvino@1"};
  if (aoti_baseline) int8_names.erase(int8_names.begin());
  if (OpenVino::cpu_has_bf16()) int8_names.emplace_back("openvino_bf16@1");
  for (const char* name : {"aoti_int8", "onnx_int8@1", "openvino_int8@1"})
    int8_names.emplace_back(name);
  if (OpenVino::cpu_has_bf16()) int8_names.emplace_back("openvino_int8_bf16@1");
  CHECK(keys_of(candidates_named(model, int8_names, /*quantized=*/true)) ==
        keys_of(default_candidates(model, budgeted, ArchiveFamilies{})));
}

TEST_CASE("Every candidate says its family, variant, precision and threads in its identity, "
          "beside its key",
          "[catalogue]") {
  const Model model = every_family();
  const BackendIdentity onnx = candidate_named(model, "onnx_basic@1").identity();
  CHECK(identity_text(onnx, "family") == "onnx");
  CHECK(identity_text(onnx, "variant") == "onnx");
  CHECK(identity_text(onnx, "optimization") == "basic");
  CHECK(identity_text(onnx, "spinning") == "stop");
  CHECK(std::get<std::int64_t>(onnx.at("threads")) == 1);
  const BackendIdentity openvino =
      candidate_named(model, "openvino_int8_bf16@1", /*quantized=*/true).identity();
  CHECK(identity_text(openvino, "family") == "openvino");
  CHECK(identity_text(openvino, "variant") == "openvino_int8");
  CHECK(identity_text(openvino, "precision") == "bf16");
  CHECK(identity_text(openvino, "quantization") == "int8");
  CHECK(std::get<std::int64_t>(openvino.at("streams")) == 0);
  const BackendIdentity aoti = candidate_named(model, "aoti_default").identity();
  CHECK(identity_text(aoti, "family") == "aoti");
  CHECK(identity_text(aoti, "variant") == "aoti_default");
  CHECK(identity_text(aoti, "package") == "every_family.pt2");
  // A wrapper adds what it changes to its inner backend's identity.
  const BackendIdentity threads = AnyBackend(TorchThreads(TorchScriptFrozen(), 1)).identity();
  CHECK(identity_text(threads, "family") == "torchscript");
  CHECK(identity_text(threads, "variant") == "TorchScriptFrozen");
  CHECK(std::get<std::int64_t>(threads.at("torch_threads")) == 1);
}

TEST_CASE("A made-up family joins the defaults, the names and the --family filter by one line "
          "in a family list",
          "[catalogue]") {
  const Model model = every_family();
  using WithEcho = FamilyList<AOTInductor, OnnxRuntime, OpenVino, EchoRuntime>;
  CHECK(family_names(WithEcho{}).back() == "echo");
  const std::vector<AnyBackend> defaults =
      default_candidates(model, CandidatePlan{{1, 0}}, WithEcho{});
  CHECK(families_of(defaults).contains("echo"));
  CHECK(defaults.back().key() == "echo:0");
  const std::vector<std::string> names = candidate_names(model, WithEcho{});
  CHECK(std::find(names.begin(), names.end(), "echo") != names.end());
  CHECK(candidate_named(model, "echo@1", false, WithEcho{}).key() == "echo:1");
  // Without it in the list, the name is unknown, and the error lists what there is.
  CHECK_THROWS_WITH(candidate_named(model, "echo@1"),
                    Catch::Contains("has no candidate named 'echo@1': it has aoti_default"));
}
