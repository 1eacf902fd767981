// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The other runtimes a user could run instead: ONNX Runtime and OpenVINO, on the models
// tools/export_model.py converts into the .pt2 archive. Where this build lacks a runtime, each
// test passes saying it was skipped - unless the environment sets AITUNE_REQUIRE_RUNTIMES=1 (CI
// does), where that is a failure: a run whose runtime tests all skipped must not go green.
#include "torch/exported_models.hpp"
#include "torch/torch_catch.hpp"

#include <algorithm>
#include <cstdlib>
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
  expected = {"OnnxRuntime(model.pt2, 1 thread",    "OnnxRuntime(model.pt2",
              "OpenVino(model.pt2, fp32, 1 thread", "OpenVino(model.pt2, fp32",
              "OpenVino(model.pt2, bf16, 1 thread", "OpenVino(model.pt2, bf16"};
  if (!bf16) expected.resize(4);
  const bool several_threads = std::thread::hardware_concurrency() > 1;
  CHECK(names_of(default_candidates(model)) ==
        names_of(default_candidates(model, several_threads ? std::vector<int>{1, 0}
                                                           : std::vector<int>{0})));
  CHECK(names_of(default_candidates(model, {1, 0})) == expected);
  // A sweep: each at every count.
  expected = {"OnnxRuntime(model.pt2, 1 thread",    "OnnxRuntime(model.pt2, 2 threads",
              "OpenVino(model.pt2, fp32, 1 thread", "OpenVino(model.pt2, fp32, 2 threads",
              "OpenVino(model.pt2, bf16, 1 thread", "OpenVino(model.pt2, bf16, 2 threads"};
  if (!bf16) expected.resize(4);
  CHECK(names_of(default_candidates(model, runtime_thread_counts(2))) == expected);
  CHECK_THROWS_AS(default_candidates(model, std::vector<int>{}), ConfigError);
  CHECK_THROWS_WITH(default_candidates(model, {1, -1}),
                    Catch::Contains("0 (the runtime's default)"));
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
using aitune::testing::exported;
using aitune::testing::keys_of;
using aitune::testing::quick_config;

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

TEST_CASE("An ONNX Runtime session serves calls from several threads at once, each with its own "
          "answer",
          "[runtimes][exported][threads]") {
  if (!runtime_ready(onnx_runtime_missing())) return;
  const auto model = exported("dict_outputs");
  AnyBackend backend(OnnxRuntime::from_archive(*model.model.archive));
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
#endif
