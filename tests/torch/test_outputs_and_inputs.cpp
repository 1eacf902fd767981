// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The correctness check's comparison, tolerances, input specs, model loading and devices.
#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <vector>

using namespace aitune;
using namespace aitune::lt;
using namespace aitune::testing;

namespace {
OutputCheck compare(const at::Tensor& expected, const at::Tensor& actual,
                    const OutputPolicy& policy = {}) {
  const c10::IValue e(expected);
  return compare_outputs(&e, c10::IValue(actual), policy);
}
}  // namespace

TEST_CASE("Identical outputs and round-off within the tolerance pass", "[compare]") {
  const at::Tensor expected = torch::randn({2, 50});
  CHECK(compare(expected, expected.clone()).passed);
  CHECK(compare(expected, expected * (1 + 5e-5)).passed);
}

TEST_CASE("An output outside the tolerance fails and names the worst element", "[compare]") {
  at::Tensor expected = torch::ones({2, 3});
  at::Tensor actual = expected.clone();
  actual[1][2] = 1.5;
  const auto check = compare(expected, actual);
  CHECK_FALSE(check.passed);
  CHECK_THAT(check.reason, Catch::Contains("output: 1 of 6 elements outside the tolerance") &&
                               Catch::Contains("worst at [1, 2]: got 1.5, the baseline gave 1") &&
                               Catch::Contains("error 0.5"));
}

TEST_CASE("The absolute tolerance follows the scale of the output", "[compare]") {
  // Tiny outputs (1e-9) with a 10 % error must fail, though any fixed atol would pass them.
  const at::Tensor tiny = torch::randn({100}) * 1e-9;
  CHECK_FALSE(compare(tiny, tiny * 1.1).passed);
  CHECK(compare(tiny, tiny * (1 + 1e-6)).passed);
  // Near-zero elements of a large output are judged against the output's scale.
  at::Tensor large = torch::randn({100}) * 1000;
  large[0] = 1e-6;
  at::Tensor shifted = large.clone();
  shifted[0] = 0.05;  // 5e-5 of the scale 1000: within 1e-4
  CHECK(compare(large, shifted).passed);
}

TEST_CASE("Shapes and dtypes must match the baseline's", "[compare]") {
  CHECK_THAT(compare(torch::zeros({1, 10}), torch::zeros({1, 11})).reason,
             Catch::Contains("shape [1, 11] differs from the baseline's [1, 10]"));
  CHECK_THAT(compare(torch::zeros({3}), torch::zeros({3}, torch::kDouble)).reason,
             Catch::Contains("dtype float64 differs from the baseline's float32"));
  // A bf16 variant may return bf16, compared after upcasting with its own tolerance.
  const at::Tensor expected = torch::randn({64});
  const at::Tensor bf16 = expected.to(torch::kBFloat16);
  CHECK_FALSE(compare(expected, bf16).passed);
  const OutputPolicy reduced{Tolerance::for_precision(Precision::bf16), Precision::bf16};
  CHECK(compare(expected, bf16, reduced).passed);
  CHECK_FALSE(compare(expected, (expected * 1.5).to(torch::kBFloat16), reduced).passed);
}

TEST_CASE("NaN and Inf are accepted only where the baseline has them", "[compare]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  at::Tensor expected = torch::tensor({1.0, 2.0, 3.0});
  CHECK_THAT(compare(expected, torch::tensor({1.0, nan, 3.0})).reason,
             Catch::Contains("1 NaN where the baseline has numbers"));
  CHECK_THAT(compare(expected, torch::tensor({1.0, inf, 3.0})).reason,
             Catch::Contains("infinite values differ"));
  CHECK(compare(torch::tensor({1.0, nan, inf}), torch::tensor({1.0, nan, inf})).passed);
  CHECK_FALSE(compare(torch::tensor({1.0, nan, inf}), torch::tensor({1.0, nan, -inf})).passed);
  CHECK_THAT(compare(torch::tensor({1.0, nan}), torch::tensor({1.0, 2.0})).reason,
             Catch::Contains("numbers where the baseline has 1 NaN"));
}

TEST_CASE("Scalar and complex outputs are compared too", "[compare]") {
  const double inf = std::numeric_limits<double>::infinity();
  const c10::IValue infinite(inf);
  CHECK(compare_outputs(&infinite, c10::IValue(inf)).passed);
  CHECK_FALSE(compare_outputs(&infinite, c10::IValue(1e308)).passed);
  CHECK_FALSE(compare_outputs(&infinite, c10::IValue(-inf)).passed);
  const c10::IValue two(2.0);
  CHECK(compare_outputs(&two, c10::IValue(2.0001)).passed);  // within 1e-4 relative (x2)
  CHECK_FALSE(compare_outputs(&two, c10::IValue(2.1)).passed);
  const at::Tensor complex = torch::complex(torch::ones({3}), torch::ones({3}));
  CHECK(compare(complex, complex.clone()).passed);
  CHECK_FALSE(compare(complex, torch::complex(torch::ones({3}), torch::zeros({3}))).passed);
}

TEST_CASE("Integer outputs must be equal", "[compare]") {
  const auto check = compare(torch::tensor({1, 2, 3}), torch::tensor({1, 5, 3}));
  CHECK_THAT(check.reason, Catch::Contains("1 of 3 elements differ; first at [1] (got 5"));
  CHECK(compare(torch::tensor({1, 2}), torch::tensor({1, 2})).passed);
}

TEST_CASE("Nested tuples, lists and dicts are compared element by element", "[compare]") {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
  dict.insert("logits", torch::ones({2}));
  const c10::IValue expected = c10::ivalue::Tuple::create(
      {c10::IValue(torch::zeros({2})), c10::IValue(c10::List<int64_t>({1, 2})), dict});

  c10::impl::GenericDict wrong(c10::StringType::get(), c10::TensorType::get());
  wrong.insert("logits", torch::full({2}, 2.0));
  const c10::IValue bad_value = c10::ivalue::Tuple::create(
      {c10::IValue(torch::zeros({2})), c10::IValue(c10::List<int64_t>({1, 2})), wrong});
  CHECK(compare_outputs(&expected, expected).passed);
  CHECK_THAT(compare_outputs(&expected, bad_value).reason,
             Catch::StartsWith("output[2]['logits']: 2 of 2 elements outside"));

  c10::impl::GenericDict renamed(c10::StringType::get(), c10::TensorType::get());
  renamed.insert("scores", torch::ones({2}));
  const c10::IValue bad_key = c10::ivalue::Tuple::create(
      {c10::IValue(torch::zeros({2})), c10::IValue(c10::List<int64_t>({1, 2})), renamed});
  CHECK_THAT(compare_outputs(&expected, bad_key).reason,
             Catch::Contains("output[2]: key 'logits' is missing"));

  const c10::IValue list_changed = c10::ivalue::Tuple::create(
      {c10::IValue(torch::zeros({2})), c10::IValue(c10::List<int64_t>({1, 3})), dict});
  CHECK_THAT(compare_outputs(&expected, list_changed).reason,
             Catch::Contains("output[1][1]: got 3, the baseline gave 2"));

  const c10::IValue shorter = c10::ivalue::Tuple::create({c10::IValue(torch::zeros({2}))});
  CHECK_THAT(compare_outputs(&expected, shorter).reason,
             Catch::Contains("tuple of 1 elements, the baseline's has 3"));
  CHECK_THAT(compare_outputs(&expected, c10::IValue(torch::zeros({2}))).reason,
             Catch::Contains("the baseline returned a tuple here"));
}

TEST_CASE("Without a reference output only NaN and Inf are rejected", "[compare]") {
  CHECK(compare_outputs(nullptr, c10::IValue(torch::randn({4}))).passed);
  const c10::IValue nested = c10::ivalue::Tuple::create(
      {c10::IValue(torch::ones({2})), c10::IValue(torch::tensor({1.0, std::nan("")}))});
  CHECK_THAT(compare_outputs(nullptr, nested).reason,
             Catch::Contains("output[1]: 1 NaN or infinite values of"));
}

TEST_CASE("One walker: the NaN check names dict entries by key, the canary perturbs every "
          "container, copies keep the structure",
          "[compare][walker]") {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::TensorType::get());
  dict.insert("logits", torch::tensor({1.0, std::nan("")}));
  const c10::IValue with_nan = c10::ivalue::Tuple::create({c10::IValue(torch::ones({2})), dict});
  CHECK_THAT(compare_outputs(nullptr, with_nan).reason,
             Catch::StartsWith("output[1]['logits']: 1 NaN or infinite values"));

  // PerturbedOutputs reaches tensors in lists and dicts, not only in tuples; integers stay.
  const Model model{make_nested_net(), torch::kCPU};
  const std::vector<Sample> samples{Sample{torch::randn({3, 16}), c10::IValue(int64_t{4})}};
  TorchEager eager;
  eager.build(model, samples);
  PerturbedOutputs canary{TorchEager()};
  canary.build(model, samples);
  const c10::IValue expected = eager.infer(samples[0]);
  const c10::IValue actual = canary.infer(samples[0]);
  const auto& e = expected.toTupleRef().elements();
  const auto& a = actual.toTupleRef().elements();
  CHECK_FALSE(torch::allclose(a[1].toList().get(0).toTensor(), e[1].toList().get(0).toTensor()));
  const auto e_dict = e[2].toGenericDict();
  const auto a_dict = a[2].toGenericDict();
  CHECK_FALSE(torch::allclose(a_dict.at("logits").toTensor(), e_dict.at("logits").toTensor()));
  CHECK(torch::equal(a_dict.at("count").toTensor(), e_dict.at("count").toTensor()));

  // map_tensors keeps kinds, element types and dict keys.
  const c10::IValue copy = map_tensors(expected, [](const at::Tensor& t) { return t.clone(); });
  CHECK(compare_outputs(&expected, copy).passed);
  CHECK(copy.toTupleRef().elements()[1].isList());
  CHECK(copy.toTupleRef().elements()[2].toGenericDict().contains("count"));
  CHECK_FALSE(copy.toTupleRef().elements()[0].toTensor().is_same(e[0].toTensor()));
}

TEST_CASE("Under an accuracy budget the check measures every output's relative error, cosine and "
          "top-k agreement, past values outside the tolerance",
          "[compare][accuracy]") {
  const at::Tensor e0 = torch::ones({2, 4});
  const at::Tensor e1 = torch::tensor({{0.0, 1.0, 2.0}, {2.0, 1.0, 0.0}});
  // 10 % larger everywhere (same direction), and one row whose top class moved to second place.
  const at::Tensor a0 = e0 * 1.1;
  const at::Tensor a1 = torch::tensor({{0.0, 1.0, 2.0}, {2.0, 2.5, 0.0}});
  const c10::IValue expected = c10::ivalue::Tuple::create({c10::IValue(e0), c10::IValue(e1)});
  const c10::IValue actual = c10::ivalue::Tuple::create({c10::IValue(a0), c10::IValue(a1)});

  const auto check_with = [&](int k) {
    const AccuracyBudget budget = AccuracyBudget{}.set_min_cosine(0.9).set_top_k({"1", k, 0.5});
    return compare_outputs(&expected, actual, {}, &budget);
  };
  const OutputCheck top1 = check_with(1);
  CHECK_FALSE(top1.passed);
  CHECK(top1.outside_tolerance_only);
  CHECK_THAT(top1.reason, Catch::StartsWith("output[0]: 8 of 8 elements outside the tolerance"));
  REQUIRE(top1.accuracy.size() == 2);  // the walk went on past output[0]
  CHECK(*top1.accuracy[0].relative_error == Approx(0.1));
  CHECK(*top1.accuracy[0].cosine == Approx(1.0));
  CHECK(top1.accuracy[0].top_k_rows == 0);  // not the class scores named
  CHECK(top1.accuracy[1].output == "output[1]");
  CHECK(*top1.accuracy[1].relative_error == Approx(0.75));  // 1.5 off where the scale is 2
  CHECK(top1.accuracy[1].top_k_rows == 2);
  CHECK(top1.accuracy[1].top_k_agreed == 1);
  CHECK(check_with(2).accuracy[1].top_k_agreed == 2);  // the baseline's class is second
  // The reference against itself: it passes, and counts the reference's rows (how a check
  // learns what the samples still to come can add to the agreement).
  const AccuracyBudget counting = AccuracyBudget{}.set_top_k({"1", 1, 0.5});
  const OutputCheck itself = compare_outputs(&expected, expected, {}, &counting);
  CHECK(itself.passed);
  REQUIRE(itself.accuracy.size() == 2);
  CHECK(itself.accuracy[1].top_k_rows == 2);
  CHECK(itself.accuracy[1].top_k_agreed == 2);

  // Without a budget: nothing more is measured, and the first failure ends the walk.
  const OutputCheck plain = compare_outputs(&expected, actual);
  REQUIRE(plain.accuracy.size() == 1);
  CHECK_FALSE(plain.accuracy[0].cosine);
  CHECK_FALSE(plain.accuracy[0].relative_error);

  // NaN where the baseline has numbers is broken whatever the budget: no budget judges it.
  const c10::IValue nan =
      c10::ivalue::Tuple::create({c10::IValue(a0), c10::IValue(torch::full({2, 3}, std::nan("")))});
  const AccuracyBudget loose = AccuracyBudget{}.set_min_cosine(-1.0);
  const OutputCheck broken = compare_outputs(&expected, nan, {}, &loose);
  CHECK_FALSE(broken.passed);
  CHECK_FALSE(broken.outside_tolerance_only);
  CHECK_THAT(broken.reason, Catch::StartsWith("output[1]: 6 NaN where the baseline has numbers"));
}

TEST_CASE("The check reports each output's worst error as a share of the tolerance, and the "
          "precision",
          "[compare][accuracy]") {
  const at::Tensor ones = torch::ones({4});
  const c10::IValue expected = c10::ivalue::Tuple::create(
      {c10::IValue(ones), c10::IValue(torch::arange(3)), c10::IValue(2.0)});
  // 5e-5 off where 1e-4 * scale + 1e-4 * |expected| = 2e-4 is allowed: a quarter.
  const c10::IValue actual = c10::ivalue::Tuple::create(
      {c10::IValue(ones + 5e-5), c10::IValue(torch::arange(3)), c10::IValue(2.0)});
  const OutputCheck check = compare_outputs(&expected, actual);
  CHECK(check.passed);
  REQUIRE(check.accuracy.size() == 3);
  CHECK(check.accuracy[0].output == "output[0]");
  CHECK(check.accuracy[0].worst_error_ratio == Approx(0.25).epsilon(0.01));
  CHECK(check.accuracy[1].worst_error_ratio == 0.0);  // integers: exact
  CHECK(check.accuracy[2].worst_error_ratio == 0.0);
  CHECK(check.precision == Precision::fp32);
  CHECK_FALSE(check.reduced_precision);
  // A failing output is reported too, above 1.
  const OutputCheck failed = compare(ones, ones * 1.01);
  CHECK_FALSE(failed.passed);
  CHECK(failed.accuracy.at(0).worst_error_ratio > 1.0);
  // A bf16 variant says so.
  OutputPolicy bf16{Tolerance::for_precision(Precision::bf16), Precision::bf16};
  const c10::IValue e(ones);
  const OutputCheck reduced = compare_outputs(&e, c10::IValue(ones.to(torch::kBFloat16)), bf16);
  CHECK(reduced.passed);
  CHECK(reduced.precision == Precision::bf16);
  CHECK(reduced.reduced_precision);
}

TEST_CASE("Precisions and tolerances are chosen by the user, and bad values are refused",
          "[precision]") {
  CHECK(parse_precision("bfloat16") == Precision::bf16);
  CHECK(parse_precision("fp32") == Precision::fp32);
  CHECK_THROWS_WITH(parse_precision("fp8"),
                    "unknown precision 'fp8': expected one of fp32, bf16, fp16, fp64");

  const c10::Device cpu(c10::kCPU);
  const std::vector<AnyBackend> defaults = default_candidates(cpu);
  const std::vector<Precision> only_bf16{Precision::bf16};
  const auto kept = keep_precisions(defaults, only_bf16, cpu, Precision::fp32);
  REQUIRE(kept.size() == 1);
  CHECK(candidate_precision(kept[0], Precision::fp32) == Precision::bf16);
  const std::vector<Precision> fp32{Precision::fp32};
  CHECK(keep_precisions(defaults, fp32, cpu, Precision::fp32).size() == defaults.size() - 1);
  const std::vector<Precision> fp16{Precision::fp16};
  CHECK_THROWS_WITH(keep_precisions(defaults, fp16, cpu, Precision::fp32),
                    Catch::Contains("fp16 needs a CUDA device"));
  CHECK_THROWS_WITH(keep_precisions({TorchScriptFrozen()}, only_bf16, cpu, Precision::fp32),
                    "no candidate computes in bf16");
  CHECK_THROWS_AS(keep_precisions(defaults, {}, cpu, Precision::fp32), ConfigError);

  const ToleranceOverride all = parse_tolerance("1e-3");
  CHECK_FALSE(all.precision);
  CHECK(all.tolerance.rtol == 1e-3);
  CHECK(all.tolerance.scale_atol == 1e-3);
  const ToleranceOverride bf16 = parse_tolerance("bfloat16:0.05,0.01");
  CHECK(bf16.precision == Precision::bf16);
  CHECK(bf16.tolerance.rtol == 0.05);
  CHECK(bf16.tolerance.scale_atol == 0.01);
  for (const char* bad : {"", "x", "-1", "bf16:", "fp8:0.1", "0.1,", "0.1,nan", "1e9", "0.1x"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_tolerance(bad), ConfigError);
  }

  // A precision's own override wins over one for all, whatever the order.
  std::vector<AnyBackend> candidates = defaults;
  const std::vector<ToleranceOverride> overrides{bf16, all};
  apply_tolerances(candidates, overrides, Precision::fp32);
  for (const AnyBackend& candidate : candidates) {
    INFO(candidate.describe());
    const double rtol = candidate.output_policy().tolerance.rtol;
    CHECK(rtol ==
          (candidate_precision(candidate, Precision::fp32) == Precision::bf16 ? 0.05 : 1e-3));
  }
}

TEST_CASE("A precision converts to LibTorch's dtype and back, and names it the same way",
          "[precision]") {
  for (const Precision precision :
       {Precision::fp64, Precision::fp32, Precision::fp16, Precision::bf16}) {
    INFO(to_string(precision));
    CHECK(precision_of(to_scalar_type(precision)) == precision);
    CHECK(short_dtype_name(to_scalar_type(precision)) == to_string(precision));
  }
  CHECK_FALSE(precision_of(c10::ScalarType::Long));
  CHECK(short_dtype_name(c10::ScalarType::Long) == "Long");
}

TEST_CASE("An fp64 model's candidates are fp64 both when chosen by precision and in the report",
          "[precision]") {
  // Declared (before tuning, read off the model) and observed (the report, read off the
  // baseline's outputs) precision are one function: they agreed on fp32 models only before.
  Model model{make_conv_net()};
  model.module.to(c10::ScalarType::Double);
  const std::vector<Sample> samples{{torch::randn({1, 3, 16, 16}, torch::kDouble)}};
  const Precision native = model_precision(model, samples.front());
  CHECK(native == Precision::fp64);
  std::vector<AnyBackend> candidates{TorchScriptFrozen(), TorchScriptFrozen(torch::kBFloat16)};
  const std::vector<Precision> fp64{Precision::fp64};
  const std::vector<AnyBackend> kept = keep_precisions(candidates, fp64, model.device, native);
  REQUIRE(kept.size() == 1);
  const TunedModule tuned =
      tune(model, samples,
           {.candidates = kept,
            .config = StrategyConfig{}
                          .set_sink(null_sink())
                          .set_profiling(ProfilingConfig{}.set_time_budget_ms(500.0))});
  const CandidateReport& row = tuned.report().candidates.at(0);
  CHECK(row.precision == Precision::fp64);
  CHECK(row.precision == candidate_precision(kept[0], native));
  // An integer-input model reads its weights' precision instead.
  CHECK(model_precision(Model{make_conv_net()}, Sample{torch::arange(3)}) == Precision::fp32);
}

TEST_CASE("Default tolerances follow the compute precision; bad values are rejected", "[compare]") {
  CHECK(Tolerance::for_dtype(torch::kFloat).rtol == 1e-4);
  CHECK(Tolerance::for_dtype(torch::kHalf).scale_atol == 7.8125e-3);
  CHECK(Tolerance::for_dtype(torch::kBFloat16).rtol == 6.25e-2);
  CHECK_THROWS_AS((Tolerance{-1.0, 0.0}.checked()), ConfigError);
  CHECK_THROWS_AS((Tolerance{0.0, std::nan("")}.checked()), ConfigError);
}

TEST_CASE("Input specs parse shapes and dtypes and reject bad text", "[inputs]") {
  const auto image = parse_input_spec("1x3x224x224");
  CHECK((image.shape == std::vector<std::int64_t>{1, 3, 224, 224}));
  CHECK(image.dtype == torch::kFloat);
  const auto tokens = parse_input_spec("1x64:int64");
  CHECK((tokens.shape == std::vector<std::int64_t>{1, 64}));
  CHECK(tokens.dtype == torch::kLong);
  CHECK(parse_input_spec("7:bf16").dtype == torch::kBFloat16);
  CHECK_THROWS_WITH(parse_input_spec("1x3xAx4"), Catch::Contains("'A' is not a dimension"));
  CHECK_THROWS_WITH(parse_input_spec("1x0"), Catch::Contains("dimension 0 is not positive"));
  CHECK_THROWS_WITH(parse_input_spec(""), Catch::Contains("no dimensions"));
  CHECK_THROWS_WITH(parse_input_spec("1x"), Catch::Contains("'' is not a dimension"));
  CHECK_THROWS_WITH(parse_input_spec("1x3:float128"), Catch::Contains("unknown dtype 'float128'"));
}

TEST_CASE("Inputs given by name take their place in the model's order", "[inputs]") {
  torch::jit::Module module("TwoInputs");
  module.define(R"(
    def forward(self, ids, mask):
        return ids * mask
  )");
  const Model model{module};
  const auto given = [](std::initializer_list<std::string_view> texts) {
    std::vector<NamedInputSpec> inputs;
    for (const std::string_view text : texts)
      inputs.push_back(parse_named_input_spec(text));
    return inputs;
  };
  const NamedInputSpec named = parse_named_input_spec("mask=1x8:int64[1,2)");
  CHECK(named.name == "mask");
  CHECK(named.spec.describe() == "1x8:int64[1,2)");
  CHECK(parse_named_input_spec("1x8").name.empty());
  CHECK_THROWS_WITH(parse_named_input_spec("2x=1x8"), Catch::Contains("'2x' is not an input name"));
  CHECK_THROWS_WITH(parse_named_input_spec("=1x8"), Catch::Contains("'' is not an input name"));

  // By name in any order, or by position then by name: the model's order.
  const auto ordered =
      inputs_in_model_order(given({"mask=1x8:int64[1,2)", "ids=1x8:int64"}), model, "two.pt");
  REQUIRE(ordered.size() == 2);
  CHECK(ordered[0].describe() == "1x8:int64");
  CHECK(ordered[1].describe() == "1x8:int64[1,2)");
  CHECK(inputs_in_model_order(given({"1x8:int64", "mask=1x8:int64[1,2)"}), model, "two.pt")
            .at(1)
            .describe() == "1x8:int64[1,2)");
  // Positional ones are kept as given, even past the names the model records.
  CHECK(inputs_in_model_order(given({"1x8", "1x9", "1x10"}), model, "two.pt").size() == 3);
  CHECK_THROWS_WITH(
      inputs_in_model_order(given({"ids=1x8:int64", "tokens=1x8:int64"}), model, "two.pt"),
      Catch::Contains("'two.pt' has no input 'tokens' (its inputs: ids, mask)"));
  CHECK_THROWS_WITH(inputs_in_model_order(given({"1x8:int64", "ids=1x8:int64"}), model, "two.pt"),
                    Catch::Contains("input 'ids' is given twice"));
  CHECK_THROWS_WITH(inputs_in_model_order(given({"mask=1x8:int64"}), model, "two.pt"),
                    Catch::Contains("no value for input 'ids'"));
}

TEST_CASE("Random samples have the asked shapes and dtypes and are reproducible", "[inputs]") {
  const std::vector<InputSpec> specs{parse_input_spec("1x3x8x8"), parse_input_spec("1x5:int64")};
  const Sample a = make_random_sample(specs, torch::kCPU, 3);
  const Sample b = make_random_sample(specs, torch::kCPU, 3);
  REQUIRE(a.size() == 2);
  CHECK((a[0].toTensor().sizes() == c10::IntArrayRef({1, 3, 8, 8})));
  CHECK(a[1].toTensor().scalar_type() == torch::kLong);
  CHECK(a[1].toTensor().min().item<int64_t>() >= 0);
  CHECK(a[1].toTensor().max().item<int64_t>() < 100);
  CHECK(a[0].toTensor().equal(b[0].toTensor()));
  CHECK_FALSE(a[0].toTensor().equal(make_random_sample(specs, torch::kCPU, 4)[0].toTensor()));
}

TEST_CASE("Loading a model names the file and the cause of a failure", "[model]") {
  const auto dir = std::filesystem::temp_directory_path() / "aitune_model_loading";
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(load_model(dir / "missing.pt"),
                    Catch::Contains("missing.pt") && Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(load_model(dir), Catch::Contains("is not a file"));
  const auto corrupt = dir / "corrupt.pt";
  std::ofstream(corrupt) << "this is not a zip archive";
  CHECK_THROWS_WITH(
      load_model(corrupt),
      Catch::Contains("corrupt.pt") &&
          Catch::Contains("is neither a torch.export .pt2 archive nor a TorchScript model"));
  const auto good = dir / "conv.pt";
  make_conv_net().save(good.string());
  const Model model = load_model(good);
  CHECK(model.device.is_cpu());
  CHECK(model.module.hasattr("w1"));
}

TEST_CASE("Devices parse and are checked against this build", "[model]") {
  CHECK(parse_device("cpu").is_cpu());
  CHECK_THROWS_WITH(parse_device("gpu"), Catch::Contains("unknown device 'gpu'"));
  if (!torch::cuda::is_available()) {
    CHECK_THROWS_WITH(parse_device("cuda"), Catch::Contains("device 'cuda' was asked for"));
  } else {
    CHECK(parse_device("cuda") == c10::Device(c10::kCUDA, 0));
    CHECK_THROWS_WITH(parse_device("cuda:99"), Catch::Contains("does not exist"));
  }
}

TEST_CASE("An input may say the range its random values are drawn from", "[inputs]") {
  const InputSpec tokens = parse_input_spec("1x4096:int64[5,9)");
  CHECK(tokens.describe() == "1x4096:int64[5,9)");
  const at::Tensor ids = make_random_input(tokens, torch::kCPU);
  CHECK(ids.min().item<std::int64_t>() == 5);
  CHECK(ids.max().item<std::int64_t>() == 8);

  const at::Tensor pixels = make_random_input(parse_input_spec("1x4096[2,3)"), torch::kCPU);
  CHECK(pixels.scalar_type() == torch::kFloat);
  CHECK(pixels.min().item<double>() >= 2.0);
  CHECK(pixels.max().item<double>() < 3.0);
  // In bfloat16, about one draw in 2^9 rounds up to HIGH: those are drawn again.
  const at::Tensor coarse =
      make_random_input(parse_input_spec("1x65536:bfloat16[0,1)"), torch::kCPU);
  CHECK(coarse.scalar_type() == torch::kBFloat16);
  CHECK(coarse.max().item<double>() < 1.0);
  CHECK(coarse.min().item<double>() >= 0.0);

  const at::Tensor bytes = make_random_input(parse_input_spec("1x4096:uint8[0,256)"), torch::kCPU);
  CHECK(bytes.max().item<std::int64_t>() > 200);

  CHECK_THROWS_WITH(parse_input_spec("1x4:int64[0,1.5)"),
                    Catch::Contains("an int64 range has integer bounds"));
  CHECK_THROWS_WITH(parse_input_spec("1x4:uint8[0,257)"),
                    Catch::Contains("[0,257) does not fit in uint8 (values 0 to 255)"));
  CHECK_THROWS_WITH(parse_input_spec("1x4:int8[-129,0)"), Catch::Contains("does not fit in int8"));
  CHECK_THROWS_WITH(parse_input_spec("1x4:int64[0,1e300)"),
                    Catch::Contains("does not fit in int64"));
  CHECK_THROWS_WITH(parse_input_spec("1x4:bool[0,2)"),
                    Catch::Contains("a bool input takes no range"));
  CHECK_THROWS_WITH(parse_input_spec("1x4:float16[0,100000)"),
                    Catch::Contains("does not fit in float16 (largest 65504)"));
  CHECK_THROWS_WITH(parse_input_spec("1x4[-1e308,1e308)"),
                    Catch::Contains("does not fit in float32"));
  CHECK_THROWS_WITH(parse_input_spec("1x4:float64[-1e308,1e308)"),
                    Catch::Contains("does not fit in float64"));
}

namespace {
/// `value` written as torch.save writes it (a zip archive), to a fresh file.
std::filesystem::path saved(const c10::IValue& value, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / ("aitune_sample_" + name + ".pt");
  const std::vector<char> bytes = torch::jit::pickle_save(value);
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}
}  // namespace

TEST_CASE("A sample file holds a tensor, or a tuple or list of arguments", "[inputs]") {
  const at::Tensor image = torch::randn({1, 3, 4, 4});
  const Sample one = load_sample_file(saved(image, "tensor"), torch::kCPU);
  REQUIRE(one.size() == 1);
  CHECK(one[0].toTensor().equal(image));

  const auto arguments = c10::ivalue::Tuple::create(
      {c10::IValue(image), c10::IValue(int64_t{3}), c10::IValue(true), c10::IValue()});
  const Sample four = load_sample_file(saved(arguments, "tuple"), torch::kCPU);
  REQUIRE(four.size() == 4);
  CHECK(four[1].toInt() == 3);
  CHECK(four[2].toBool());
  CHECK(four[3].isNone());

  c10::List<at::Tensor> list({image, image});
  CHECK(load_sample_file(saved(list, "list"), torch::kCPU).size() == 2);
}

TEST_CASE("A sample file outside the limits is refused before or after LibTorch reads it",
          "[inputs]") {
  const at::Tensor image = torch::randn({1, 8});
  SECTION("missing") {
    CHECK_THROWS_WITH(load_sample_file("/nonexistent/x.pt", torch::kCPU),
                      Catch::Contains("does not exist or is not a file"));
  }
  SECTION("too large: refused before it is read") {
    SampleFileLimits limits;
    limits.max_bytes = 100;
    CHECK_THROWS_WITH(load_sample_file(saved(image, "large"), torch::kCPU, limits),
                      Catch::Contains("bytes, more than the limit of 100"));
  }
  SECTION("not a zip archive") {
    const auto path = std::filesystem::temp_directory_path() / "aitune_sample_text.pt";
    std::ofstream(path) << "just text";
    CHECK_THROWS_WITH(load_sample_file(path, torch::kCPU),
                      Catch::Contains("is not what torch.save writes"));
  }
  SECTION("a sound zip archive whose pickle LibTorch cannot read") {
    std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(image));
    // data.pkl's first opcode, PROTO 2, becomes one that does not exist.
    const std::string_view view(bytes.data(), bytes.size());
    const std::size_t data = view.find(std::string_view("\x80\x02", 2));
    REQUIRE(data != std::string_view::npos);
    bytes[data] = '\xff';
    CHECK_THROWS_AS(load_sample_bytes(bytes, "opcode.pt", torch::kCPU), ConfigError);
    CHECK_THROWS_WITH(load_sample_bytes(bytes, "opcode.pt", torch::kCPU),
                      Catch::StartsWith("LibTorch cannot read sample file 'opcode.pt'"));
  }
  SECTION("too short to be a zip archive") {
    const auto path = std::filesystem::temp_directory_path() / "aitune_sample_broken.pt";
    std::ofstream(path, std::ios::binary) << std::string("PK\x03\x04garbage", 11);
    CHECK_THROWS_WITH(load_sample_file(path, torch::kCPU),
                      Catch::Contains("is a damaged zip archive: too short for a zip archive"));
  }
  SECTION("a damaged zip archive: refused before LibTorch's zip reader sees it") {
    // LibTorch's reader trusts the archive's offsets: a fuzzed file crashed it (SIGSEGV).
    std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(image));
    const std::vector<char> whole = bytes;
    bytes.resize(bytes.size() - 30);  // the end record is gone
    const auto path = std::filesystem::temp_directory_path() / "aitune_sample_truncated.pt";
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    CHECK_THROWS_WITH(load_sample_file(path, torch::kCPU),
                      Catch::Contains("is a damaged zip archive: no end-of-archive record"));
    // The central directory's offset (in the ZIP64 end record) pointing past the end.
    std::vector<char> moved = whole;
    const std::string_view view(moved.data(), moved.size());
    const auto record = view.rfind(std::string_view("PK\x06\x06", 4));
    REQUIRE(record != std::string_view::npos);
    moved[record + 48 + 6] = '\x7f';
    CHECK_THROWS_WITH(load_sample_bytes(moved, "moved.pt", torch::kCPU),
                      Catch::Contains("the central directory lies outside the archive"));
    CHECK(load_sample_bytes(whole, "whole.pt", torch::kCPU).size() == 1);
  }
  SECTION("a second end record hidden in the comment: the one a reader follows is checked") {
    std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(image));
    const std::string_view view(bytes.data(), bytes.size());
    const auto real = view.rfind(std::string_view("PK\x05\x06", 4));
    REQUIRE(real != std::string_view::npos);
    bytes[real + 20] = 22;  // the real record's comment: 22 bytes, a fake end record
    bytes[real + 21] = 0;
    const char fake[22] = {'P', 'K', 5, 6, 0, 0,      0,      0,      1,    0, 1,
                           0,   46,  0, 0, 0, '\xff', '\xff', '\xff', 0x7f, 0, 0};
    bytes.insert(bytes.end(), fake, fake + sizeof fake);
    CHECK_THROWS_WITH(load_sample_bytes(bytes, "hidden.pt", torch::kCPU),
                      Catch::Contains("the central directory lies outside the archive"));
  }
  SECTION("a dict at the top") {
    c10::Dict<std::string, at::Tensor> dict;
    dict.insert("x", image);
    CHECK_THROWS_WITH(load_sample_file(saved(dict, "dict"), torch::kCPU),
                      Catch::Contains("holds a dict: save a tensor, or a tuple or list"));
  }
  SECTION("too many values") {
    SampleFileLimits limits;
    limits.max_values = 2;
    const auto three = c10::ivalue::Tuple::create({image, image, image});
    CHECK_THROWS_WITH(load_sample_file(saved(three, "three"), torch::kCPU, limits),
                      Catch::Contains("holds more than 2 values"));
  }
  SECTION("nested too deep") {
    SampleFileLimits limits;
    limits.max_depth = 2;
    c10::IValue nested = c10::ivalue::Tuple::create({image});
    for (int i = 0; i < 3; ++i)
      nested = c10::ivalue::Tuple::create({nested});
    CHECK_THROWS_WITH(
        load_sample_file(saved(c10::ivalue::Tuple::create({nested}), "deep"), torch::kCPU, limits),
        Catch::Contains("argument 0[0][0] is nested deeper than 2 levels"));
  }
  SECTION("no argument") {
    CHECK_THROWS_WITH(load_sample_file(saved(c10::ivalue::Tuple::create({}), "empty"), torch::kCPU),
                      Catch::Contains("holds no argument"));
  }
}

TEST_CASE("A baseline output with NaN or Inf is named by the reference warning", "[compare]") {
  CHECK(reference_warning(c10::IValue(torch::ones({3}))).empty());
  const auto nan = c10::ivalue::Tuple::create(
      {c10::IValue(torch::ones({2})), c10::IValue(torch::full({4}, std::nan("")))});
  CHECK(reference_warning(c10::IValue(nan)) ==
        "the baseline's output[1]: 4 NaN or infinite values of 4: candidates are checked only "
        "to match them there");
}

TEST_CASE("A runtime's multi-line error is one line that keeps its cause", "[errors]") {
  // OpenVINO: the first lines only say where; the cause comes last.
  CHECK(summarize_error(
            "OpenVINO 2026.4.1: Exception from src/inference/src/cpp/core.cpp:105:\n"
            "Check 'element::Type::merge(a, b, c)' failed at src/core/src/op/convolution.cpp:45:\n"
            "While validating node 'opset1::Convolution Convolution_211' with friendly_name "
            "'Convolution_211':\n"
            "Element types for data batch and filters do not match (data batch element type: "
            "i64, filters element type: f32).\n\n") ==
        "OpenVINO 2026.4.1: While validating node 'opset1::Convolution Convolution_211' with "
        "friendly_name 'Convolution_211': Element types for data batch and filters do not match "
        "(data batch element type: i64, filters element type: f32).");
  // The native runtime: the failed node, its arguments, the cause, then a C++ backtrace.
  CHECK(summarize_error("Exception while executing node: %conv2d = torch.ops.aten.conv2d.default("
                        "input=%x)\nwith args:\narg0 input: Tensor long int[1, 3]cpu\narg1 "
                        "weight: Tensor float[16, 3]cpu\n\nexpected scalar type Long but found "
                        "Float\nException raised from check_type at TensorMethods.cpp:12 (most "
                        "recent call first):\nframe #0: c10::Error::Error\n") ==
        "Exception while executing node: %conv2d = torch.ops.aten.conv2d.default(input=%x); "
        "expected scalar type Long but found Float");
  // One line stays as it is; a TorchScript traceback gives its last line; a long one is cut,
  // its start and its last line kept.
  CHECK(summarize_error("just this") == "just this");
  CHECK(summarize_error("Traceback of TorchScript (most recent call last):\n  File x\n"
                        "RuntimeError: the cause\n") == "RuntimeError: the cause");
  const std::string long_text = std::string(2000, 'a') + "\nthe cause at the end";
  const std::string cut = summarize_error(long_text);
  CHECK(cut.size() < 600);
  CHECK_THAT(cut, Catch::EndsWith("the cause at the end"));
  CHECK(cut.find('\n') == std::string::npos);
}
