// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Models as people export and serve them: outputs rebuilt into their structure (dicts, nested
// tuples, None), Hugging Face models, inputs written in place, calls from several threads, and
// one input contract whichever backend serves. The .pt2 archives come from
// tests/support/make_exported_models.py (a ctest fixture), with eager PyTorch's outputs beside
// each.
#include "torch/exported_models.hpp"
#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <ATen/Parallel.h>
#include <torch/library.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace aitune;
using namespace aitune::lt;

// ---- outputs keep their structure ---------------------------------------------------------

TEST_CASE("An output structure is read from its TreeSpec and flat outputs are rebuilt into it",
          "[structure]") {
  const std::string spec =
      R"([1, {"type": "builtins.dict", "context": "[\"y\", \"z\", 3]", "children_spec": [)"
      R"({"type": null, "context": null, "children_spec": []},)"
      R"({"type": "builtins.tuple", "context": "null", "children_spec": [)"
      R"({"type": null, "context": null, "children_spec": []},)"
      R"({"type": null, "context": null, "children_spec": []}]},)"
      R"({"type": "builtins.list", "context": "null", "children_spec": [)"
      R"({"type": null, "context": null, "children_spec": []}]}]}])";
  auto parsed = parse_output_structure(spec);
  REQUIRE(std::holds_alternative<OutputStructure>(parsed));
  const auto& structure = std::get<OutputStructure>(parsed);
  CHECK(structure.leaves() == 4);
  const std::vector<at::Tensor> flat{torch::ones({2}), torch::zeros({1}), at::Tensor(),
                                     torch::full({3}, 2.0)};
  const c10::IValue rebuilt = rebuild_outputs(structure, flat);
  REQUIRE(rebuilt.isGenericDict());
  const auto dict = rebuilt.toGenericDict();
  std::vector<std::string> keys;
  for (const auto& entry : dict)
    keys.push_back(c10::str(entry.key()));
  CHECK(keys == std::vector<std::string>{"y", "z", "3"});
  CHECK(dict.at(c10::IValue(std::int64_t{3})).isList());
  const auto& z = dict.at(c10::IValue("z")).toTupleRef().elements();
  CHECK(z[0].toTensor().equal(torch::zeros({1})));
  CHECK(z[1].isNone());  // an undefined flat output is a None leaf
  CHECK_THROWS_WITH(rebuild_outputs(structure, {torch::ones({2})}),
                    Catch::Contains("returned 1 outputs, its output structure has 4"));

  // An OrderedDict is a dict; an older PyTorch's None node takes no flat output.
  auto older = parse_output_structure(
      R"([1, {"type": "collections.OrderedDict", "context": "[\"a\", \"b\"]", "children_spec": [)"
      R"({"type": "builtins.NoneType", "context": null, "children_spec": []},)"
      R"({"type": null, "context": null, "children_spec": []}]}])");
  REQUIRE(std::holds_alternative<OutputStructure>(older));
  CHECK(std::get<OutputStructure>(older).leaves() == 1);
  const c10::IValue ordered = rebuild_outputs(std::get<OutputStructure>(older), {torch::ones({1})});
  CHECK(ordered.toGenericDict().at("a").isNone());
  CHECK(ordered.toGenericDict().at("b").isTensor());

  // Types the native runtime cannot rebuild, damaged text and hostile nesting are refused with
  // the reason, never a crash.
  const auto why = [](const std::string& text) {
    auto result = parse_output_structure(text);
    return std::holds_alternative<std::string>(result) ? std::get<std::string>(result) : "";
  };
  CHECK_THAT(why(R"([1, {"type": "collections.namedtuple", "context": "\"x.Y\"", )"
                 R"("children_spec": []}])"),
             Catch::Contains("holds a collections.namedtuple"));
  CHECK_THAT(why("not json"), Catch::Contains("not valid JSON"));
  CHECK_THAT(why(R"([2, {}])"), Catch::Contains("protocol is 2"));
  CHECK_THAT(why(R"([1, {"type": "builtins.dict", "context": "[\"a\"]", "children_spec": []}])"),
             Catch::Contains("1 keys for 0 values"));
  std::string deep = R"({"type": null, "context": null, "children_spec": []})";
  for (int i = 0; i < 100; ++i) {
    deep = R"({"type": "builtins.list", "context": "null", "children_spec": [)" + deep + "]}";
  }
  CHECK_THAT(why("[1, " + deep + "]"), Catch::Contains("deeper than 64 levels"));
}

TEST_CASE("A dict keeps its keys in order: another order fails the check, and a candidate whose "
          "structure is unknown says so",
          "[structure][compare]") {
  c10::impl::GenericDict expected_dict(c10::StringType::get(), c10::TensorType::get());
  expected_dict.insert("logits", torch::ones({2}));
  expected_dict.insert("hidden", torch::zeros({2}));
  c10::impl::GenericDict swapped(c10::StringType::get(), c10::TensorType::get());
  swapped.insert("hidden", torch::zeros({2}));
  swapped.insert("logits", torch::ones({2}));
  const c10::IValue expected = expected_dict;
  CHECK_THAT(compare_outputs(&expected, c10::IValue(swapped)).reason,
             Catch::Contains("the keys come in another order: the baseline has 'logits' at "
                             "position 0, the candidate 'hidden'"));

  OutputPolicy flat;
  flat.unknown_structure = "its package records no output structure";
  const c10::IValue tuple =
      c10::ivalue::Tuple::create({c10::IValue(torch::ones({2})), c10::IValue(torch::zeros({2}))});
  CHECK_THAT(compare_outputs(&expected, tuple, flat).reason,
             Catch::Contains("the baseline returned a dict here") &&
                 Catch::Contains("the structure of this candidate's outputs is unknown: its "
                                 "package records no output structure, so they come back flat"));
}

// ---- inputs written in place ---------------------------------------------------------------

TEST_CASE("A model that writes to a tensor inside a list input gets copies of it too", "[inputs]") {
  torch::jit::Module module("WritesIntoList");
  module.define(R"(
    def forward(self, xs: List[Tensor]):
        xs[0].add_(1.0)
        return xs[0] * 2.0
  )");
  const Model model{module, torch::kCPU};
  const c10::List<at::Tensor> list({torch::zeros({2})});
  const std::vector<Sample> samples{Sample{c10::IValue(list)}};
  TorchEager eager;
  eager.build(model, samples);
  for (int call = 0; call < 3; ++call) {  // each call sees the caller's zeros
    CHECK(eager.infer(samples[0]).toTensor().equal(torch::full({2}, 2.0)));
  }
  CHECK(list.get(0).equal(torch::zeros({2})));
}

#if AITUNE_TEST_EXPORTED
// The exported models (PyTorch 2.9+, where the native runtime is).
using namespace aitune::testing;
namespace {

// ---- aitune_test::rendezvous: holds a call until a second one arrives ----------------------
//
// The op the `rendezvous` model calls between two layers. Armed, each call waits (up to a few
// seconds) until two calls are inside it at once: two overlapping forward() calls meet there and
// both go on at once; calls that queue anywhere (a mutex, a single runner) do not, and the first
// one times out. Disarmed (during tuning), it only copies its input.
struct Rendezvous {
  std::mutex mutex;
  std::condition_variable arrived_changed;
  bool armed = false;
  int arrived = 0;
  int timeouts = 0;
};

Rendezvous& rendezvous_state() {
  static Rendezvous state;
  return state;
}

at::Tensor rendezvous(const at::Tensor& x) {
  Rendezvous& state = rendezvous_state();
  std::unique_lock lock(state.mutex);
  if (state.armed) {
    ++state.arrived;
    state.arrived_changed.notify_all();
    if (!state.arrived_changed.wait_for(lock, std::chrono::seconds(5),
                                        [&] { return state.arrived >= 2; })) {
      ++state.timeouts;
    }
  }
  return x.clone();
}

/// Calls `call` from two threads at once; returns how many of them waited in vain for the other
/// inside the model (0: they overlapped; 1: they queued).
template <class Call>
int calls_that_waited_alone(Call&& call) {
  Rendezvous& state = rendezvous_state();
  {
    const std::lock_guard lock(state.mutex);
    state.armed = true;
    state.arrived = 0;
    state.timeouts = 0;
  }
  std::thread first(call);
  std::thread second(call);
  first.join();
  second.join();
  const std::lock_guard lock(state.mutex);
  state.armed = false;
  return state.timeouts;
}

// ---- the exported models ------------------------------------------------------------------

/// A tuning that serves the baseline: no candidate.
TunedModule tuned_to_baseline(const Exported& model) {
  TunedModule tuned = tune(model.model, model.samples,
                           {.candidates = std::vector<AnyBackend>{}, .config = quick_config()});
  REQUIRE(tuned.baseline_selected());
  return tuned;
}

/// A tuning that serves the archive's AOTInductor model: a candidate (performance validation
/// off), or where LibTorch has no native runtime and the archive one compilation, the baseline,
/// which is that compilation.
TunedModule tuned_to_aoti(const Exported& model) {
  // The archive's AOTInductor candidates only: the other runtimes have tests of their own
  // (test_runtimes.cpp), and builds without them.
  std::vector<AnyBackend> compiled = default_candidates(model.model);
  std::erase_if(compiled, [](const AnyBackend& candidate) {
    return !candidate.describe().starts_with("AOTInductor(");
  });
  if (compiled.empty()) {
    TunedModule tuned = tuned_to_baseline(model);
    CHECK_THAT(tuned.backend().describe(), Catch::StartsWith("AOTInductor("));
    return tuned;
  }
  TunedModule tuned = tune(model.model, model.samples,
                           {.candidates = std::move(compiled),
                            .config = quick_config().enable_performance_validation(false)});
  const auto& candidates = tuned.report().candidates;
  for (const auto& candidate : candidates) {
    INFO(candidate.backend << ": " << candidate.reason);
    CHECK(candidate.status == CandidateStatus::ok);
  }
  REQUIRE_FALSE(tuned.baseline_selected());
  return tuned;
}

Sample copy_of(const Sample& sample) {
  Sample copy;
  for (const auto& value : sample)
    copy.push_back(value.isTensor() ? c10::IValue(value.toTensor().clone()) : value);
  return copy;
}

bool same_values(const Sample& a, const Sample& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].isTensor() && !a[i].toTensor().equal(b[i].toTensor())) return false;
  }
  return a.size() == b.size();
}

}  // namespace

// The op the rendezvous model calls (its Python twin is in make_exported_models.py).
TORCH_LIBRARY(aitune_test, library) {
  library.def("rendezvous(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(aitune_test, CPU, library) {
  library.impl("rendezvous", &rendezvous);
}

// ---- outputs keep their structure, through AOTInductor -----------------------------------

TEST_CASE("A dict-output model's AOTInductor candidate returns the baseline's structure and "
          "values",
          "[exported][real_model]") {
  const Exported model = exported("dict_outputs");
  const TunedModule tuned = tuned_to_aoti(model);
  const c10::IValue out = tuned.forward(model.samples[0]);
  REQUIRE(out.isGenericDict());
  CHECK(keys_of(out) == std::vector<std::string>{"y", "z", "w"});
  CHECK(out.toGenericDict().at("z").toTupleRef().elements()[1].isNone());
  CHECK(out.toGenericDict().at("w").isList());
  check_equal_to_eager(out, model, tuned.backend().output_policy());
  // The baseline returns the same structure.
  check_equal_to_eager(tuned_to_baseline(model).forward(model.samples[0]), model);
}

TEST_CASE("Stored outputs of a dict-output model round-trip through the tuning cache's codec "
          "with their keys in order",
          "[cache][outputs][structure]") {
  const Exported model = exported("dict_outputs");
  const std::vector<c10::IValue> outputs{model.eager};
  const std::vector<c10::IValue> decoded = decode_outputs(encode_outputs(outputs));
  REQUIRE(decoded.size() == 1);
  CHECK(keys_of(decoded[0]) == std::vector<std::string>{"y", "z", "w"});
  const OutputCheck check = compare_outputs(&model.eager, decoded[0], OutputPolicy{{0.0, 0.0}});
  INFO(check.reason);
  CHECK(check.passed);
}

// ---- Hugging Face models ------------------------------------------------------------------

TEST_CASE("Hugging Face BertModel and GPT2Model, exported by the tool, tune with their "
          "AOTInductor candidate and answer as eager PyTorch does",
          "[exported][real_model][hf]") {
  for (const std::string name : {"bert", "gpt2"}) {
    INFO(name);
    const Exported model = exported(name);
    // The tool records the inputs by name, in the program's order.
    CHECK(model.model.archive->input_names ==
          std::vector<std::string>{"input_ids", "attention_mask"});
    // The program itself takes them under those names (the tool's wrapper is what it traced).
    CHECK(lt::detail::read_program_input_names(*model.model.archive) ==
          model.model.archive->input_names);
    const TunedModule tuned = tuned_to_aoti(model);
    const c10::IValue out = tuned.forward(model.samples[0]);
    REQUIRE(out.isGenericDict());
    CHECK(keys_of(out).front() == "last_hidden_state");
    check_equal_to_eager(out, model, tuned.backend().output_policy());
  }
}

TEST_CASE("A .pt2 saved by plain torch.export whose outputs are a ModelOutput gets an error that "
          "says how to export it again",
          "[exported][hf]") {
  const auto path = exported_dir() / "bert_plain.pt2";
  REQUIRE(std::filesystem::exists(path));
  const Model model = load_model(path);
  NativeRuntime native;
  const Sample sample{torch::randint(0, 1000, {1, 16}), torch::ones({1, 16}, torch::kLong)};
  if (!NativeRuntime::available()) {  // the error is the native runtime's
    CHECK_THROWS_WITH(native.build(model, std::vector<Sample>{sample}),
                      Catch::Contains("is in LibTorch 2.9 to 2.11 only"));
    return;
  }
  CHECK_THROWS_WITH(
      native.build(model, std::vector<Sample>{sample}),
      Catch::Contains("Unknown pytree node type") &&
          Catch::Contains("The program returns a transformers.modeling_outputs."
                          "BaseModelOutputWithPoolingAndCrossAttentions, a Python type") &&
          Catch::Contains("export it again with tools/export_model.py"));
}

// ---- inputs written in place --------------------------------------------------------------

TEST_CASE("Models that write to their inputs get copies: every backend matches eager and the "
          "caller's samples never change",
          "[exported][real_model][inputs]") {
  for (const std::string name : {"add_in_place", "kv_cache"}) {
    INFO(name);
    const Exported model = exported(name);
    const Sample pristine = copy_of(model.samples[0]);
    const TunedModule aoti = tuned_to_aoti(model);
    const TunedModule baseline = tuned_to_baseline(model);
    for (const TunedModule* tuned : {&aoti, &baseline}) {
      INFO(tuned->selected());
      for (int call = 0; call < 3; ++call) {  // each call sees the same inputs
        check_equal_to_eager(tuned->forward(model.samples[0]), model,
                             tuned->backend().output_policy());
      }
    }
    CHECK(same_values(model.samples[0], pristine));
  }
}

TEST_CASE("A position declared with --domain is refused outside its values, served and called "
          "directly",
          "[exported][real_model][inputs]") {
  // kv_cache writes at `pos` into a cache of 4 slots: a compiled model given 4 writes out of
  // bounds. tools/export_model.py --domain 2:0..3 records what no embedding proves.
  const Exported model = exported("kv_cache");
  const Pt2Archive& archive = *model.model.archive;
  REQUIRE(archive.index_domains.size() == 1);
  CHECK(archive.index_domains[0].min == 0);
  CHECK(archive.index_domains[0].max == 3);
  CHECK(archive.index_domains[0].source == "declared");
  Sample outside = copy_of(model.samples[0]);
  outside[2] = torch::full({1}, 4, torch::kInt64);
  const TunedModule aoti = tuned_to_aoti(model);
  CHECK_THROWS_WITH(aoti.forward(outside),
                    Catch::Contains("holds the value 4, outside 0 to 3 (the values declared for "
                                    "it at export)"));
  CHECK_THROWS_WITH(tuned_to_baseline(model).forward(outside), Catch::Contains("outside 0 to 3"));
  check_equal_to_eager(aoti.forward(model.samples[0]), model, aoti.backend().output_policy());
  AOTInductor direct = AOTInductor::from_archive(archive, archive.aoti_models.at(0));
  direct.build(model.model, model.samples);
  CHECK_THROWS_WITH(direct.infer(outside), Catch::Contains("outside 0 to 3"));
}

// ---- calls from several threads -----------------------------------------------------------

TEST_CASE("Two forward() calls on a .pt2 tuned module run at the same time, on the baseline and "
          "on an AOTInductor candidate",
          "[exported][concurrency]") {
  const Exported model = exported("rendezvous");
  // Counted, and checked on this thread: Catch's assertions are not safe from several threads.
  std::atomic<int> wrong{0};
  const auto forward_on = [&](const TunedModule& tuned) {
    return [&] {
      const c10::IValue out = tuned.forward(model.samples[0]);
      if (!compare_outputs(&model.eager, out, tuned.backend().output_policy()).passed) ++wrong;
    };
  };
  const TunedModule baseline = tuned_to_baseline(model);
  CHECK(calls_that_waited_alone(forward_on(baseline)) == 0);
  const TunedModule aoti = tuned_to_aoti(model);
  CHECK(calls_that_waited_alone(forward_on(aoti)) == 0);
  CHECK(wrong == 0);

  // The check can tell: a package loaded with one runner queues the second call.
  AOTInductor single =
      AOTInductor::from_archive(*model.model.archive, model.model.archive->aoti_models.front());
  single.set_runners(1);
  single.build(model.model, model.samples);
  const auto single_call = [&] { (void)single.infer(model.samples[0]); };
  CHECK(calls_that_waited_alone(single_call) == 1);
  CHECK_THROWS_AS(AOTInductor("x.pt2").set_runners(0), ConfigError);
}

TEST_CASE("AOTInductor calls from a thread of the server's own use LibTorch's intra-op thread "
          "count",
          "[exported][concurrency]") {
  // OpenMP keeps the thread count per thread: at::set_num_threads on one thread leaves a new
  // thread at OpenMP's default (every core) until something applies LibTorch's count there.
  const Exported model = exported("dict_outputs");
  AOTInductor aoti =
      AOTInductor::from_archive(*model.model.archive, model.model.archive->aoti_models.front());
  aoti.build(model.model, model.samples);
  const std::optional<int> threads =
      openmp_threads_of_new_thread_after([&] { (void)aoti.infer(model.samples[0]); });
  if (!threads) {
    SUCCEED("this LibTorch has no OpenMP, or this machine one core: nothing to tell apart");
    return;
  }
  CHECK(*threads == 1);
}

// ---- one input contract -------------------------------------------------------------------

TEST_CASE("A request of another shape is refused the same way whichever backend serves",
          "[exported][inputs]") {
  const Exported model = exported("dict_outputs");
  Sample other = copy_of(model.samples[0]);
  other[0] = torch::randn({1, 9});
  const std::string refusal =
      "input 0 is a Float tensor of shape [1, 9]; it was tuned with a Float tensor of shape "
      "[1, 8] (a backend of this tuning was made for these shapes only)";
  const TunedModule baseline = tuned_to_baseline(model);
  const TunedModule aoti = tuned_to_aoti(model);
  CHECK_THROWS_AS(baseline.forward(other), Error);
  CHECK_THROWS_WITH(baseline.forward(other), Catch::Contains(refusal));
  CHECK_THROWS_WITH(aoti.forward(other), Catch::Contains(refusal));
  // While a background tuning runs, the baseline it serves holds inputs to the same contract.
  BackgroundTunedModule background(model.model, model.samples, {.config = quick_config()});
  CHECK_THROWS_WITH(background.forward(other), Catch::Contains(refusal));
  CHECK(background.wait() == BackgroundTunedModule::State::tuned);
  CHECK_THROWS_WITH(background.forward(other), Catch::Contains(refusal));

  // A TorchScript tuning over shape-generic candidates keeps to the rank.
  const Model script{testing::make_conv_net(), torch::kCPU};
  CHECK(shape_check_for(script, default_candidates(torch::kCPU)).check == ShapeCheck::rank);
  CHECK(shape_check_for(model.model, std::vector<AnyBackend>{}).check == ShapeCheck::exact);
}
#endif
