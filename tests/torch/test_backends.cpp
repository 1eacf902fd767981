// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The TorchScript backends, AnyBackend, the canary, the tuned module and whole tunings.
#include "counted_backend.hpp"  // examples/: the wrapper docs/libtorch.md shows
#include "support/fake_backend.hpp"
#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <atomic>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace aitune;
using namespace aitune::lt;
using namespace aitune::testing;

namespace {

/// A short race (looks after 4, 6 and 9 rounds): these tests check behaviour, not speed.
StrategyConfig quick_config(SinkRecorder* sink = nullptr) {
  return StrategyConfig{}
      .set_profiling(
          ProfilingConfig{}.set_race(RaceConfig{}.set_looks(4, 1.5, 3).set_max_rounds(9)))
      .set_sink(sink ? sink->sink() : null_sink());
}

c10::IValue eager_output(const torch::jit::Module& module, const Sample& sample) {
  c10::InferenceMode guard;
  auto copy = module.clone();
  copy.register_attribute("training", c10::BoolType::get(), false);
  return copy.forward(sample);
}

const CandidateReport& entry(const TuneReport& report, std::string_view backend) {
  const CandidateReport* found = report.find(backend);
  if (found == nullptr) FAIL("no report entry for " << backend);
  return *found;
}

}  // namespace

TEST_CASE("LibTorch backends satisfy the Backend concept", "[concepts]") {
  static_assert(Backend<ScriptModuleBackend>);
  static_assert(Backend<TorchEager>);
  static_assert(Backend<AnyBackend>);
  static_assert(Backend<PerturbedOutputs>);
  static_assert(TorchBackend<TorchScriptFrozen>);
  static_assert(!TorchBackend<FakeBackend>);  // other model and sample types
  static_assert(std::is_constructible_v<AnyBackend, ChannelsLast>);
  static_assert(!std::is_constructible_v<AnyBackend, FakeBackend>);
  SUCCEED("checked at compile time");
}

TEST_CASE("A wrapper backend whose constructor takes an AnyBackend compiles, tunes and serves",
          "[backends]") {
  static_assert(TorchBackend<example::CountedBackend>);
  static_assert(std::is_constructible_v<AnyBackend, example::CountedBackend>);
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image();
  // The only candidate, and no race against the baseline: the wrapper is what gets selected.
  MinLatencyStrategy<AnyBackend> strategy({example::CountedBackend(TorchScriptFrozen())},
                                          quick_config().enable_performance_validation(false));
  auto result = strategy.tune(model, samples);
  CHECK(result.report.selected == "Counted(TorchScriptFrozen())");
  CHECK(result.report.candidates[0].status == CandidateStatus::ok);  // checked like any other
  const example::CountedBackend* counted = result.backend.target<example::CountedBackend>();
  REQUIRE(counted != nullptr);
  const long before = counted->calls();
  CHECK(before > 0);  // the correctness check ran the samples through it
  (void)result.backend.infer(samples[0]);
  CHECK(counted->calls() == before + 1);
}

TEST_CASE("Every TorchScript variant matches eager within its tolerance", "[backends]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image();
  const c10::IValue expected = eager_output(model.module, samples[0]);
  std::vector<AnyBackend> variants{TorchEager(), TorchScriptFrozen(), TorchScriptOptimized(),
                                   ChannelsLast(), TorchScriptFrozen(torch::kBFloat16)};
  for (auto& backend : variants) {
    INFO(backend.describe());
    backend.build(model, samples);
    const c10::IValue actual = backend.infer(samples[0]);
    const auto check = output_checker<AnyBackend>::check(backend, &expected, actual);
    CHECK(check.passed);
    INFO(check.reason);
  }
  CHECK(variants[4].describe() == "TorchScriptFrozen(dtype=bf16)");
  CHECK(variants[4].output_policy().reduced_precision == Precision::bf16);
  CHECK(variants[1].describe() == "TorchScriptFrozen()");
  CHECK(variants[3].key() == "torchscript:freeze,channels_last,:fp32");
  CHECK(variants[0].describe() == "TorchEager()");
}

TEST_CASE("Backends work on clones and never change the user's module", "[backends]") {
  const Model model{make_conv_net(), torch::kCPU};
  const at::Tensor w1_before = model.module.attr("w1").toTensor().clone();
  const void* w1_data = model.module.attr("w1").toTensor().data_ptr();
  for (AnyBackend backend : {AnyBackend(TorchScriptOptimized()), AnyBackend(ChannelsLast()),
                             AnyBackend(TorchScriptFrozen(torch::kBFloat16))}) {
    backend.build(model, one_image());
  }
  CHECK_FALSE(model.module.hasattr("training"));  // the attribute went to the clones only
  const at::Tensor w1_after = model.module.attr("w1").toTensor();
  CHECK(w1_after.data_ptr() == w1_data);
  CHECK(w1_after.scalar_type() == torch::kFloat);
  CHECK(w1_after.is_contiguous());
  CHECK(w1_after.equal(w1_before));
  CHECK(model.module.get_method("forward").graph()->toString().find("prim::GetAttr") !=
        std::string::npos);
}

TEST_CASE("A deactivated backend frees its module and comes back on activate", "[backends]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image();
  TorchScriptFrozen backend;
  backend.build(model, samples);
  const at::Tensor first = backend.infer(samples[0]).toTensor();
  backend.deactivate();
  CHECK_THROWS_AS(backend.infer(samples[0]), BackendStateError);
  backend.activate();
  CHECK(backend.infer(samples[0]).toTensor().equal(first));
}

TEST_CASE("A backend the build cannot run fails at build time with a clear reason", "[backends]") {
  const Model model{make_conv_net(), torch::kCPU};
  SECTION("an input the model cannot take") {
    TorchScriptFrozen backend;
    const std::vector<Sample> wrong_channels{Sample{torch::randn({1, 5, 8, 8})}};
    CHECK_THROWS_WITH(backend.build(model, wrong_channels),
                      Catch::StartsWith("running the first sample failed: RuntimeError: Given "
                                        "groups=1") &&
                          !Catch::Contains("\n"));
    CHECK(backend.state() == BackendState::failed);
  }
  if (!AITUNE_TORCH_AT_LEAST(2, 6)) {
    SECTION("fp16 on the CPU with an older LibTorch") {
      TorchScriptFrozen backend(torch::kHalf);
      CHECK_THROWS_WITH(backend.build(model, one_image()),
                        Catch::Contains("fp16 on the CPU is not supported") &&
                            Catch::Contains("use bf16"));
    }
  }
}

TEST_CASE("AnyBackend copies unbuilt backends and exposes the wrapped one", "[backends]") {
  AnyBackend any = ChannelsLast(torch::kBFloat16);
  AnyBackend copy = any;
  CHECK(copy.describe() == "ChannelsLast(dtype=bf16)");
  CHECK(copy.thread_safe());
  CHECK(copy.target<ChannelsLast>() != nullptr);
  CHECK(copy.target<TorchEager>() == nullptr);
  CHECK(make_baseline(Model{}).describe() == "TorchEager()");
  ScriptModuleBackend custom(ScriptRecipe{"Custom", true, false, false, std::nullopt});
  custom.set_tolerance(Tolerance{0.5, 0.5});
  CHECK(AnyBackend(custom).output_policy().tolerance.rtol == 0.5);
}

TEST_CASE("A model that writes to its inputs changes neither the caller's samples nor the "
          "verdicts",
          "[strategy][samples]") {
  torch::jit::Module module("WritesInput");
  module.register_buffer("bias", torch::ones({1, 8}));
  module.define(R"(
    def forward(self, x):
        x.mul_(2.0)
        return x + self.bias
  )");
  const Model model{module, torch::kCPU};
  const at::Tensor original = torch::randn({1, 8});
  const std::vector<Sample> samples{Sample{original.clone()}};
  const TunedModule tuned =
      tune(model, samples,
           {.candidates = default_candidates(c10::Device(c10::kCPU)), .config = quick_config()});
  CHECK(samples[0][0].toTensor().equal(original));  // the caller's sample is as it was
  for (const auto& candidate : tuned.report().candidates) {
    INFO(candidate.backend << ": " << candidate.reason);
    CHECK(candidate.status == CandidateStatus::ok);  // every candidate agrees with the baseline
  }
  const Sample request{original.clone()};
  const at::Tensor output = tuned.forward(request).toTensor().to(torch::kFloat);
  CHECK(request[0].toTensor().equal(original));
  CHECK(torch::allclose(output, original * 2 + 1, 1e-2, 1e-2));
}

TEST_CASE("TunedModule::forward reports LibTorch's failures as aitune::Error naming the module",
          "[tuned]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image(16);
  const TunedModule tuned = tune(model, samples,
                                 {.candidates = std::vector<AnyBackend>{TorchScriptFrozen()},
                                  .config = quick_config().set_module_name("net")});
  // Same rank and dtype, so the input check passes; the convolution refuses 5 channels.
  const Sample wrong{torch::randn({1, 5, 16, 16})};
  CHECK_THROWS_AS(tuned.forward(wrong), Error);
  CHECK_THROWS_WITH(tuned.forward(wrong),
                    Catch::StartsWith("tuned module 'net' (") && Catch::Contains("forward failed"));
}

TEST_CASE("A reduced-precision winner serves outputs in the model's dtype unless asked not to",
          "[tuned][precision]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image(16);
  // Validation off: the only candidate, bf16, is selected whatever its speed.
  TunedModule tuned =
      tune(model, samples,
           {.candidates = std::vector<AnyBackend>{TorchScriptFrozen(c10::ScalarType::BFloat16)},
            .config = quick_config().enable_performance_validation(false)});
  REQUIRE(tuned.selected() == "TorchScriptFrozen(dtype=bf16)");
  CHECK(tuned.output_dtype() == OutputDtype::as_baseline);
  CHECK(tuned.forward(samples[0]).toTensor().scalar_type() == c10::ScalarType::Float);
  tuned.set_output_dtype(OutputDtype::as_computed);
  CHECK(tuned.forward(samples[0]).toTensor().scalar_type() == c10::ScalarType::BFloat16);
  const CandidateReport& winner = *tuned.report().selected_candidate();
  CHECK(winner.precision == Precision::bf16);
  REQUIRE_FALSE(winner.accuracy.empty());
  CHECK(winner.accuracy[0].worst_error_ratio < 1.0);
}

TEST_CASE("Under an accuracy budget a canary claiming bf16 is admitted while its outputs stay "
          "close, and refused with its figures when they break",
          "[strategy][accuracy]") {
  const Model model{make_conv_net(), torch::kCPU};
  std::vector<Sample> samples;
  for (int i = 0; i < 100; ++i)
    samples.push_back(one_image(12).front());
  // 3e-3 of the output's scale is outside float32's tolerance and inside the budget; 0.25 is not.
  std::vector<AnyBackend> candidates{
      PerturbedOutputs(TorchEager(), 3e-3).claiming(Precision::bf16),
      PerturbedOutputs(TorchEager(), 0.25).claiming(Precision::bf16)};
  // Both checked: as slow as eager PyTorch and more, the screening would leave them unchecked.
  StrategyConfig unscreened = quick_config();
  unscreened.set_profiling(
      ProfilingConfig{unscreened.profiling()}.set_screening(ScreeningConfig{}.set_rounds(0)));
  const StrategyConfig config = StrategyConfig{unscreened}.set_accuracy_budget(
      AccuracyBudget{}.set_max_relative_error(0.01).set_min_cosine(0.999));
  const TunedModule tuned = tune(model, samples, {.candidates = candidates, .config = config});
  const TuneReport& report = tuned.report();
  CHECK(report.accuracy_budget == "relative error <= 0.01; cosine >= 0.999; on >= 100 samples");

  const CandidateReport& close =
      entry(report, "PerturbedOutputs(TorchEager(), magnitude=0.003, claims bf16)");
  INFO(close.reason);
  CHECK(close.status == CandidateStatus::ok);
  CHECK(close.judged_by_budget);
  REQUIRE(close.accuracy.size() == 1);
  CHECK(*close.accuracy[0].relative_error == Approx(3e-3).epsilon(0.01));
  CHECK(*close.accuracy[0].cosine > 0.999);
  CHECK_THAT(close.accuracy_verdict, Catch::StartsWith("output: relative error 0.003 <= 0.01"));

  const CandidateReport& broken =
      entry(report, "PerturbedOutputs(TorchEager(), magnitude=0.25, claims bf16)");
  CHECK(broken.status == CandidateStatus::incorrect);
  CHECK_THAT(broken.reason, Catch::Contains("outside the accuracy budget: output: relative error "
                                            "0.25 > 0.01; output: cosine 0.") &&
                                Catch::Contains("< 0.999"));
  CHECK(report.selected != broken.backend);
  CHECK_THAT(render_table(report), Catch::Contains("within the accuracy budget"));

  // Without the budget, the same canaries meet bf16's tolerance (6.25e-2) or miss it.
  const TunedModule plain = tune(model, samples, {.candidates = candidates, .config = unscreened});
  CHECK_FALSE(entry(plain.report(), close.backend).judged_by_budget);
  CHECK(entry(plain.report(), close.backend).status == CandidateStatus::ok);
  CHECK_THAT(entry(plain.report(), broken.backend).reason,
             Catch::Contains("outside the tolerance"));
}

TEST_CASE("The strategy tunes a C++-defined module and rejects a perturbed candidate",
          "[strategy]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image(24);
  std::vector<AnyBackend> candidates = default_candidates(torch::kCPU);
  candidates.emplace_back(PerturbedOutputs(TorchScriptFrozen()));
  SinkRecorder sink;
  MinLatencyStrategy<AnyBackend> strategy(candidates, quick_config(&sink));
  const auto result = strategy.tune(model, samples, "convnet");
  REQUIRE(result.report.candidates.size() == candidates.size());
  const auto& perturbed =
      entry(result.report, "PerturbedOutputs(TorchScriptFrozen(), magnitude=0.25)");
  CHECK(perturbed.status == CandidateStatus::incorrect);
  CHECK_THAT(perturbed.reason,
             Catch::Contains("outside the tolerance") && Catch::Contains("worst at"));
  for (const auto& candidate : result.report.candidates) {
    if (&candidate != &perturbed) {
      INFO(candidate.backend << ": " << candidate.reason);
      CHECK(candidate.status == CandidateStatus::ok);
    }
  }
  CHECK(result.backend.is_active());
  CHECK(sink.contains("convnet: "));
  REQUIRE(result.report.baseline);
  CHECK(result.report.baseline->backend == "TorchEager()");
}

TEST_CASE("The tuned module runs the selected backend and rejects mismatched inputs",
          "[tuned_module]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image();
  const TunedModule tuned =
      tune(model, samples,
           {.candidates = std::vector<AnyBackend>{TorchScriptFrozen()}, .config = quick_config()});
  const c10::IValue expected = eager_output(model.module, samples[0]);
  const c10::IValue actual = tuned.forward(samples[0]);
  CHECK(compare_outputs(&expected, actual).passed);
  // Another shape of the same rank and dtype is fine.
  CHECK(tuned.forward(Sample{torch::randn({1, 3, 9, 9})}).toTensor().size(2) == 9);

  CHECK_THROWS_WITH(tuned.forward(Sample{}), Catch::Contains("expects 1 input(s), got 0"));
  CHECK_THROWS_WITH(tuned.forward(Sample{torch::randn({1, 3, 8, 8}, torch::kDouble)}),
                    Catch::Contains("input 0 is a Double tensor of rank 4; it was tuned with a "
                                    "Float tensor of rank 4"));
  CHECK_THROWS_WITH(tuned.forward(Sample{torch::randn({3, 8, 8})}),
                    Catch::Contains("a Float tensor of rank 3"));
  CHECK_THROWS_WITH(tuned.forward(Sample{c10::IValue(3)}), Catch::Contains("input 0 is a Int"));
  CHECK_THROWS_WITH(tuned.forward(Sample{at::Tensor()}), Catch::Contains("an undefined tensor"));
  CHECK_THAT(tuned.selected(), Catch::Contains("()"));
}

TEST_CASE("The tuned module is safe to call from 8 threads at once",
          "[tuned_module][concurrency]") {
  const Model model{make_nested_net(), torch::kCPU};
  std::vector<Sample> samples{Sample{torch::randn({4, 16}), c10::IValue(int64_t{3})}};
  const TunedModule tuned =
      tune(model, samples,
           {.candidates = std::vector<AnyBackend>{TorchScriptFrozen(), TorchScriptOptimized()},
            .config = quick_config()});

  std::vector<Sample> inputs;
  std::vector<c10::IValue> expected;
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(Sample{torch::randn({4, 16}), c10::IValue(int64_t{i})});
    expected.push_back(tuned.forward(inputs.back()));
  }
  std::atomic<int> mismatches{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < 50; ++call) {
        const int which = (t + call) % 8;
        try {
          const c10::IValue output = tuned.forward(inputs[which]);
          if (!compare_outputs(&expected[which], output).passed) ++mismatches;
        } catch (...) {
          ++errors;
        }
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  CHECK(errors == 0);
  CHECK(mismatches == 0);
}

TEST_CASE("TorchScript calls from a thread of the server's own use LibTorch's intra-op thread "
          "count",
          "[tuned_module][concurrency]") {
  // A matmul goes to the BLAS, not through ATen's parallel_for, which applies LibTorch's count
  // to a thread: without the backend applying it, a server's thread ran it on every core.
  const Model model{make_nested_net(), torch::kCPU};
  const std::vector<Sample> samples{Sample{torch::randn({4, 16}), c10::IValue(int64_t{3})}};
  for (AnyBackend backend : {AnyBackend(TorchEager()), AnyBackend(TorchScriptFrozen())}) {
    INFO(backend.describe());
    backend.build(model, samples);
    const std::optional<int> threads =
        openmp_threads_of_new_thread_after([&] { (void)backend.infer(samples[0]); });
    if (!threads) {
      SUCCEED("this LibTorch has no OpenMP, or this machine one core: nothing to tell apart");
      return;
    }
    CHECK(*threads == 1);
  }
}

TEST_CASE("A backend that is not thread-safe is serialised by the tuned module",
          "[tuned_module][concurrency]") {
  // PerturbedOutputs over a frozen module reports the inner's thread safety; a plain
  // ScriptModuleBackend wrapped without thread_safe() must be treated as unsafe.
  struct Unsafe : BackendLifecycle<Unsafe> {
    using model_type = Model;
    using sample_type = Sample;
    using output_type = c10::IValue;
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    Unsafe() = default;
    Unsafe(const Unsafe&) {}
    std::string describe() const { return "Unsafe()"; }
    std::string key() const { return "unsafe"; }
    void do_build(const Model&, std::span<const Sample>) {}
    c10::IValue do_infer(const Sample& sample) {
      if (++inside > 1) ++overlaps;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      --inside;
      return sample.front();
    }
  };
  AnyBackend any = Unsafe();
  CHECK_FALSE(any.thread_safe());
  const std::vector<Sample> samples{Sample{torch::ones({2})}};
  any.build(Model{}, samples);
  TuneReport report;
  report.module = "unsafe";
  const TunedModule tuned(TuneResult<AnyBackend>{std::move(any), report}, samples);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int call = 0; call < 20; ++call)
        (void)tuned.forward(samples[0]);
    });
  }
  for (auto& thread : threads)
    thread.join();
  CHECK(tuned.backend().target<Unsafe>()->overlaps == 0);
}

TEST_CASE("The one-call API tunes a model over the defaults for its kind and device",
          "[strategy]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image();
  const TunedModule tuned =
      tune(model, samples,
           {.config = StrategyConfig{}
                          .set_sink(null_sink())
                          .set_profiling(ProfilingConfig{}.set_time_budget_ms(10'000))});
  const TuneReport& report = tuned.report();
  REQUIRE(report.candidates.size() == default_candidates(model).size());
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    CHECK(report.candidates[i].backend == default_candidates(model)[i].describe());
  }
  CHECK(report.baseline->backend == "TorchEager()");
  CHECK(tuned.forward(samples[0]).isTensor());
}

TEST_CASE("LibTorch's warnings raised while tuning reach the config's sink, each text once",
          "[strategy][log]") {
  torch::jit::Module warns("Warns");
  warns.define(R"(
    def forward(self, x):
        torch.warn("a warning from the model")
        return x * 2.0
  )");
  const Model model{warns, torch::kCPU};
  const auto samples = one_image();
  SinkRecorder recorder;
  const TunedModule tuned =
      tune(model, samples,
           {.config = StrategyConfig{}
                          .set_sink(recorder.sink())
                          .set_profiling(ProfilingConfig{}.set_time_budget_ms(2'000))});
  std::size_t routed = 0;
  for (const auto& line : *recorder.lines)
    routed += line.find("WARNING: LibTorch: a warning from the model") != std::string::npos;
  CHECK(routed == 1);  // the model warned on every call of the tuning

  // After the tuning this thread's handler is the one it had: the route is gone.
  struct Counting final : c10::WarningHandler {
    std::size_t seen = 0;
#if AITUNE_TORCH_AT_LEAST(2, 0)
    void process(const c10::Warning& /*warning*/) override {
      ++seen;
    }
#else
    void process(const c10::SourceLocation&, const std::string&, const bool) override {
      ++seen;
    }
#endif
  } counting;
  {
#if AITUNE_TORCH_AT_LEAST(2, 0)
    const c10::WarningUtils::WarningHandlerGuard guard(&counting);
#else
    const c10::Warning::WarningHandlerGuard guard(&counting);
#endif
    (void)tuned.forward(samples[0]);
    // A route on this thread sends only this thread's warnings.
    SinkRecorder elsewhere;
    const TorchWarningRoute route(Logger(elsewhere.sink()));
    std::thread([] { TORCH_WARN("raised on another thread"); }).join();
    CHECK(elsewhere.lines->empty());
  }
  CHECK(counting.seen == 1);
}

TEST_CASE("A real traced torchvision model tunes end to end", "[strategy][real_model]") {
  const auto path = models_dir() / "squeezenet1_1.pt";
  if (!std::filesystem::exists(path)) {
    FAIL("missing " << path << ": run tools/make_models.py squeezenet1_1 (ctest does it)");
  }
  const Model model = load_model(path);
  const std::vector<Sample> samples{
      make_random_sample({parse_input_spec("1x3x224x224")}, torch::kCPU, 1)};
  std::vector<AnyBackend> candidates = default_candidates(torch::kCPU);
  candidates.emplace_back(PerturbedOutputs(TorchScriptOptimized()));
  const TunedModule tuned =
      tune(model, samples, {.candidates = candidates, .config = quick_config()});
  const TuneReport& report = tuned.report();
  CHECK(entry(report, "PerturbedOutputs(TorchScriptOptimized(), magnitude=0.25)").status ==
        CandidateStatus::incorrect);
  CHECK(entry(report, "TorchScriptOptimized()").status == CandidateStatus::ok);
  REQUIRE(report.baseline);
  CHECK(report.baseline->status == CandidateStatus::ok);
  // The tuned module gives the eager model's answer, within the selected backend's tolerance.
  const c10::IValue expected = eager_output(model.module, samples[0]);
  CHECK(output_checker<AnyBackend>::check(tuned.backend(), &expected, tuned.forward(samples[0]))
            .passed);
  if (report.baseline_selected) WARN("the baseline won on this machine: " << render_table(report));
}

TEST_CASE("AOTInductor fails at build with a clear reason where it cannot run", "[backends]") {
  AOTInductor backend("missing_model.pt2");
  CHECK(backend.describe() == "AOTInductor(missing_model.pt2)");
  const Model model{make_conv_net(), torch::kCPU};
  if (!AOTInductor::available()) {
    CHECK_THROWS_WITH(backend.build(model, one_image()),
                      Catch::Contains("AOTInductor needs LibTorch 2.6 or newer") &&
                          Catch::Contains("this build has LibTorch"));
  } else {
    CHECK_THROWS_WITH(backend.build(model, one_image()), Catch::Contains("does not exist"));
  }
  // In a tuning it is one failed candidate among others.
  MinLatencyStrategy<AnyBackend> strategy({AOTInductor("missing_model.pt2"), TorchScriptFrozen()},
                                          quick_config());
  const auto result = strategy.tune(model, one_image());
  CHECK(result.report.candidates[0].status == CandidateStatus::build_failed);
  CHECK(result.report.candidates[1].status == CandidateStatus::ok);
}

template <class B>
concept HasCudnnBenchmarkOption = requires(B& backend) {
  backend.set_cudnn_benchmark(true);
};

TEST_CASE("the cuDNN-benchmark candidate is gone, since it could not differ from the "
          "baseline",
          "[backends]") {
  // cuDNN caches the plan it picks per thread, keyed without the benchmark flag, and the
  // baseline runs first: a per-backend flag measured the baseline's plans again.
  static_assert(!HasCudnnBenchmarkOption<ScriptModuleBackend>);
  const Model model{make_conv_net(), torch::kCPU};
  for (const auto& device : {c10::Device(c10::kCPU), c10::Device(c10::kCUDA, 0)}) {
    for (const auto& candidate : default_candidates(device)) {
      CHECK_THAT(candidate.key(), !Catch::Contains("cudnn"));
    }
  }
}

TEST_CASE("a CUDA model is refused by a build without CUDA timing, not timed on the "
          "host clock",
          "[backends]") {
  const c10::Device cuda(c10::kCUDA, 0);
  CHECK_THROWS_AS(aitune::lt::detail::require_device_clock(cuda, false), ConfigError);
  CHECK_THROWS_WITH(aitune::lt::detail::require_device_clock(cuda, false),
                    Catch::Contains("AITUNE_WITH_CUDA=0") && Catch::Contains("aitune::torch"));
  CHECK_NOTHROW(aitune::lt::detail::require_device_clock(cuda, true));
  CHECK_NOTHROW(aitune::lt::detail::require_device_clock(c10::Device(c10::kCPU), false));
}

TEST_CASE("float32 on CUDA with TF32 allowed is checked at a TF32 tolerance", "[backends]") {
  const c10::Device cuda(c10::kCUDA, 0);
  const Tolerance tf32 = Tolerance::for_float32_on(cuda, true);
  CHECK(tf32.rtol == Tolerance::for_dtype(torch::kHalf).rtol);
  CHECK(tf32.scale_atol == Tolerance::for_dtype(torch::kHalf).scale_atol);
  CHECK(Tolerance::for_float32_on(cuda, false).rtol == 1e-4);
  CHECK(Tolerance::for_float32_on(c10::Device(c10::kCPU), true).rtol == 1e-4);
  // A frozen float32 backend built on the CPU keeps the float32 tolerance.
  TorchScriptFrozen frozen;
  frozen.build(Model{make_conv_net(), torch::kCPU}, one_image());
  CHECK(frozen.output_policy().tolerance.rtol == 1e-4);
}

TEST_CASE("a failed CUDA-graph capture releases its pool once, whichever side frees it",
          "[backends]") {
  // A fake allocator: the pool's use count, and the steps in the order they ran.
  struct Fake {
    int pool_use_count = 1;
    bool destructor_releases_pool = false;  // LibTorch with the mid-2026 fix
    bool pool_known = true;
    std::vector<std::string> steps{};
    void release() {
      if (pool_use_count <= 0) throw std::logic_error("uc >= 0 INTERNAL ASSERT FAILED");
      if (--pool_use_count == 0) pool_known = false;
    }
    void undo(bool throwing_capture_end = false) {
      aitune::lt::detail::undo_failed_capture(
          [&] {
            steps.emplace_back("end capture");
            if (throwing_capture_end) throw std::runtime_error("Invalid capture");
          },
          [&] { steps.emplace_back("stop routing"); },
          [&] {
            steps.emplace_back("destroy graph");
            if (destructor_releases_pool) release();
          },
          [&] {
            if (!pool_known) throw std::runtime_error("unknown pool");
            return pool_use_count > 0;
          },
          [&] {
            steps.emplace_back("release pool");
            release();
          });
    }
  };
  SECTION("the graph leaves the pool to us (2.11 as released)") {
    Fake fake;
    fake.undo(true);
    CHECK(fake.steps ==
          std::vector<std::string>{"end capture", "stop routing", "destroy graph", "release pool"});
    CHECK(fake.pool_use_count == 0);
  }
  SECTION("the graph's destructor releases the pool itself: we do not release it again") {
    Fake fake;
    fake.destructor_releases_pool = true;
    fake.undo();
    CHECK(fake.steps == std::vector<std::string>{"end capture", "stop routing", "destroy graph"});
    CHECK(fake.pool_use_count == 0);
  }
}

TEST_CASE("LibTorch strategies time with DeviceTimer: the host clock on the CPU", "[backends]") {
  static_assert(std::is_same_v<default_timer_t<AnyBackend>, DeviceTimer>);
  static_assert(std::is_same_v<default_timer_t<TorchScriptFrozen>, DeviceTimer>);
  DeviceTimer timer;
  timer.prepare(Model{make_conv_net(), torch::kCPU});
  CHECK_FALSE(timer.uses_cuda_events());
  const Timing timing = timer.measure([] {});
  CHECK_FALSE(timing.device_ms.has_value());
  // Without CUDA there are no CUDA-graph candidates, and the CPU list never has them.
  for (const auto& candidate : default_candidates(torch::kCPU)) {
    CHECK_THAT(candidate.describe(), !Catch::StartsWith("CudaGraph"));
  }
}

TEST_CASE("The native runtime runs where LibTorch has it (2.9 to 2.11) and says so elsewhere",
          "[exported]") {
  const int version = TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR;
  CHECK(NativeRuntime::available() == (version >= 209 && version < 212));
  NativeRuntime backend;
  if (NativeRuntime::available()) {
    // It runs archives only: a TorchScript model is refused with the reason.
    CHECK_THROWS_WITH(backend.build(Model{make_conv_net(), torch::kCPU}, one_image()),
                      Catch::Contains("this model is TorchScript"));
    return;
  }
  Model model;
  model.archive = Pt2Archive{"model.pt2", {"model"}, {}};
  CHECK_THROWS_WITH(backend.build(model, one_image()),
                    Catch::Contains("is in LibTorch 2.9 to 2.11 only; this build has LibTorch " +
                                    lt::libtorch_version()));
  // Without it an archive's baseline is its first AOTInductor model (where LibTorch runs them:
  // 2.6 and newer); with none, the native runtime still, whose build then says why.
  model.archive->aoti_models = {AotiModelInfo{"aoti_default"}, AotiModelInfo{"aoti_freezing"}};
  const auto candidates = default_candidates(model);
  if (AOTInductor::available()) {
    CHECK(make_baseline(model).describe() == "AOTInductor(model.pt2:aoti_default)");
    REQUIRE(candidates.size() == 1);
    CHECK(candidates[0].describe() == "AOTInductor(model.pt2:aoti_freezing)");
  } else {
    CHECK(make_baseline(model).describe() == "NativeRuntime(model)");
    CHECK(candidates.size() == 2);
  }
  model.archive->aoti_models.clear();
  CHECK(make_baseline(model).describe() == "NativeRuntime(model)");
}

#if AITUNE_TEST_EXPORTED
// torch.export models: the archive tools/make_models.py --format pt2 writes (ctest makes it in
// the primary build; PyTorch 2.9+ only).
namespace {

std::filesystem::path exported_squeezenet() {
  const auto path = exported_dir() / "squeezenet1_1.pt2";
  if (!std::filesystem::exists(path)) {
    FAIL("missing " << path
                    << ": run tools/make_models.py --format pt2 squeezenet1_1 (ctest "
                       "does it)");
  }
  return path;
}

std::vector<Sample> squeezenet_samples(const std::string& shape = "1x3x224x224") {
  return {make_random_sample({parse_input_spec(shape)}, torch::kCPU, 1)};
}

}  // namespace

TEST_CASE("A .pt2 archive is read: its program and its AOTInductor models", "[exported]") {
  const Model model = load_model(exported_squeezenet());
  REQUIRE(model.is_exported());
  CHECK(model.archive->programs == std::vector<std::string>{"model"});
  const auto& compiled = model.archive->aoti_models;
  REQUIRE(compiled.size() >= 2);  // and aoti_bf16 where the CPU has bf16 kernels
  CHECK(compiled[0].name == "aoti_default");
  CHECK(compiled[1].name == "aoti_freezing");
  CHECK(compiled[1].precision == Precision::fp32);
  CHECK(compiled[1].inductor_configs.at("freezing") == "true");
  if (compiled.size() > 2) {
    CHECK(compiled[2].name == "aoti_bf16");
    CHECK(compiled[2].precision == Precision::bf16);
  }
  // Its baseline is the native runtime, and its default candidates the compiled models; without
  // the native runtime the first compiled model is the baseline and the others the candidates.
  const auto candidates = default_candidates(model);
  if (NativeRuntime::available()) {
    CHECK(make_baseline(model).describe() == "NativeRuntime(model)");
    REQUIRE(candidates.size() == compiled.size());
    CHECK(candidates[1].describe() == "AOTInductor(squeezenet1_1.pt2:aoti_freezing)");
  } else {
    CHECK(make_baseline(model).describe() == "AOTInductor(squeezenet1_1.pt2:aoti_default)");
    REQUIRE(candidates.size() == compiled.size() - 1);
    CHECK(candidates[0].describe() == "AOTInductor(squeezenet1_1.pt2:aoti_freezing)");
  }
  // TorchScript backends refuse it with the reason.
  TorchScriptFrozen frozen;
  CHECK_THROWS_WITH(frozen.build(model, squeezenet_samples()),
                    Catch::Contains("is a torch.export archive"));
}

TEST_CASE("A .pt2's baseline computes what TorchScript eager computes for the same weights",
          "[exported]") {
  // make_models.py traces and exports the same seeded weights. The baseline is the native
  // runtime, or without one the first AOTInductor model: either must match eager.
  const Model exported = load_model(exported_squeezenet());
  const Model traced = load_model(models_dir() / "squeezenet1_1.pt");
  const auto samples = squeezenet_samples();
  AnyBackend baseline = make_baseline(exported);
  baseline.build(exported, samples);
  const c10::IValue expected = eager_output(traced.module, samples[0]);
  const OutputCheck check =
      compare_outputs(&expected, baseline.infer(samples[0]), baseline.output_policy());
  INFO(baseline.describe() << ": " << check.reason);
  CHECK(check.passed);
}

TEST_CASE("A .pt2 model tunes: its baseline, AOTInductor candidates checked and timed",
          "[exported]") {
  const Model model = load_model(exported_squeezenet());
  const auto samples = squeezenet_samples();
  // Without performance validation the best candidate wins, so the tuned module is compiled.
  const TunedModule tuned =
      tune(model, samples, {.config = quick_config().enable_performance_validation(false)});
  const TuneReport& report = tuned.report();
  REQUIRE(report.baseline);
  CHECK(report.baseline->backend == make_baseline(model).describe());
  CHECK(report.baseline->status == CandidateStatus::ok);
  CHECK(report.candidates.size() == default_candidates(model).size());
  // Every variant passes the value check: each computes what the baseline does (a packaging
  // mix-up that put one variant's code under another's name would fail here).
  for (const auto& candidate : report.candidates) {
    INFO(candidate.backend << ": " << candidate.reason);
    CHECK(candidate.status == CandidateStatus::ok);
    CHECK(candidate.latency.has_value());
  }
  // The tuned module answers as the baseline does, and refuses another shape with an
  // aitune::Error (a compiled model would read out of bounds), never a crash.
  AnyBackend baseline = make_baseline(model);
  baseline.build(model, samples);
  const c10::IValue expected = baseline.infer(samples[0]);
  CHECK(output_checker<AnyBackend>::check(tuned.backend(), &expected, tuned.forward(samples[0]))
            .passed);
  REQUIRE_FALSE(tuned.baseline_selected());
  CHECK_THROWS_AS(tuned.forward(squeezenet_samples("1x3x112x112")[0]), Error);
}

TEST_CASE("A channels-last sample runs on an AOTInductor model, as on the baseline", "[exported]") {
  // Before: every AOTInductor candidate failed (strides it was not compiled for), saying nothing
  // of strides. The values are the same; only the memory layout differs.
  const Model model = load_model(exported_squeezenet());
  std::vector<Sample> samples = squeezenet_samples();
  samples[0][0] = samples[0][0].toTensor().contiguous(at::MemoryFormat::ChannelsLast);
  REQUIRE_FALSE(samples[0][0].toTensor().is_contiguous());
  const AotiModelInfo& compiled = model.archive->aoti_models.at(0);
  const TunedModule tuned = tune(
      model, samples,
      {.candidates = std::vector<AnyBackend>{AOTInductor::from_archive(*model.archive, compiled)},
       .config = quick_config().enable_performance_validation(false)});
  const CandidateReport& row = tuned.report().candidates.at(0);
  INFO(row.reason);
  CHECK(row.status == CandidateStatus::ok);
  CHECK(samples[0][0].toTensor().is_contiguous(at::MemoryFormat::ChannelsLast));  // untouched
}

TEST_CASE("AOTInductor models never run on inputs they were not compiled for", "[exported]") {
  const Model model = load_model(exported_squeezenet());
  const auto& compiled = model.archive->aoti_models.front();
  SECTION("another shape at build: the package's own input check fails the build") {
    AOTInductor backend = AOTInductor::from_archive(*model.archive, compiled);
    CHECK_THROWS_WITH(backend.build(model, squeezenet_samples("1x3x112x112")),
                      Catch::Contains("running the first sample failed"));
    CHECK(backend.state() == BackendState::failed);
  }
  SECTION("another shape after build: refused before it reaches the package") {
    AOTInductor backend = AOTInductor::from_archive(*model.archive, compiled);
    backend.build(model, squeezenet_samples());
    CHECK_THROWS_WITH(backend.infer(squeezenet_samples("1x3x112x112")[0]),
                      Catch::Contains("fixed input shapes fp32[1, 3, 224, 224]"));
    CHECK(backend.infer(squeezenet_samples()[0]).isTensor());  // and it still works
  }
}

TEST_CASE("An archive whose AOTInductor model names are prefixes of each other is refused",
          "[exported]") {
  // LibTorch 2.11's loader finds a model's files by prefix: "aoti" would run "aoti_bf16".
  Model model = load_model(exported_squeezenet());
  model.archive->aoti_models = {AotiModelInfo{"aoti"}, AotiModelInfo{"aoti_bf16"}};
  AOTInductor backend(model.archive->path, "aoti");
  CHECK_THROWS_WITH(backend.build(model, squeezenet_samples()),
                    Catch::Contains("would run the code of 'aoti_bf16'"));
}

TEST_CASE("an AOTInductor package compiled for another device fails its build", "[exported]") {
  const Model model = load_model(exported_dir() / "squeezenet1_1.cuda-marked.pt2");
  const auto samples = squeezenet_samples();
  MinLatencyStrategy<AnyBackend> strategy(default_candidates(model), quick_config());
  const auto compiled_for_cuda = Catch::Contains("was compiled for cuda, but the model is tuned "
                                                 "on cpu");
  if (!NativeRuntime::available()) {
    // The baseline is one of those compilations: it fails as they do, and nothing is left.
    try {
      (void)strategy.tune(model, samples, "marked");
      FAIL("a tuning whose baseline and candidates all fail to build returned");
    } catch (const NoCorrectBackendError& error) {
      const TuneReport* report = error.report();
      REQUIRE(report != nullptr);
      REQUIRE(report->baseline);
      CHECK(report->baseline->status == CandidateStatus::build_failed);
      CHECK_THAT(report->baseline->reason, compiled_for_cuda);
      CHECK(report->candidates.size() >= 1);
    }
    return;
  }
  const auto result = strategy.tune(model, samples, "marked");
  REQUIRE(result.report.candidates.size() >= 2);
  for (const auto& candidate : result.report.candidates) {
    CHECK(candidate.status == CandidateStatus::build_failed);
    CHECK_THAT(candidate.reason, compiled_for_cuda);
  }
  CHECK(result.report.baseline_selected);
}
#endif

namespace {

/// What a FaultyBackend gets wrong. It runs the model as TorchEager does, then misbehaves.
enum class Fault {
  throw_at_build,
  throw_at_check,
  throw_mid_measurement,
  out_of_memory,
  nan_output,
  inf_output,
  wrong_shape,
  wrong_dtype,
  wrong_structure,
  slow,
  deactivate_fails,
};

class FaultyBackend : public BackendLifecycle<FaultyBackend> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  FaultyBackend(std::string name, Fault fault) : name_(std::move(name)), fault_(fault) {}
  FaultyBackend(const FaultyBackend& other) : FaultyBackend(other.name_, other.fault_) {}

  [[nodiscard]] std::string describe() const { return name_; }
  [[nodiscard]] std::string key() const { return "faulty:" + name_; }

 private:
  friend class BackendLifecycle<FaultyBackend>;

  void do_build(const Model& model, std::span<const Sample> samples) {
    if (fault_ == Fault::throw_at_build) throw std::runtime_error("scripted fault at build");
    inner_.build(model, samples);
  }

  c10::IValue do_infer(const Sample& sample) {
    ++calls_;  // call 1 is the correctness check (one sample)
    const bool measuring = calls_ > 1;
    at::Tensor out = inner_.infer(sample).toTensor();
    switch (fault_) {
      case Fault::throw_at_check:
        if (!measuring) throw std::runtime_error("scripted fault at the check");
        break;
      case Fault::throw_mid_measurement:
        if (calls_ == 20) throw std::runtime_error("scripted fault in the measurement");
        break;
      case Fault::out_of_memory:
        // As LibTorch's allocators report it; a real CPU OOM would kill the process.
        TORCH_CHECK_WITH(OutOfMemoryError, calls_ != 20,
                         "out of memory: tried to allocate 8.00 GiB (scripted)");
        break;
      case Fault::nan_output: return out.clone().fill_(std::nan(""));
      case Fault::inf_output: return out * std::numeric_limits<float>::infinity();
      case Fault::wrong_shape: return out.unsqueeze(0);
      case Fault::wrong_dtype: return out.to(torch::kDouble);
      case Fault::wrong_structure: return c10::ivalue::Tuple::create({out, out});
      case Fault::slow:  // a call that overruns the candidate's budget, but returns
        if (!measuring) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        break;
      case Fault::deactivate_fails:  // slower, so it loses and is released
        if (measuring) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        break;
      case Fault::throw_at_build: break;
    }
    return out;
  }

  void do_activate() { inner_.activate(); }
  void do_deactivate() {
    if (inner_.is_active()) inner_.deactivate();
    if (fault_ == Fault::deactivate_fails) throw std::runtime_error("scripted fault at deactivate");
  }

  std::string name_;
  Fault fault_;
  TorchEager inner_;
  std::size_t calls_ = 0;
};

}  // namespace

TEST_CASE("Failure matrix: every kind of faulty candidate gets a precise reason, the tuning "
          "completes and the good candidate is unaffected",
          "[strategy][failures]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image();
  struct Expected {
    std::string name;
    Fault fault;
    CandidateStatus status;
    std::string reason;  // a part of the reason
  };
  const std::vector<Expected> faults{
      {"Build", Fault::throw_at_build, CandidateStatus::build_failed, "scripted fault at build"},
      {"Check", Fault::throw_at_check, CandidateStatus::incorrect,
       "correctness check: scripted fault at the check"},
      {"Measure", Fault::throw_mid_measurement, CandidateStatus::measure_failed,
       "scripted fault in the measurement"},
      {"OOM", Fault::out_of_memory, CandidateStatus::measure_failed,
       "out of memory: tried to allocate 8.00 GiB (scripted)"},
      {"NaN", Fault::nan_output, CandidateStatus::incorrect, "NaN where the baseline has numbers"},
      {"Inf", Fault::inf_output, CandidateStatus::incorrect, "infinite values differ"},
      {"Shape", Fault::wrong_shape, CandidateStatus::incorrect, "differs from the baseline's"},
      {"Dtype", Fault::wrong_dtype, CandidateStatus::incorrect,
       "dtype float64 differs from the baseline's float32"},
      {"Structure", Fault::wrong_structure, CandidateStatus::incorrect, "output: "},
      {"Slow", Fault::slow, CandidateStatus::measure_failed,
       "over its time budget: building and checking it took"},
  };
  std::vector<AnyBackend> candidates{AnyBackend(TorchScriptFrozen())};
  for (const Expected& expected : faults)
    candidates.emplace_back(FaultyBackend(expected.name, expected.fault));
  candidates.emplace_back(FaultyBackend("Deactivate", Fault::deactivate_fails));

  SinkRecorder sink;
  StrategyConfig config = quick_config(&sink);
  config.set_profiling(ProfilingConfig{}
                           .set_race(RaceConfig{}.set_looks(4, 1.5, 3).set_max_rounds(40))
                           // Room for 20 calls of every candidate on a busy machine (at
                           // 250 ms the good candidate ran out under a parallel build).
                           .set_candidate_time_budget_ms(1000.0));
  const TunedModule tuned =
      tune(model, samples, {.candidates = std::move(candidates), .config = config});
  const TuneReport& report = tuned.report();

  REQUIRE(report.baseline.has_value());
  CHECK(report.baseline->status == CandidateStatus::ok);
  const CandidateReport& good = entry(report, "TorchScriptFrozen()");
  CHECK(good.status == CandidateStatus::ok);
  CHECK(good.latency.has_value());
  CHECK(good.reason.empty());
  for (const Expected& expected : faults) {
    INFO(expected.name << ": " << entry(report, expected.name).reason);
    const CandidateReport& row = entry(report, expected.name);
    CHECK(row.status == expected.status);
    CHECK_THAT(row.reason, Catch::Contains(expected.reason));
    CHECK(row.reason.find('\n') == std::string::npos);  // one line
    CHECK_FALSE(row.selected);
  }
  // The candidate whose deactivate() throws loses (or overruns its budget when the machine is
  // busy); released, its failure to deactivate is a warning.
  CHECK_FALSE(entry(report, "Deactivate").selected);
  CHECK(sink.contains("Deactivate: deactivate failed: scripted fault at deactivate"));
  CHECK((report.selected == "TorchScriptFrozen()" || report.baseline_selected));
  const c10::IValue expected = eager_output(model.module, samples[0]);
  CHECK(compare_outputs(&expected, tuned.forward(samples[0])).passed);
}

TEST_CASE("Two tunings of one model at once are independent and both correct",
          "[strategy][concurrency]") {
  const Model model{make_conv_net(), torch::kCPU};
  const auto samples = one_image();
  const c10::IValue expected = eager_output(model.module, samples[0]);
  std::vector<std::optional<TunedModule>> tuned(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < tuned.size(); ++t) {
    threads.emplace_back([&, t] {
      try {
        tuned[t].emplace(tune(
            model, samples,
            {.candidates = std::vector<AnyBackend>{TorchScriptFrozen(), TorchScriptOptimized()},
             .config = quick_config()}));
      } catch (const std::exception& error) {
        errors[t] = error.what();
      }
    });
  }
  for (auto& thread : threads)
    thread.join();
  for (std::size_t t = 0; t < tuned.size(); ++t) {
    INFO("tuning " << t << ": " << errors[t]);
    REQUIRE(tuned[t].has_value());
    CHECK(tuned[t]->report().candidates.size() == 2);
    CHECK(compare_outputs(&expected, tuned[t]->forward(samples[0])).passed);
  }
}

namespace {

/// TorchEager that keeps the LibTorch thread count of each call (shared by copies).
class ThreadProbe : public BackendLifecycle<ThreadProbe> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  explicit ThreadProbe(std::string name) : name_(std::move(name)) {}
  [[nodiscard]] std::string describe() const { return name_ + "()"; }
  [[nodiscard]] std::string key() const { return "probe:" + name_; }
  [[nodiscard]] const std::vector<int>& counts() const { return *counts_; }

 private:
  friend class BackendLifecycle<ThreadProbe>;
  void do_build(const Model& model, std::span<const Sample> samples) {
    inner_.build(model, samples);
  }
  c10::IValue do_infer(const Sample& sample) {
    counts_->push_back(at::get_num_threads());
    return inner_.infer(sample);
  }

  std::string name_;
  AnyBackend inner_ = TorchEager();
  std::shared_ptr<std::vector<int>> counts_ = std::make_shared<std::vector<int>>();
};

/// Sets LibTorch's thread count for a test and puts the one it found back.
class ProcessThreads {
 public:
  explicit ProcessThreads(int threads) { at::set_num_threads(threads); }
  ProcessThreads(const ProcessThreads&) = delete;
  ProcessThreads& operator=(const ProcessThreads&) = delete;
  ~ProcessThreads() { at::set_num_threads(found_); }

 private:
  int found_ = at::get_num_threads();
};

}  // namespace

TEST_CASE("TorchThreads runs its calls at its own LibTorch thread count and puts the process's "
          "back after them",
          "[backends][threads]") {
  const ProcessThreads process(2);
  CHECK_THROWS_AS(TorchThreads(TorchEager(), 0), ConfigError);
  const ThreadProbe probe("Probe");
  TorchThreads pinned(probe, 1);
  CHECK(pinned.describe() == "TorchThreads(Probe(), threads=1)");
  CHECK(pinned.key() == "torch_threads:1:probe:Probe");
  const Model model{make_conv_net()};
  const std::vector<Sample> samples = one_image();
  pinned.build(model, samples);
  (void)pinned.infer(samples[0]);
  (void)pinned.infer(samples[0]);
  CHECK(at::get_num_threads() == 1);  // kept for the run of calls: a set costs
  pinned.after_calls();
  CHECK(at::get_num_threads() == 2);
  AnyBackend any = TorchThreads(probe, 1);  // through AnyBackend's forwarding
  any.build(model, samples);
  (void)any.infer(samples[0]);
  any.after_calls();
  CHECK(at::get_num_threads() == 2);
  CHECK(probe.counts() == std::vector<int>{1, 1, 1});
}

TEST_CASE("A tuning over other LibTorch thread counts runs every other backend at the process's "
          "count; the module serves the inner backend unless told to apply the count",
          "[backends][threads][tunes]") {
  const ProcessThreads process(2);
  const Model model{make_conv_net()};
  const std::vector<Sample> samples = one_image();

  const std::vector<AnyBackend> listed = with_torch_threads(
      model, {TorchScriptFrozen(), OpenVino(std::filesystem::path("absent.xml")), TorchEager()},
      {1, 2, 1});
  std::vector<std::string> names;
  for (const AnyBackend& candidate : listed)
    names.push_back(candidate.describe());
  // The process's own count (2) and a repeat are skipped; the runtime session has its own
  // threads, and the TorchEager candidate is the baseline's way, listed once.
  CHECK(names == std::vector<std::string>{"TorchScriptFrozen()", listed[1].describe(),
                                          "TorchEager()", "TorchThreads(TorchEager(), threads=1)",
                                          "TorchThreads(TorchScriptFrozen(), threads=1)"});
  CHECK_THROWS_AS(with_torch_threads(model, {}, {0}), ConfigError);

  const ThreadProbe plain("Plain");
  const ThreadProbe pinned("Pinned");
  const TunedModule tuned =
      tune(model, samples,
           {.candidates = std::vector<AnyBackend>{plain, TorchThreads(pinned, 1)},
            .config = quick_config().enable_performance_validation(false)});
  CHECK(at::get_num_threads() == 2);
  REQUIRE(plain.counts().size() > 4);
  REQUIRE(pinned.counts().size() > 4);
  CHECK(std::all_of(plain.counts().begin(), plain.counts().end(), [](int n) { return n == 2; }));
  CHECK(std::all_of(pinned.counts().begin(), pinned.counts().end(), [](int n) { return n == 1; }));

  // lt::tune hands TuneOptions::torch_threads to the module (the only candidate wins).
  for (const TunedThreads use : {TunedThreads::recommend, TunedThreads::apply}) {
    const TunedModule only =
        tune(model, samples,
             {.candidates = std::vector<AnyBackend>{TorchThreads(ThreadProbe("Only"), 1)},
              .config = quick_config().enable_performance_validation(false),
              .torch_threads = use});
    CHECK(only.backend().describe() ==
          (use == TunedThreads::apply ? "TorchThreads(Only(), threads=1)" : "Only()"));
    CHECK(at::get_num_threads() == 2);
  }

  // The module a TorchThreads winner makes: recommended, or applied when asked.
  const auto winner = [&] {
    AnyBackend backend = TorchThreads(ThreadProbe("Served"), 1);
    backend.build(model, samples);
    TuneReport report;
    report.module = "net";
    report.decision = "selected";
    return TuneResult<AnyBackend>{std::move(backend), report};
  };
  const TunedModule recommended(winner(), samples);
  CHECK(recommended.backend().describe() == "Served()");
  CHECK_THAT(recommended.report().decision,
             Catch::Contains("measured at 1 LibTorch thread") &&
                 Catch::Contains("at::set_num_threads(1)") &&
                 Catch::Contains("the serving threads' count (2 here)"));
  (void)recommended.forward(samples[0]);
  CHECK(recommended.backend().target<ThreadProbe>()->counts() == std::vector<int>{2});
  const TunedModule applied(winner(), samples, std::nullopt, TunedThreads::apply);
  CHECK(applied.backend().describe() == "TorchThreads(Served(), threads=1)");
  CHECK_THAT(applied.report().decision, Catch::Contains("TunedThreads::apply"));
  (void)applied.forward(samples[0]);
  CHECK(at::get_num_threads() == 1);  // the serving thread's count is now the winner's
}
