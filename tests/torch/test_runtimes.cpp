// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The other runtimes a user could run instead: ONNX Runtime and OpenVINO, on the models
// tools/export_model.py converts into the .pt2 archive. Where this build lacks a runtime, each
// test passes saying it was skipped - unless the environment sets AITUNE_REQUIRE_RUNTIMES=1 (CI
// does), where that is a failure: a run whose runtime tests all skipped must not go green.
#include "support/cache_files.hpp"
#include "torch/exported_models.hpp"
#include "torch/torch_catch.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace aitune;
using namespace aitune::lt;

#if AITUNE_TEST_EXPORTED  // the tests of the converted models
namespace {

/// Why ONNX Runtime cannot run here, or empty when it can.
std::string onnx_runtime_missing() {
  if (!OnnxRuntime::available()) return "this build has no ONNX Runtime headers";
#if AITUNE_WITH_ONNXRUNTIME
  return lt::detail::OrtLibrary::get().error;
#else
  return {};
#endif
}

std::string openvino_missing() {
  return OpenVino::available() ? std::string() : "this build has no OpenVINO";
}

bool runtimes_required() {
  const char* value = std::getenv("AITUNE_REQUIRE_RUNTIMES");
  return value != nullptr && std::string(value) == "1";
}

/// Whether a runtime's test can run: true where it is there; else a skip, said so, or with
/// AITUNE_REQUIRE_RUNTIMES=1 a failure. (A block runs on true, rather than a return on false: a
/// return inside a SECTION would hide the sections after it from Catch.)
bool runtime_ready(const std::string& missing) {
  if (missing.empty()) return true;
  if (runtimes_required()) FAIL("AITUNE_REQUIRE_RUNTIMES=1, but " << missing);
  WARN("skipped: " << missing);
  return false;
}

}  // namespace
#endif

TEST_CASE("A missing ONNX Runtime library is a failed build that names the path and the variable "
          "to set",
          "[runtimes]") {
#if AITUNE_WITH_ONNXRUNTIME
  const auto library = lt::detail::OrtLibrary::load("/nonexistent/libonnxruntime.so.1");
  CHECK(library.api == nullptr);
  CHECK_THAT(library.error, Catch::Contains("'/nonexistent/libonnxruntime.so.1'") &&
                                Catch::Contains("AITUNE_ONNXRUNTIME_LIBRARY"));
  // A library that is not ONNX Runtime's.
  const auto other = lt::detail::OrtLibrary::load("libm.so.6");
  CHECK_THAT(other.error, Catch::Contains("is no ONNX Runtime library"));
#endif
  // A TorchScript model has no converted model: both say so.
  const Model script{testing::make_conv_net()};
  for (AnyBackend backend : {AnyBackend(OnnxRuntime()), AnyBackend(OpenVino())}) {
    CHECK_THROWS_WITH(backend.build(script, testing::one_image()),
                      Catch::Contains("this model is TorchScript"));
  }
  CHECK(default_candidates(script).size() == default_candidates(script.device).size());
}

TEST_CASE("Each runtime session is a candidate at each thread count asked for; a failed "
          "conversion is one candidate",
          "[runtimes]") {
  CHECK(runtime_thread_counts(0).empty());
  CHECK(runtime_thread_counts(1) == std::vector<int>{1});
  CHECK(runtime_thread_counts(2) == std::vector<int>{1, 2});
  CHECK(runtime_thread_counts(4) == std::vector<int>{1, 2, 4});
  CHECK(runtime_thread_counts(16) == std::vector<int>{1, 4, 16});
  CHECK(runtime_thread_counts(64) == std::vector<int>{1, 8, 64});
  Model model;
  model.archive = Pt2Archive{"model.pt2", {"model"}, {}};
  model.archive->runtime_variants = {{"onnx", {"onnx"}}, {"openvino", {"openvino"}}};
  const auto names_of = [](const std::vector<AnyBackend>& candidates) {
    std::vector<std::string> names;
    for (const auto& candidate : candidates) {
      const std::string name = candidate.describe();
      // Less the runtime's version, which this build may not know.
      names.push_back(
          name.substr(0, std::min({name.find(", ORT"), name.find(", OV"), name.rfind(')')})));
    }
    return names;
  };
  const bool bf16 = OpenVino::cpu_has_bf16();
  // By default each session at one thread, then at its runtime's default threads (one thread
  // alone where the machine has one).
  CHECK(default_runtime_threads(0) == std::vector<int>{0});
  CHECK(default_runtime_threads(1) == std::vector<int>{0});
  CHECK(default_runtime_threads(2) == std::vector<int>{1, 0});
  CHECK(default_runtime_threads(64) == std::vector<int>{1, 0});
  std::vector<std::string> expected{"OnnxRuntime(model.pt2", "OpenVino(model.pt2, fp32",
                                    "OpenVino(model.pt2, bf16"};
  if (!bf16) expected.pop_back();
  CHECK(names_of(default_candidates(model, {0})) == expected);
  const std::vector<std::string> expected_at_0 = expected;
  // An OpenVINO session on fewer threads than the cores makes copies for callers at once.
  const unsigned cores = std::thread::hardware_concurrency();
  const auto copies = [&](int threads) {
    return cores / static_cast<unsigned>(threads) > 1
               ? fmt::format(", up to {} copies", cores / static_cast<unsigned>(threads))
               : std::string();
  };
  expected = {"OnnxRuntime(model.pt2, 1 thread",
              "OnnxRuntime(model.pt2",
              "OpenVino(model.pt2, fp32, 1 thread" + copies(1),
              "OpenVino(model.pt2, fp32",
              "OpenVino(model.pt2, bf16, 1 thread" + copies(1),
              "OpenVino(model.pt2, bf16"};
  if (!bf16) expected.resize(4);
  const bool several_threads = cores > 1;
  CHECK(names_of(default_candidates(model)) ==
        names_of(default_candidates(model, several_threads ? std::vector<int>{1, 0}
                                                           : std::vector<int>{0})));
  CHECK(names_of(default_candidates(model, {1, 0})) == expected);
  // A sweep: each at every count.
  expected = {"OnnxRuntime(model.pt2, 1 thread",
              "OnnxRuntime(model.pt2, 2 threads",
              "OpenVino(model.pt2, fp32, 1 thread" + copies(1),
              "OpenVino(model.pt2, fp32, 2 threads" + copies(2),
              "OpenVino(model.pt2, bf16, 1 thread" + copies(1),
              "OpenVino(model.pt2, bf16, 2 threads" + copies(2)};
  if (!bf16) expected.resize(4);
  CHECK(names_of(default_candidates(model, runtime_thread_counts(2))) == expected);
  // At a server's load: each caller's share of the cores as a count, and OpenVINO's
  // default-thread session again with a stream per caller (up to the cores).
  CHECK(runtime_threads_for_callers(1, 16) == std::vector<int>{1, 0});
  CHECK(runtime_threads_for_callers(4, 16) == std::vector<int>{1, 4, 0});
  CHECK(runtime_threads_for_callers(4, 2) == std::vector<int>{1, 0});
  CHECK(names_of(default_candidates_for_callers(model, 1)) == names_of(default_candidates(model)));
  if (several_threads) {
    const std::string streams = fmt::format(", {} streams", std::min(4U, cores));
    expected = {"OnnxRuntime(model.pt2, 1 thread",
                "OnnxRuntime(model.pt2",
                "OpenVino(model.pt2, fp32, 1 thread" + copies(1),
                "OpenVino(model.pt2, fp32",
                "OpenVino(model.pt2, fp32" + streams,
                "OpenVino(model.pt2, bf16, 1 thread" + copies(1),
                "OpenVino(model.pt2, bf16",
                "OpenVino(model.pt2, bf16" + streams};
    if (!bf16) expected.resize(5);
    CHECK(names_of(default_candidates(model, {1, 0}, 4)) == expected);
  }
  CHECK_THROWS_AS(default_candidates(model, std::vector<int>{}), ConfigError);
  CHECK_THROWS_WITH(default_candidates(model, {1, -1}),
                    Catch::Contains("0 (the runtime's default)"));
  // Under an accuracy budget a quantised OpenVINO IR joins in f32 and, where the CPU has it, in
  // bf16 (OpenVINO's default there); without one, never.
  RuntimeVariantInfo int8{"openvino_int8", {}, "openvino"};
  int8.quantization = "int8";
  model.archive->runtime_variants.emplace("openvino_int8", int8);
  CHECK(names_of(default_candidates(model, {0})) == expected_at_0);
  std::vector<std::string> with_int8 = expected_at_0;
  with_int8.push_back("OpenVino(model.pt2, fp32, int8");
  if (bf16) with_int8.push_back("OpenVino(model.pt2, bf16, int8");
  CHECK(names_of(default_candidates(model, {0}, 1, true)) == with_int8);
  // One whose quantisation failed is named once, not once per precision.
  model.archive->runtime_variants.erase("openvino_int8");
  model.archive->failed_variants = {{"openvino_int8", "NNCF failed"}};
  CHECK(default_candidates(model, {0}, 1, true).size() == expected_at_0.size() + 1);
  model.archive->failed_variants.clear();
  // A conversion that failed is named once: its build fails with the cause, at any count.
  model.archive->runtime_variants.erase("onnx");
  model.archive->failed_variants = {{"onnx", "the exporter failed"}};
  const auto candidates = default_candidates(model, runtime_thread_counts(4));
  CHECK(std::count_if(candidates.begin(), candidates.end(), [](const AnyBackend& candidate) {
          return candidate.describe().starts_with("OnnxRuntime(");
        }) == 1);
  CHECK(candidates.size() == (bf16 ? 7U : 4U));
}

#if AITUNE_TEST_EXPORTED
using aitune::testing::check_equal_to_eager;
using aitune::testing::Exported;
using aitune::testing::exported;
using aitune::testing::keys_of;
using aitune::testing::quick_config;
using aitune::testing::unscreened;

TEST_CASE("ONNX Runtime and OpenVINO run the converted dict-output model and return eager "
          "PyTorch's structure and values",
          "[runtimes][exported][real_model]") {
  const auto model = exported("dict_outputs");
  const Pt2Archive& archive = *model.model.archive;
  CHECK(archive.runtime_variants.contains("onnx"));
  CHECK(archive.runtime_variants.contains("openvino"));
  CHECK_FALSE(archive.output_spec.empty());
  const auto check = [&](AnyBackend backend) {
    INFO(backend.describe());
    backend.build(model.model, model.samples);
    for (int call = 0; call < 2; ++call) {  // the second call reuses what the first set up
      const c10::IValue out = backend.infer(model.samples[0]);
      REQUIRE(out.isGenericDict());
      CHECK(keys_of(out) == std::vector<std::string>{"y", "z", "w"});
      CHECK(out.toGenericDict().at("z").toTupleRef().elements()[1].isNone());
      CHECK(out.toGenericDict().at("w").isList());
      check_equal_to_eager(out, model, backend.output_policy());
    }
    // Freed and made again, as a selected backend is.
    backend.deactivate();
    backend.activate();
    check_equal_to_eager(backend.infer(model.samples[0]), model, backend.output_policy());
  };
  SECTION("ONNX Runtime") {
    const std::string missing = onnx_runtime_missing();
    if (OnnxRuntime::available() && !missing.empty()) {
      // A library that cannot be loaded: the build fails with the reason.
      AnyBackend backend(OnnxRuntime::from_archive(archive));
      CHECK_THROWS_WITH(backend.build(model.model, model.samples), Catch::Contains(missing));
    }
    if (runtime_ready(missing)) {
      check(OnnxRuntime::from_archive(archive));
      CHECK_THAT(OnnxRuntime::from_archive(archive).describe(),
                 Catch::Contains("ORT " + OnnxRuntime::version()));
      CHECK_THAT(OnnxRuntime::from_archive(archive).key(), Catch::Contains(OnnxRuntime::version()));
      // Settings are part of what a candidate is.
      AnyBackend tuned(OnnxRuntime::from_archive(archive).set_threads(1).set_optimization(
          OnnxOptimization::basic));
      CHECK_THAT(tuned.describe(),
                 Catch::Contains("optimization basic, 1 thread") && !Catch::Contains("threads"));
      check(tuned);
      // The threads stop spinning after each call unless told otherwise; either is a candidate
      // of its own.
      AnyBackend spinning(OnnxRuntime::from_archive(archive).set_spinning_stop(false));
      CHECK_THAT(spinning.describe(), Catch::Contains(", spinning after calls"));
      CHECK_THAT(OnnxRuntime::from_archive(archive).describe(), !Catch::Contains("spinning"));
      CHECK(spinning.key() != OnnxRuntime::from_archive(archive).key());
      check(spinning);
    }
  }
  SECTION("OpenVINO") {
    if (runtime_ready(openvino_missing())) {
      check(OpenVino::from_archive(archive));
      CHECK_THAT(OpenVino::from_archive(archive).describe(),
                 Catch::Contains("fp32, OV " + OpenVino::version()));
      check(OpenVino::from_archive(archive).set_threads(1));
      AnyBackend bf16(OpenVino::from_archive(archive, Precision::bf16));
      if (OpenVino::cpu_has_bf16()) {
        CHECK(bf16.output_policy().reduced_precision == Precision::bf16);
        check(bf16);
      } else {
        CHECK_THROWS_WITH(bf16.build(model.model, model.samples), Catch::Contains("no bf16"));
      }
    }
  }
}

TEST_CASE("A BERT with int64 inputs and a dict-output model tune with ONNX Runtime and OpenVINO "
          "candidates, every one correct",
          "[runtimes][exported][real_model][hf]") {
  if (!runtime_ready(onnx_runtime_missing() + openvino_missing())) return;
  for (const std::string name : {"bert", "dict_outputs"}) {
    INFO(name);
    const auto model = exported(name);
    const TunedModule tuned = tune(model.model, model.samples,
                                   {.config = quick_config().enable_performance_validation(false)});
    std::vector<std::string> runtimes;
    for (const auto& candidate : tuned.report().candidates) {
      INFO(candidate.backend << ": " << candidate.reason);
      CHECK(candidate.status == CandidateStatus::ok);
      if (candidate.backend.starts_with("OnnxRuntime(") ||
          candidate.backend.starts_with("OpenVino(")) {
        runtimes.push_back(candidate.backend.substr(0, candidate.backend.find('(')));
      }
    }
    // One ONNX Runtime session per default thread count.
    CHECK(std::count(runtimes.begin(), runtimes.end(), "OnnxRuntime") ==
          static_cast<std::ptrdiff_t>(default_runtime_threads().size()));
    CHECK(std::count(runtimes.begin(), runtimes.end(), "OpenVino") >= 1);
    check_equal_to_eager(tuned.forward(model.samples[0]), model, tuned.backend().output_policy());
  }
}

namespace {

/// A BERT input pair at `length` tokens (ids and a mask of ones), the mask `mask_length` long.
Sample tokens(std::int64_t length, std::int64_t mask_length = -1) {
  return Sample{torch::randint(0, 1000, {1, length}, torch::kInt64),
                torch::ones({1, mask_length < 0 ? length : mask_length}, torch::kInt64)};
}

}  // namespace

TEST_CASE("A BERT exported for sequences of 8 to 256 tokens, tuned at 64 and 128, serves 200 as "
          "eager PyTorch does and refuses 300, whichever family serves",
          "[runtimes][exported][real_model][hf][shapes]") {
  // Before --dynamic every variant was made for the example's 128 tokens, and a tuned module
  // refused every other length.
  if (!runtime_ready(onnx_runtime_missing() + openvino_missing())) return;
  const auto model = exported("bert_dynamic");
  const Pt2Archive& archive = *model.model.archive;
  REQUIRE(archive.dynamic_axes.size() == 2);
  for (const DynamicAxis& axis : archive.dynamic_axes) {
    INFO(axis.input);
    CHECK(axis.axis == 1);
    CHECK(axis.min == 8);
    CHECK(axis.max == 256);
    CHECK(axis.symbol == archive.dynamic_axes[0].symbol);  // the two lengths must agree
  }
  const auto io = aitune::testing::exported_dir() / "bert_dynamic.io";
  const Sample at_200 = load_sample_file(io / "inputs_200.pt", torch::kCPU);
  const c10::IValue eager_200 = load_outputs_file(io / "outputs_200.pt");

  torch::manual_seed(5);
  const std::vector<Sample> samples{tokens(64), tokens(128)};
  const std::vector<std::function<AnyBackend()>> families{
      [&] { return AnyBackend(AOTInductor::from_archive(archive, archive.aoti_models.at(0))); },
      [&] { return AnyBackend(OnnxRuntime::from_archive(archive)); },
      [&] { return AnyBackend(OpenVino::from_archive(archive)); },
      [&] { return make_baseline(model.model); }};
  for (const auto& make : families) {
    AnyBackend backend = make();
    INFO(backend.describe());
    CHECK(backend.takes_range());
    const ShapeContract contract = shape_check_for(model.model, {make()});
    CHECK(contract.check == ShapeCheck::range);
    backend.build(model.model, samples);
    const OutputPolicy policy = backend.output_policy();
    const TunedModule served(TuneResult<AnyBackend>{std::move(backend), TuneReport{}}, samples,
                             contract);
    const OutputCheck check = compare_outputs(&eager_200, served.forward(at_200), policy);
    INFO(check.reason);
    CHECK(check.passed);
    CHECK_THROWS_WITH(served.forward(tokens(300)),
                      Catch::Contains("input 0 ('input_ids') has shape [1, 300]: its axis 1 takes "
                                      "8 to 256 (the range it was exported for), not 300"));
    CHECK_THROWS_WITH(served.forward(tokens(200, 199)),
                      Catch::Contains("inputs 0 ('input_ids') and 1 ('attention_mask') must have "
                                      "the same size on axes 1 and 1 (one exported dimension, 8 "
                                      "to 256), got 200 and 199"));
    CHECK_THROWS_WITH(served.forward(Sample{torch::randint(0, 1000, {2, 100}, torch::kInt64),
                                            torch::ones({2, 100}, torch::kInt64)}),
                      Catch::Contains("of shape [1, 8..256]"));
  }
  // Called directly, a compilation refuses what it was not compiled for too: no read out of
  // bounds.
  AOTInductor compiled = AOTInductor::from_archive(archive, archive.aoti_models.at(0));
  compiled.build(model.model, samples);
  CHECK_THROWS_WITH(compiled.infer(tokens(300)), Catch::Contains("not 300"));

  // Tuned over every family's candidates: every one correct, and the module serves 200.
  const TunedModule tuned =
      tune(model.model, samples, {.config = quick_config().enable_performance_validation(false)});
  std::set<std::string> families_seen;
  for (const auto& candidate : tuned.report().candidates) {
    INFO(candidate.backend << ": " << candidate.reason);
    CHECK(candidate.status == CandidateStatus::ok);
    families_seen.insert(candidate.backend.substr(0, candidate.backend.find('(')));
  }
  CHECK(families_seen.contains("OnnxRuntime"));
  CHECK(families_seen.contains("OpenVino"));
  const OutputCheck check =
      compare_outputs(&eager_200, tuned.forward(at_200), tuned.backend().output_policy());
  INFO(tuned.selected() << ": " << check.reason);
  CHECK(check.passed);
}

TEST_CASE("samples_at_lengths makes random samples at each length on the dynamic axes, the "
          "batch at 1",
          "[runtimes][exported][hf][shapes]") {
  // Before: only aitune-tune --lengths could; a library caller wrote the loop by hand.
  const auto model = exported("gpt2_dynamic");
  const std::vector<InputSpec> specs{parse_input_spec("1x8:int64[0,1000)"),
                                     parse_input_spec("1x8:int64[1,2)")};
  const std::vector<Sample> samples =
      samples_at_lengths(model.model, specs, {16, 64}, torch::kCPU, 2);
  REQUIRE(samples.size() == 4);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::int64_t length = i < 2 ? 16 : 64;
    for (const c10::IValue& input : samples[i]) {
      CHECK(input.toTensor().sizes() == at::IntArrayRef({1, length}));
      CHECK(input.toTensor().scalar_type() == torch::kInt64);
    }
  }
  CHECK_FALSE(torch::equal(samples[0][0].toTensor(), samples[1][0].toTensor()));  // two seeds
  CHECK_THROWS_WITH(samples_at_lengths(model.model, specs, {16, 200}, torch::kCPU),
                    Catch::Contains("the length 200: input 'input_ids' takes 8 to 128 on axis 1"));
  CHECK_THROWS_WITH(samples_at_lengths(model.model, specs, {16, 16}, torch::kCPU),
                    Catch::Contains("the length 16 is given twice"));
  CHECK_THROWS_AS(samples_at_lengths(model.model, specs, {}, torch::kCPU), ConfigError);
  const auto fixed = exported("dict_outputs");
  CHECK_THROWS_WITH(samples_at_lengths(fixed.model,
                                       {parse_input_spec("1x8"), parse_input_spec("1x4")}, {4},
                                       torch::kCPU),
                    Catch::Contains("records no dynamic axis"));
}

TEST_CASE("A token id outside the vocabulary is refused by every family, served or called "
          "directly, and a padded mask is served",
          "[runtimes][exported][real_model][hf][shapes]") {
  // Before: with AOTInductor serving, an id of vocab+7 or -1 aborted the process (SIGABRT from
  // inside a kernel); ONNX Runtime answered -1 and OpenVINO answered both with numbers.
  if (!runtime_ready(onnx_runtime_missing() + openvino_missing())) return;
  const auto model = exported("gpt2_dynamic");
  const Pt2Archive& archive = *model.model.archive;
  REQUIRE(archive.index_domains.size() == 1);  // input_ids; attention_mask indexes nothing
  const IndexDomain& ids = archive.index_domains.front();
  CHECK(ids.input == "input_ids");
  CHECK(ids.min == 0);
  CHECK(ids.max == 999);  // make_exported_models.py's vocab_size=1000
  CHECK(ids.source == "embedding");
  torch::manual_seed(11);
  const std::vector<Sample> samples{tokens(32), tokens(96)};
  const auto with_id = [](std::int64_t id) {
    Sample sample = tokens(20);
    sample[0].toTensor().index_put_({0, 5}, id);
    return sample;
  };
  Sample padded = tokens(20);
  padded[1].toTensor().narrow(1, 14, 6).zero_();
  const std::vector<std::function<AnyBackend()>> families{
      [&] { return AnyBackend(AOTInductor::from_archive(archive, archive.aoti_models.at(0))); },
      [&] { return AnyBackend(OnnxRuntime::from_archive(archive)); },
      [&] { return AnyBackend(OpenVino::from_archive(archive)); },
      [&] { return AnyBackend(OpenVino::from_archive(archive).set_threads(1)); },
      [&] { return make_baseline(model.model); }};
  for (const auto& make : families) {
    AnyBackend backend = make();
    INFO(backend.describe());
    backend.build(model.model, samples);
    const bool runtime = !backend.describe().starts_with("NativeRuntime");
    if (runtime) {
      // Lengths of one dimension that differ: OpenVINO at one thread swallowed the graph's error
      // and returned the previous call's outputs.
      CHECK_THROWS_WITH(backend.infer(tokens(40, 41)), Catch::Contains("must have the same size"));
    }
    for (const std::int64_t id : {std::int64_t{1007}, std::int64_t{-1}}) {
      INFO(id);
      if (runtime) {  // called directly, as TunedModule::backend() may be
        CHECK_THROWS_WITH(backend.infer(with_id(id)),
                          Catch::Contains(fmt::format("input 0 ('input_ids') holds the value {}, "
                                                      "outside 0 to 999 (the rows of the "
                                                      "embedding it indexes)",
                                                      id)));
      }
    }
    const OutputPolicy policy = backend.output_policy();
    const TunedModule served(TuneResult<AnyBackend>{std::move(backend), TuneReport{}}, samples,
                             shape_check_for(model.model, {make()}));
    CHECK_THROWS_WITH(served.forward(with_id(1007)),
                      Catch::Contains("holds the value 1007, outside 0 to 999"));
    CHECK_THROWS_AS(served.forward(with_id(-1)), Error);
    const c10::IValue outputs = served.forward(padded);  // a mask of 0s is no index
    const OutputCheck finite = compare_outputs(nullptr, outputs, policy);
    CHECK(finite.passed);
  }
}

TEST_CASE("lt::tune refuses a sample its module would refuse, before tuning on it",
          "[runtimes][exported][real_model][hf][shapes]") {
  // Before: a 200-token sample (outside 8..128) was timed, the candidates made for the range were
  // marked incorrect for refusing it, and the module then refused the shape it was tuned at; a
  // 40/41 sample made the baseline fail and an OpenVINO session that never ran was returned ok.
  const auto model = exported("gpt2_dynamic");
  torch::manual_seed(7);
  const auto quiet = [] {
    return TuneOptions{.config = quick_config().enable_performance_validation(false)};
  };
  CHECK_THROWS_WITH(tune(model.model, {tokens(32), tokens(200)}, quiet()),
                    Catch::Contains("sample 2 of 2: input 0 ('input_ids') has shape [1, 200]: its "
                                    "axis 1 takes 8 to 128") &&
                        Catch::Contains("the tuned module would refuse it"));
  CHECK_THROWS_AS(tune(model.model, {tokens(32), tokens(200)}, quiet()), ConfigError);
  CHECK_THROWS_WITH(tune(model.model, {tokens(40, 41)}, quiet()),
                    Catch::Contains("sample 1 of 1: inputs 0 ('input_ids') and 1 "
                                    "('attention_mask') must have the same size"));
  CHECK_THROWS_WITH(tune(model.model, {tokens(4)}, quiet()), Catch::Contains("not 4"));
  // A zero-length sample skipped the range check (its bounds were itself again: D21).
  CHECK_THROWS_WITH(tune(model.model, {tokens(0)}, quiet()), Catch::Contains("not 0"));
}

TEST_CASE("A GPT-2 exported for 8 to 128 tokens tunes at two lengths with every family's "
          "candidate correct, and serves a third as eager PyTorch does",
          "[runtimes][exported][real_model][hf][shapes]") {
  if (!runtime_ready(onnx_runtime_missing() + openvino_missing())) return;
  const auto model = exported("gpt2_dynamic");
  REQUIRE(model.model.archive->dynamic_axes.size() == 2);
  const auto io = aitune::testing::exported_dir() / "gpt2_dynamic.io";
  const Sample at_100 = load_sample_file(io / "inputs_100.pt", torch::kCPU);
  const c10::IValue eager_100 = load_outputs_file(io / "outputs_100.pt");
  torch::manual_seed(7);
  const TunedModule tuned = tune(model.model, {tokens(32), tokens(96)},
                                 {.config = quick_config().enable_performance_validation(false)});
  std::set<std::string> families;
  for (const auto& row : tuned.report().candidates) {
    INFO(row.backend << ": " << row.reason);
    CHECK(row.status == CandidateStatus::ok);
    families.insert(row.backend.substr(0, row.backend.find('(')));
  }
  // From PyTorch 2.12 the AOTInductor model is the baseline, not a candidate.
  CHECK((families.contains("AOTInductor") || NativeRuntime::available() == false));
  CHECK(families.contains("OnnxRuntime"));
  CHECK(families.contains("OpenVino"));
  CHECK(tuned.report().measurement.serves == "input_ids [1, 8..128], attention_mask [1, 8..128]");
  const OutputCheck check =
      compare_outputs(&eager_100, tuned.forward(at_100), tuned.backend().output_policy());
  INFO(tuned.selected() << ": " << check.reason);
  CHECK(check.passed);
  CHECK_THROWS_WITH(tuned.forward(tokens(129)), Catch::Contains("takes 8 to 128"));
}

TEST_CASE("A range model's tuning is keyed by its parameters, the lengths tuned and their "
          "weights (not the input values), checked at the range's bounds, and reports its mix",
          "[runtimes][exported][real_model][hf][shapes][cache]") {
  const auto model = exported("bert_dynamic");
  const auto reseeded = exported("bert_dynamic_reseeded");
  torch::manual_seed(6);
  const std::vector<Sample> samples{tokens(64), tokens(128)};
  const std::vector<Sample> same_lengths{tokens(64), tokens(128)};
  const std::vector<Sample> other_lengths{tokens(64), tokens(256)};
  const std::vector<AnyBackend> candidates = default_candidates(model.model);
  const StrategyConfig config = quick_config().enable_performance_validation(false);
  const nlohmann::json key = tuning_key(model.model, samples, candidates, config);
  CHECK(key == tuning_key(model.model, same_lengths, candidates, config));
  CHECK(key["inputs"] != tuning_key(model.model, other_lengths, candidates, config)["inputs"]);
  CHECK(key["model_sha256"] !=
        tuning_key(reseeded.model, samples, candidates, config)["model_sha256"]);

  // Through a cache: the same lengths and weights hit, other weights or lengths miss, and the
  // module serves the range.
  const auto weighted = [&](std::vector<double> weights) {
    return StrategyConfig(config).set_profiling(
        ProfilingConfig(config.profiling()).set_sample_weights(std::move(weights)));
  };
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("aitune_{}_range_cache.json", ::getpid());
  {
    const TuningCache cache(path);
    const TunedModule first =
        tune(model.model, samples, {.config = weighted({3.0, 1.0}), .cache = &cache});
    CHECK_FALSE(first.report().cache_hit);
    // Timed at 64 and 128 tokens, weighed 3 to 1; checked at the range's bounds, never timed.
    const MeasurementReport& measured = first.report().measurement;
    REQUIRE(measured.shapes.size() == 4);
    CHECK(measured.shapes[0].shape == "1x64:int64, 1x64:int64");
    CHECK(measured.shapes[0].weight == Catch::Detail::Approx(0.75));
    CHECK(measured.shapes[1].shape == "1x128:int64, 1x128:int64");
    CHECK(measured.shapes[2].shape == "1x8:int64, 1x8:int64");
    CHECK(measured.shapes[3].shape == "1x256:int64, 1x256:int64");
    CHECK(measured.shapes[3].weight == 0.0);
    CHECK(measured.serves == "input_ids [1, 8..256], attention_mask [1, 8..256]");
    for (const CandidateReport& row : first.report().candidates) {
      INFO(row.backend << ": " << row.reason);
      CHECK(row.status == CandidateStatus::ok);
      CHECK(row.shape_medians_ms.size() == 2);
    }
    const TunedModule second =
        tune(model.model, same_lengths, {.config = weighted({3.0, 1.0}), .cache = &cache});
    CHECK(second.report().cache_hit);
    CHECK(second.selected() == first.selected());
    CHECK(second.report().measurement.serves == measured.serves);
    CHECK_NOTHROW(second.forward(tokens(200)));
    const TunedModule reweighted =
        tune(model.model, same_lengths, {.config = weighted({1.0, 3.0}), .cache = &cache});
    CHECK_FALSE(reweighted.report().cache_hit);
    const TunedModule longer =
        tune(model.model, other_lengths, {.config = weighted({3.0, 1.0}), .cache = &cache});
    CHECK_FALSE(longer.report().cache_hit);
  }
  testing::remove_cache_files(path);
}

TEST_CASE("A model whose ONNX and OpenVINO conversions failed still tunes with its other "
          "candidates, and the report names each failure",
          "[runtimes][exported][real_model]") {
  const auto model = exported("no_onnx");
  const Pt2Archive& archive = *model.model.archive;
  REQUIRE(archive.failed_variants.contains("onnx"));
  REQUIRE(archive.failed_variants.contains("openvino"));
  CHECK_FALSE(archive.runtime_variants.contains("onnx"));
  // With performance validation on: where the archive's only compilation is the baseline (no
  // native runtime), no candidate is correct, and the baseline serves.
  const TunedModule tuned = tune(model.model, model.samples, {.config = quick_config()});
  int failed = 0;
  for (const auto& candidate : tuned.report().candidates) {
    INFO(candidate.backend << ": " << candidate.reason);
    if (candidate.backend.starts_with("OnnxRuntime(") ||
        candidate.backend.starts_with("OpenVino(")) {
      const std::string variant =
          candidate.backend.starts_with("OnnxRuntime(") ? "onnx" : "openvino";
      CHECK(candidate.status == CandidateStatus::build_failed);
      CHECK_THAT(candidate.reason, Catch::Contains("the " + variant +
                                                   " conversion failed when 'no_onnx.pt2' was "
                                                   "exported: " +
                                                   archive.failed_variants.at(variant)));
      ++failed;
    } else {
      CHECK(candidate.status == CandidateStatus::ok);
    }
  }
  CHECK(failed == 2);
  check_equal_to_eager(tuned.forward(model.samples[0]), model, tuned.backend().output_policy());
}

namespace {

/// Four threads, each with its own input, call `backend` 25 times each: every answer is the one
/// that thread's input gets alone.
void check_answers_from_threads(AnyBackend& backend, const Exported& model) {
  backend.build(model.model, model.samples);
  REQUIRE(backend.thread_safe());
  const at::Tensor x = model.samples[0][0].toTensor();
  const at::Tensor mask = model.samples[0][1].toTensor();
  // Each thread its own input and answer, taken one at a time before the threads start: an
  // answer mixed up between threads shows.
  std::vector<Sample> samples;
  std::vector<at::Tensor> answers;
  for (int t = 0; t < 4; ++t) {
    samples.push_back(Sample{x * static_cast<double>(t + 1), mask});
    answers.push_back(backend.infer(samples.back()).toGenericDict().at("y").toTensor());
  }
  CHECK_FALSE(answers[0].equal(answers[1]));
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Sample& sample = samples[static_cast<std::size_t>(t)];
      const at::Tensor& expected = answers[static_cast<std::size_t>(t)];
      for (int call = 0; call < 25; ++call) {
        const at::Tensor y = backend.infer(sample).toGenericDict().at("y").toTensor();
        if (!y.equal(expected)) ++wrong[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  CHECK(wrong == std::vector<int>(4, 0));
}

}  // namespace

TEST_CASE("ONNX Runtime and OpenVINO sessions serve calls from several threads at once, each with "
          "its own answer",
          "[runtimes][exported][threads][concurrency]") {
  const auto model = exported("dict_outputs");
  const Pt2Archive& archive = *model.model.archive;
  std::vector<AnyBackend> sessions;
  if (runtime_ready(onnx_runtime_missing()))
    sessions.emplace_back(OnnxRuntime::from_archive(archive));
  if (runtime_ready(openvino_missing())) {
    // The latency hint's one stream, and copies: calls take turns, or run on copies made for them.
    sessions.emplace_back(OpenVino::from_archive(archive));
    sessions.emplace_back(OpenVino::from_archive(archive).set_threads(1).set_copies(4));
  }
  for (AnyBackend& backend : sessions) {
    INFO(backend.describe());
    check_answers_from_threads(backend, model);
  }
}

namespace {

/// How long two calls made at once take, over one call alone: in each of 24 rounds a call
/// alone is timed, then two threads (the same two in every round, as a server's) wait for each
/// other and make one call each; the shortest round (from the release to the later end) over
/// the fastest call alone. Calls that run at once take about one call's time (near 1); calls
/// one after the other, queued or interleaved on one executor, take two (near 2 or more),
/// whatever a busy machine does to the other rounds. A first round, untimed, lets a runtime
/// (and each thread) make what a second caller needs.
double two_calls_over_one(AnyBackend& backend, const Sample& sample) {
  using Clock = std::chrono::steady_clock;
  const auto ms_between = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  double alone_ms = std::numeric_limits<double>::infinity();
  double two_ms = std::numeric_limits<double>::infinity();
  std::barrier round_edge(3);  // the two callers and this thread, at each round's start and end
  bool stop = false;
  std::atomic<int> arrived{0};
  Clock::time_point released;
  Clock::time_point ends[2];
  const auto caller = [&](int who) {
    for (;;) {
      round_edge.arrive_and_wait();
      if (stop) return;
      if (arrived.fetch_add(1) == 1) released = Clock::now();  // the second to arrive
      while (arrived.load() < 2)
        std::this_thread::yield();
      (void)backend.infer(sample);
      ends[who] = Clock::now();
      round_edge.arrive_and_wait();
    }
  };
  std::thread first(caller, 0);
  std::thread second(caller, 1);
  for (int round = 0; round < 24; ++round) {
    for (int call = 0; call < 2; ++call) {
      const auto began = Clock::now();
      (void)backend.infer(sample);
      alone_ms = std::min(alone_ms, ms_between(began, Clock::now()));
    }
    arrived = 0;
    round_edge.arrive_and_wait();  // the callers start
    round_edge.arrive_and_wait();  // and have ended
    if (round > 0) two_ms = std::min(two_ms, ms_between(released, std::max(ends[0], ends[1])));
  }
  stop = true;
  round_edge.arrive_and_wait();
  first.join();
  second.join();
  return two_ms / alone_ms;
}

}  // namespace

TEST_CASE("TorchScript, ONNX Runtime and OpenVINO run calls from two threads at once where they "
          "say so, and OpenVINO's one latency stream takes them in turn",
          "[.][serial][runtimes][exported][concurrency]") {
  // Hidden ([.]): ctest runs it alone on the machine (RUN_SERIAL), since a test beside it would
  // take the second core the calls need.
  if (std::thread::hardware_concurrency() < 2) {
    SUCCEED("one core: no two calls can run at once");
    return;
  }
  const auto model = exported("wide_mlp");
  const Pt2Archive& archive = *model.model.archive;
  // Up to `tries` measurements, 0.3 s apart, until one shows the calls overlap: a neighbour that
  // holds a core through a whole measurement makes calls at once look queued, while queued calls
  // never look at once, so the lowest is what the backend does (the queued check measures once).
  const auto two_over_one_on = [](AnyBackend backend, const Model& on,
                                  const std::vector<Sample>& samples, int tries = 3) {
    INFO(backend.describe());
    backend.build(on, samples);
    REQUIRE(backend.thread_safe());
    double ratio = std::numeric_limits<double>::infinity();
    for (int attempt = 0; attempt < tries && ratio >= 1.6; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past a burst
      ratio = std::min(ratio, two_calls_over_one(backend, samples[0]));
    }
    UNSCOPED_INFO(backend.describe() << ": two calls at once take " << ratio << " calls' time");
    return ratio;
  };
  const auto two_over_one = [&](AnyBackend backend, int tries = 3) {
    return two_over_one_on(std::move(backend), model.model, model.samples, tries);
  };
  {
    // The same layers as TorchScript, at one LibTorch thread per caller (a call alone then
    // leaves the second core free): eager and frozen calls run at once too.
    torch::manual_seed(3);
    torch::jit::Module mlp("WideMlp");
    for (int layer = 0; layer < 6; ++layer) {
      mlp.register_parameter(fmt::format("w{}", layer), torch::randn({512, 512}) * 0.04, false);
    }
    mlp.define(R"(
      def forward(self, x):
          for w in [self.w0, self.w1, self.w2, self.w3, self.w4, self.w5]:
              x = torch.relu(torch.matmul(x, w))
          return x
    )");
    const Model scripted{mlp, torch::kCPU};
    const std::vector<Sample> samples{Sample{torch::randn({64, 512})}};
    const int threads = at::get_num_threads();
    at::set_num_threads(1);
    CHECK(two_over_one_on(AnyBackend(TorchEager()), scripted, samples) < 1.6);
    CHECK(two_over_one_on(AnyBackend(TorchScriptFrozen()), scripted, samples) < 1.6);
    at::set_num_threads(threads);
  }
  if (runtime_ready(onnx_runtime_missing())) {
    CHECK(two_over_one(AnyBackend(OnnxRuntime::from_archive(archive).set_threads(1))) < 1.6);
  }
  if (runtime_ready(openvino_missing())) {
    // Two streams of one thread, or two copies of one: both calls run. The latency hint's one
    // stream of one thread: the calls take turns, which is what the check must be able to see.
    CHECK(two_over_one(AnyBackend(OpenVino::from_archive(archive).set_threads(1).set_copies(2))) <
          1.6);
    CHECK(two_over_one(AnyBackend(OpenVino::from_archive(archive).set_threads(1).set_streams(2))) <
          1.6);
    CHECK(two_over_one(AnyBackend(OpenVino::from_archive(archive).set_threads(1)), 1) > 1.6);
  }
}

TEST_CASE("An OpenVINO session's stream and copy counts are in its name and its key",
          "[runtimes]") {
  const OpenVino one = OpenVino("m.pt2").set_threads(1);
  const OpenVino streams = OpenVino("m.pt2").set_threads(1).set_streams(2);
  const OpenVino copies = OpenVino("m.pt2").set_threads(1).set_copies(2);
  CHECK(one.key() != streams.key());
  CHECK(one.key() != copies.key());
  CHECK(streams.key() != copies.key());
  CHECK_THAT(streams.describe(), Catch::Contains("1 thread, 2 streams"));
  CHECK_THAT(copies.describe(), Catch::Contains("1 thread, up to 2 copies"));
  CHECK_THAT(one.describe(), !Catch::Contains("stream") && !Catch::Contains("cop"));
  CHECK_THROWS_AS(OpenVino("m.pt2").set_streams(-1), ConfigError);
  CHECK_THROWS_AS(OpenVino("m.pt2").set_copies(0), ConfigError);
}

namespace {

/// dict_outputs.pt2 with one fault (tests/support/make_damaged_archives.py), run on
/// dict_outputs' own samples.
Exported damaged(const std::string& fault) {
  Exported model = exported("dict_outputs");
  const auto path = aitune::testing::exported_dir() / ("damaged_" + fault + ".pt2");
  if (!std::filesystem::exists(path)) {
    FAIL("missing " << path << ": run tests/support/make_damaged_archives.py (ctest does it)");
  }
  model.model = load_model(path);
  return model;
}

/// The report's row of the candidate whose description starts with `prefix`.
const CandidateReport& row_of(const TuneReport& report, std::string_view prefix) {
  for (const CandidateReport& row : report.candidates) {
    if (row.backend.starts_with(prefix)) return row;
  }
  FAIL("no candidate " << prefix << " in the report");
  return report.candidates.front();
}

/// The report of tuning a damaged `model`. Where LibTorch has no native runtime (from 2.12 on) a
/// `.pt2`'s baseline is its first AOTInductor model, which the damage may have taken too: nothing
/// is then there to check the candidates against, and none is tried (the tuning ends in
/// NoCorrectBackendError). Built again without the check, each candidate still fails with its
/// own cause, which is what these tests read.
TuneReport tune_damaged(const Exported& model, const std::vector<AnyBackend>& candidates) {
  const auto tuned = [&](const StrategyConfig& config) {
    try {
      return tune(model.model, model.samples, {.candidates = candidates, .config = config})
          .report();
    } catch (const NoCorrectBackendError& error) {
      INFO(error.what());
      REQUIRE(error.report() != nullptr);
      return *error.report();
    }
  };
  TuneReport report = tuned(quick_config());
  if (report.baseline && report.baseline->status != CandidateStatus::ok) {
    CHECK_FALSE(NativeRuntime::available());  // with it, the baseline is untouched
    report = tuned(quick_config().enable_correctness_check(false));
  }
  return report;
}

/// The report of tuning a damaged `model` with its archive's ONNX Runtime and OpenVINO sessions,
/// those this build and machine can run; none when neither can.
std::optional<TuneReport> tune_damaged_runtimes(const Exported& model) {
  std::vector<AnyBackend> candidates;
  if (runtime_ready(onnx_runtime_missing())) {
    candidates.emplace_back(OnnxRuntime::from_archive(*model.model.archive));
  }
  if (runtime_ready(openvino_missing())) {
    candidates.emplace_back(OpenVino::from_archive(*model.model.archive));
  }
  if (candidates.empty()) return std::nullopt;
  return tune_damaged(model, std::move(candidates));
}

}  // namespace

TEST_CASE("An archive whose None leaves name one leaf twice fails its runtimes' check, not the "
          "process",
          "[runtimes][exported][archive]") {
  // Before: the outputs were rebuilt past the end of a vector (SIGSEGV, no report).
  const std::optional<TuneReport> report = tune_damaged_runtimes(damaged("none_leaves_repeated"));
  if (!report) return;
  for (const CandidateReport& row : report->candidates) {
    INFO(row.backend << ": " << row.reason);
    CHECK(row.status == CandidateStatus::incorrect);
    CHECK_THAT(row.reason, Catch::Contains("its archive's None leaves [4, 4] are not in "
                                           "increasing order, each once"));
  }
  CHECK(report->baseline_selected);
}

TEST_CASE("A damaged IR's failure names OpenVINO's own cause in one line",
          "[runtimes][exported][archive]") {
  // Before: every such failure read "Exception from src/inference/src/cpp/core.cpp:105:".
  if (!runtime_ready(openvino_missing())) return;
  const auto model = damaged("ir_input_int64");
  const TuneReport report =
      tune_damaged(model, {AnyBackend(OpenVino::from_archive(*model.model.archive))});
  const CandidateReport& row = report.candidates.at(0);
  INFO(row.reason);
  CHECK(row.status != CandidateStatus::ok);
  CHECK(row.reason.find('\n') == std::string::npos);
  CHECK(row.reason.find("core.cpp:105") == std::string::npos);
  CHECK_THAT(row.reason, Catch::Contains("i64"));
}

TEST_CASE("An AOTInductor record whose precision is not a name fails that compilation alone, "
          "naming the field",
          "[runtimes][exported][archive]") {
  // Before: nlohmann's type error ended the whole run before the baseline ran.
  const auto model = damaged("precision_number");
  const AotiModelInfo& compiled = model.model.archive->aoti_models.at(0);
  CHECK_THAT(compiled.unusable,
             Catch::Contains("variants.aoti_default.precision is 16, not one of fp32, bf16, fp16"));
  const TuneReport report =
      tune_damaged(model, {AnyBackend(AOTInductor::from_archive(*model.model.archive, compiled))});
  REQUIRE(report.baseline);
  if (NativeRuntime::available()) {
    CHECK(report.baseline->status == CandidateStatus::ok);
  } else {  // the baseline is this very compilation: it fails alike, named
    CHECK_THAT(report.baseline->reason, Catch::Contains("precision is 16"));
  }
  CHECK(report.candidates.at(0).status == CandidateStatus::build_failed);
  CHECK_THAT(report.candidates.at(0).reason, Catch::Contains("precision is 16"));
}

TEST_CASE("A converted model recorded under another family's name fails its build, naming both "
          "families",
          "[runtimes][exported][archive]") {
  // Before: OpenVINO read the one ONNX record as an IR of two files (vector::_M_range_check, the
  // library's raw text), and ONNX Runtime read an IR as ONNX (protobuf parsing failed).
  const std::optional<TuneReport> report = tune_damaged_runtimes(damaged("families_swapped"));
  if (!report) return;
  for (const CandidateReport& row : report->candidates) {
    INFO(row.backend << ": " << row.reason);
    CHECK(row.status == CandidateStatus::build_failed);
    CHECK(row.reason.find("_M_range_check") == std::string::npos);
    const bool onnx = row.backend.starts_with("OnnxRuntime");
    CHECK_THAT(row.reason,
               Catch::Contains(onnx ? "records variants.onnx as of the family 'openvino': ONNX "
                                      "Runtime runs models of the family 'onnx'"
                                    : "records variants.openvino as of the family 'onnx': "
                                      "OpenVINO runs models of the family 'openvino'"));
  }
}

TEST_CASE("A converted model under a name of its own is a default candidate and can be named; "
          "unusable records under such names fail their candidate, named",
          "[runtimes][exported][archive]") {
  // Before: onnx_main and ov_main made no candidate and no warning, `--backends onnx_main` said
  // "has no AOTInductor model", and onnx2 (a record the archive lacks) and aoti_ghost (a
  // compilation it lacks) were never mentioned (D12).
  const auto model = damaged("variants_renamed");
  std::vector<std::string> described;
  for (const AnyBackend& candidate : default_candidates(model.model, {1}))
    described.push_back(candidate.describe());
  INFO(fmt::format("{}", fmt::join(described, "\n")));
  const auto listed = [&](std::string_view prefix) {
    return std::any_of(described.begin(), described.end(),
                       [&](const std::string& text) { return text.starts_with(prefix); });
  };
  CHECK(listed("AOTInductor(damaged_variants_renamed.pt2:aoti_ghost)"));
  CHECK(listed("OnnxRuntime(damaged_variants_renamed.pt2:onnx2, 1 thread"));
  CHECK(listed("OnnxRuntime(damaged_variants_renamed.pt2:onnx_main, 1 thread"));
  CHECK(listed("OpenVino(damaged_variants_renamed.pt2:ov_main, f32, 1 thread"));
  CHECK_FALSE(listed("OnnxRuntime(damaged_variants_renamed.pt2, "));  // no "onnx" is held

  const std::vector<std::string> names = candidate_names(model.model);
  for (const char* name : {"aoti_default", "aoti_ghost", "onnx_main", "onnx_main_basic", "ov_main",
                           "ov_main_bf16", "onnx2"}) {
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  CHECK(candidate_named(model.model, "onnx_main@1")
            .describe()
            .starts_with("OnnxRuntime(damaged_variants_renamed.pt2:onnx_main, 1 thread"));
  CHECK_THROWS_WITH(candidate_named(model.model, "tensorrt"),
                    Catch::Contains("has no candidate named 'tensorrt': it has aoti_default, "
                                    "aoti_ghost, onnx2"));
  CHECK_THROWS_WITH(candidate_named(model.model, "onnx_main@0"),
                    Catch::Contains("after the @ comes the session's thread count"));
  CHECK_THROWS_WITH(candidate_named(model.model, "onnx_int8"),
                    Catch::Contains("an int8 model moves the outputs past any tolerance"));
  if (!runtime_ready(onnx_runtime_missing()) || !runtime_ready(openvino_missing())) return;
  const TuneReport report = tune_damaged(
      model, candidates_named(model.model, {"onnx_main@1", "ov_main", "onnx2", "aoti_ghost"}));
  CHECK(row_of(report, "OnnxRuntime(damaged_variants_renamed.pt2:onnx_main").status ==
        CandidateStatus::ok);
  CHECK(row_of(report, "OpenVino(damaged_variants_renamed.pt2:ov_main").status ==
        CandidateStatus::ok);
  CHECK_THAT(row_of(report, "OnnxRuntime(damaged_variants_renamed.pt2:onnx2").reason,
             Catch::Contains("names the record 'nope' for onnx2"));
  CHECK_THAT(row_of(report, "AOTInductor(damaged_variants_renamed.pt2:aoti_ghost)").reason,
             Catch::Contains("records an AOTInductor compilation the archive does not hold"));
}

TEST_CASE("An AOTInductor compilation that refuses an input says why in its reason, and "
          "standard error stays clean",
          "[runtimes][exported][archive][shapes]") {
  // Before: the reason was `run_func_( container_handle_, ...) API call failed at
  // ...model_container_runner.cpp`, and the compiled code's own cause went raw to standard
  // error, under --quiet too (D18).
  if (!AOTInductor::available()) return;
  const auto built = [](AOTInductor compiled, const Model& model, const Sample& sample) {
    std::string printed;
    std::string reason;
    aitune::lt::detail::with_stderr_captured(printed, [&] {
      try {
        compiled.build(model, std::vector<Sample>{sample});
      } catch (const Error& error) {
        reason = error.what();
      }
    });
    return std::pair{reason, printed};
  };
  {  // a dtype it was not compiled for
    const auto model = exported("dict_outputs");
    Sample wrong = model.samples.at(0);
    wrong.at(1) = wrong.at(1).toTensor().to(torch::kInt64);
    const auto [reason, printed] = built(
        AOTInductor::from_archive(*model.model.archive, model.model.archive->aoti_models.at(0)),
        model.model, wrong);
    CHECK_THAT(reason, Catch::Contains("running the first sample failed: input_handles[1]: "
                                       "unmatched dtype"));
    CHECK(reason.find("run_func_") == std::string::npos);
    CHECK(printed.find("unmatched dtype") == std::string::npos);
  }
  {  // a range recorded wider than the compilation takes (a damaged or forged record)
    auto model = exported("gpt2_dynamic");
    for (DynamicAxis& axis : model.model.archive->dynamic_axes)
      axis.max = 1000;
    const auto& compiled = model.model.archive->aoti_models;
    const auto ranged = std::find_if(compiled.begin(), compiled.end(),
                                     [](const AotiModelInfo& info) { return info.takes_range; });
    REQUIRE(ranged != compiled.end());
    const auto [reason, printed] =
        built(AOTInductor::from_archive(*model.model.archive, *ranged), model.model, tokens(32));
    CHECK_THAT(reason, Catch::Contains("it refuses inputs of 1x1000:int64, 1x1000:int64, in the "
                                       "range the archive records for it") &&
                           Catch::Contains("expected to be <= 128, but got: 1000"));
    CHECK(reason.find("run_func_") == std::string::npos);
    CHECK(printed.find("but got: 1000") == std::string::npos);
  }
}

TEST_CASE("An archive with an entry that climbs out of its folder is refused before any loader "
          "sees it, naming the entry",
          "[runtimes][exported][archive]") {
  // Before: LibTorch's AOTInductor loader wrote the entry to its temporary folder + the name, so
  // a .pt2 overwrote or created any file the user could write (a zip slip), and the run passed.
  const auto dir = aitune::testing::exported_dir();
  const auto path = dir / "damaged_entry_escapes.pt2";
  if (!std::filesystem::exists(path)) {
    FAIL("missing " << path << ": run tests/support/make_damaged_archives.py (ctest does it)");
  }
  CHECK_THROWS_WITH(load_model(path),
                    Catch::Contains("damaged_entry_escapes.pt2' is refused: its entry "
                                    "'data/aotinductor/aoti_default/../../") &&
                        Catch::Contains("zip_slip_victim.txt' would be unpacked outside the "
                                        "archive's folder (it has a '..' component)"));
  CHECK_FALSE(std::filesystem::exists(dir / "zip_slip_victim.txt"));
  // The names a loader may unpack, and those it may not.
  CHECK(aitune::lt::detail::escaping_record("data/aotinductor/aoti_default/x.wrapper.so").empty());
  CHECK(aitune::lt::detail::escaping_record("data/aotinductor/m/..x/y..").empty());
  CHECK_FALSE(aitune::lt::detail::escaping_record("data/aotinductor/m/../../x").empty());
  CHECK_FALSE(aitune::lt::detail::escaping_record("..").empty());
  CHECK_FALSE(aitune::lt::detail::escaping_record("data/..").empty());
  CHECK_FALSE(aitune::lt::detail::escaping_record("/etc/passwd").empty());
}

TEST_CASE("An archive's records that cannot be read, or name a missing record, say so on every "
          "candidate made from them",
          "[runtimes][exported][archive]") {
  // Before: dropped in silence; the candidate said the archive "holds no onnx model".
  SECTION("extra/aitune.json is not JSON") {
    const auto model = damaged("records_unreadable");
    const std::string cause =
        "the archive's extra/aitune.json cannot be read: it is not valid JSON (truncated?)";
    CHECK(model.model.archive->records_problem == cause);
    const TuneReport report = tune_damaged(model, default_candidates(model.model, {0}));
    // The compilation and both runtimes, named; without the native runtime (LibTorch 2.12 on)
    // the compilation is the baseline, which fails alike.
    const bool compilation_is_baseline = !NativeRuntime::available();
    REQUIRE(report.candidates.size() >= (compilation_is_baseline ? 2U : 3U));
    for (const CandidateReport& row : report.candidates) {
      INFO(row.backend);
      CHECK(row.status == CandidateStatus::build_failed);
      CHECK_THAT(row.reason, Catch::Contains(cause));
    }
    if (compilation_is_baseline) {
      REQUIRE(report.baseline);
      CHECK_THAT(report.baseline->reason, Catch::Contains(cause));
    }
  }
  SECTION("the ONNX record it names is not in the archive") {
    const auto model = damaged("record_missing");
    const TuneReport report = tune_damaged(model, default_candidates(model.model, {0}));
    const CandidateReport& onnx = row_of(report, "OnnxRuntime(");
    CHECK(onnx.status == CandidateStatus::build_failed);
    CHECK_THAT(onnx.reason, Catch::Contains("names the record 'aitune/onnx/missing.onnx' for onnx, "
                                            "which the archive does not hold"));
    CHECK(row_of(report, "OpenVino(").status != CandidateStatus::build_failed);
  }
}

TEST_CASE("A cause recorded in the archive is cut to one line of a report",
          "[runtimes][exported][archive]") {
  // Before: a 100 000-character failed.onnx became a 100 131-character report line.
  if (!runtime_ready(onnx_runtime_missing())) return;
  const auto model = damaged("reason_long");
  const TuneReport report =
      tune_damaged(model, {AnyBackend(OnnxRuntime::from_archive(*model.model.archive))});
  const std::string& reason = report.candidates.at(0).reason;
  CHECK(reason.size() < 700);
  CHECK_THAT(reason, Catch::Contains("more characters)"));
}

TEST_CASE("A record that would unpack to far more than its archive holds fails its candidate "
          "before it is read",
          "[runtimes][exported][archive]") {
  // Before: the reader allocated whatever size the zip claimed (256 MiB here, from 256 KiB).
  if (!runtime_ready(onnx_runtime_missing())) return;
  const auto model = damaged("record_bomb");
  const TuneReport report =
      tune_damaged(model, {AnyBackend(OnnxRuntime::from_archive(*model.model.archive))});
  const CandidateReport& onnx = report.candidates.at(0);
  CHECK(onnx.status == CandidateStatus::build_failed);
  CHECK_THAT(onnx.reason, Catch::Contains("would unpack to 268435456 bytes, more than the "
                                          "67108864 bytes a record may hold"));
}

TEST_CASE("A compiled library that does not load leaves no extracted files behind",
          "[runtimes][exported][archive]") {
  // Before: LibTorch's extraction folder (megabytes) stayed in the temporary folder per run.
  const auto model = damaged("library_garbage");
  // Folders of the temporary folder holding an extracted aoti_default (TMP/XXXXXX/ARCHIVE/...):
  // POSIX calls, since the wheel's libtorch.so brings an older std::filesystem.
  const auto extracted = [] {
    const std::string root = "/tmp";  // LibTorch's loader extracts there, whatever TMPDIR says
    const auto names_in = [](const std::string& folder) {
      std::vector<std::string> names;
      if (DIR* listing = ::opendir(folder.c_str())) {
        while (const dirent* entry = ::readdir(listing)) {
          if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") {
            names.emplace_back(entry->d_name);
          }
        }
        ::closedir(listing);
      }
      return names;
    };
    std::set<std::string> found;
    for (const std::string& folder : names_in(root)) {
      for (const std::string& archive : names_in(root + "/" + folder)) {
        struct stat info {};
        const std::string path =
            root + "/" + folder + "/" + archive + "/data/aotinductor/aoti_default";
        if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) found.insert(path);
      }
    }
    return found;
  };
  const std::set<std::string> before = extracted();
  const TuneReport report =
      tune_damaged(model, {AnyBackend(AOTInductor::from_archive(
                              *model.model.archive, model.model.archive->aoti_models.at(0)))});
  CHECK(report.candidates.at(0).status == CandidateStatus::build_failed);
  // No folder left that was not there before. (Tests running beside it extract and remove their
  // own: a folder of theirs gone meanwhile is no failure of this one.)
  std::vector<std::string> left;
  for (const std::string& path : extracted()) {
    if (!before.contains(path)) left.push_back(path);
  }
  CHECK(left.empty());
}

TEST_CASE("A wrong graph's bf16 session shares its fp32 session's verdict and is never selected",
          "[runtimes][exported][archive]") {
  // The IR's weights are 5 % too large: fp32's tolerance refuses it, bf16's alone would not.
  if (!runtime_ready(openvino_missing())) return;
  const auto model = damaged("ir_weights_scaled");
  std::vector<AnyBackend> candidates;
  candidates.emplace_back(OpenVino::from_archive(*model.model.archive));
  if (OpenVino::cpu_has_bf16()) {
    candidates.emplace_back(OpenVino::from_archive(*model.model.archive, Precision::bf16));
  }
  const TuneReport report = tune_damaged(model, std::move(candidates));
  const CandidateReport& fp32 = report.candidates.at(0);
  CHECK(fp32.status == CandidateStatus::incorrect);
  if (report.candidates.size() > 1) {
    const CandidateReport& bf16 = report.candidates.at(1);
    CHECK(bf16.status == CandidateStatus::incorrect);
    CHECK_THAT(bf16.reason, Catch::StartsWith("the full-precision run of its graph, " +
                                              fp32.backend + ", is incorrect"));
  } else {
    WARN("this CPU has no bf16: the bf16 session is not tried");
  }
  CHECK(report.baseline_selected);
}
#endif

namespace {

/// 100 random small_cnn inputs, seeded from `first_seed` on: held out from its calibration.
std::vector<Sample> small_cnn_held_out(int first_seed) {
  std::vector<Sample> held_out;
  for (int i = 0; i < 100; ++i) {
    torch::manual_seed(first_seed + i);
    held_out.push_back(Sample{torch::randn({1, 3, 32, 32})});
  }
  return held_out;
}

/// The budget the int8 tests tune under, every candidate checked (no screen): cosine 0.99 and
/// top-1 agreement 90 %.
StrategyConfig int8_budget_config() {
  return unscreened(quick_config())
      .set_accuracy_budget(AccuracyBudget{}.set_min_cosine(0.99).set_top_k({"", 1, 0.9}));
}

}  // namespace

TEST_CASE("An int8 AOTInductor compilation joins the candidates only under an accuracy budget, "
          "is never the baseline, is judged by the budget and refuses its calibration inputs",
          "[runtimes][exported][accuracy][quantized]") {
  if (!AOTInductor::available()) {
    WARN("this LibTorch runs no AOTInductor package");
    return;
  }
  // Its quantiser is a fake (weights rounded to int8's grid; CI has no torchao): what is tested
  // is how a quantised compilation is tried, not int8's speed.
  const auto model = exported("small_cnn_aoti_int8");
  const Pt2Archive& archive = *model.model.archive;
  const auto int8 =
      std::find_if(archive.aoti_models.begin(), archive.aoti_models.end(),
                   [](const AotiModelInfo& info) { return info.name == "aoti_int8"; });
  REQUIRE(int8 != archive.aoti_models.end());
  CHECK(int8->quantization == "int8");
  CHECK(int8->calibration_digests.size() == 32);
  // Without a native runtime (2.12 on) the fp32 compilation is the baseline, never the int8 one.
  const AotiModelInfo* stand_in = aoti_baseline_of(model.model);
  CHECK((NativeRuntime::available() ? stand_in == nullptr
                                    : stand_in != nullptr && stand_in->name == "aoti_default"));
  const auto is_int8 = [](const AnyBackend& candidate) {
    return candidate.describe() == "AOTInductor(small_cnn_aoti_int8.pt2:aoti_int8)";
  };
  const std::vector<AnyBackend> plain = default_candidates(model.model);
  CHECK(std::none_of(plain.begin(), plain.end(), is_int8));
  const std::vector<AnyBackend> with_int8 =
      default_candidates(model.model, default_runtime_threads(), 1, true);
  CHECK(std::count_if(with_int8.begin(), with_int8.end(), is_int8) == 1);

  const std::vector<Sample> held_out = small_cnn_held_out(700);
  const StrategyConfig config = int8_budget_config();
  const auto int8_row = [](const TuneReport& report) {
    const auto found = std::find_if(report.candidates.begin(), report.candidates.end(),
                                    [](const CandidateReport& r) {
                                      return r.backend.find(":aoti_int8)") != std::string::npos;
                                    });
    REQUIRE(found != report.candidates.end());
    return found;
  };
  const TunedModule tuned = tune(model.model, held_out, {.config = config});
  const auto row = int8_row(tuned.report());
  INFO(row->backend << ": " << row->reason);
  CHECK(row->status == CandidateStatus::ok);
  CHECK(row->judged_by_budget);
  CHECK(row->quantization == "int8");
  CHECK(row->reduced_precision);
  CHECK_THAT(row->accuracy_verdict, Catch::Contains("output: cosine 0.99"));

  // One of its calibration inputs among the samples: it refuses to be judged on it.
  std::vector<Sample> with_calibration = held_out;
  with_calibration[9] = load_sample_file(
      aitune::testing::exported_dir() / "small_cnn_aoti_int8.io" / "calibration_0.pt", torch::kCPU);
  const TunedModule refused = tune(model.model, with_calibration, {.config = config});
  const auto refused_row = int8_row(refused.report());
  CHECK(refused_row->status == CandidateStatus::build_failed);
  CHECK_THAT(refused_row->reason,
             Catch::Contains("sample 10 of 100: it is one of the 32 inputs the "
                             "'aoti_int8' model was calibrated on"));
}

TEST_CASE("An int8 ONNX model joins the candidates only under an accuracy budget, is judged by "
          "it on held-out samples, and refuses the inputs it was calibrated on",
          "[runtimes][exported][accuracy][quantized]") {
  if (!runtime_ready(onnx_runtime_missing())) return;
  const auto model = exported("small_cnn");
  const RuntimeVariantInfo& int8 = model.model.archive->runtime_variants.at("onnx_int8");
  CHECK(int8.family == "onnx");
  CHECK(int8.quantization == "int8");
  CHECK(int8.calibration_digests.size() == 32);
  const auto described = [](const std::vector<AnyBackend>& candidates) {
    std::vector<std::string> names;
    for (const AnyBackend& candidate : candidates)
      names.push_back(candidate.describe());
    return names;
  };
  const auto is_int8 = [](const std::string& name) {
    return name.find("OnnxRuntime(small_cnn.pt2, int8") == 0;
  };
  const std::vector<std::string> plain = described(default_candidates(model.model));
  CHECK(std::none_of(plain.begin(), plain.end(), is_int8));
  const std::vector<std::string> with_int8 =
      described(default_candidates(model.model, default_runtime_threads(), 1, true));
  CHECK(std::count_if(with_int8.begin(), with_int8.end(), is_int8) ==
        static_cast<std::ptrdiff_t>(default_runtime_threads().size()));

  const std::vector<Sample> held_out = small_cnn_held_out(500);
  // Every int8 session checked: the 1-thread one is clearly slower than the others here.
  const StrategyConfig config = int8_budget_config();
  if (!NativeRuntime::available()) {
    // From PyTorch 2.12 there is no native runtime, and this archive has no AOTInductor model to
    // be the baseline: with nothing to check against, no candidate is tried, int8 least of all.
    CHECK_THROWS_WITH(tune(model.model, held_out, {.config = config}),
                      Catch::Contains("nothing to check a candidate's outputs against"));
    return;
  }
  const TunedModule tuned = tune(model.model, held_out, {.config = config});
  const TuneReport& report = tuned.report();
  std::size_t judged = 0;
  for (const CandidateReport& row : report.candidates) {
    INFO(row.backend << ": " << row.reason);
    if (!is_int8(row.backend)) {
      CHECK_FALSE(row.judged_by_budget);
      continue;
    }
    ++judged;
    CHECK(row.status == CandidateStatus::ok);
    CHECK(row.judged_by_budget);
    CHECK(row.quantization == "int8");
    CHECK(row.reduced_precision);
    CHECK_THAT(row.accuracy_verdict,
               Catch::Contains("output: cosine 0.99") && Catch::Contains("top-1 agreement"));
    CHECK(to_json(report)["candidates"][&row - report.candidates.data()]["quantization"] == "int8");
  }
  CHECK(judged == default_runtime_threads().size());
  CHECK_THAT(render_table(report), Catch::Contains("int8"));

  // One of the calibration inputs among the samples: the int8 sessions refuse to be judged on it.
  std::vector<Sample> with_calibration = held_out;
  with_calibration[41] = load_sample_file(
      aitune::testing::exported_dir() / "small_cnn.io" / "calibration_0.pt", torch::kCPU);
  const TunedModule refused = tune(model.model, with_calibration, {.config = config});
  for (const CandidateReport& row : refused.report().candidates) {
    if (!is_int8(row.backend)) continue;
    CHECK(row.status == CandidateStatus::build_failed);
    CHECK_THAT(row.reason, Catch::Contains("sample 42 of 100: it is one of the 32 inputs the "
                                           "'onnx_int8' model was calibrated on"));
  }
}
