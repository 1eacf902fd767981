// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The accuracy budget (core/decision/accuracy_budget.hpp): with one, a reduced-precision candidate
// is judged by how far its outputs move over every checked sample instead of by its tolerance;
// one that breaks them is refused with its figures and never selected; without one nothing
// changes.
#include "support/fake_backend.hpp"
#include "support/report_rows.hpp"
#include <aitune/core/report/markdown.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace aitune;
using namespace aitune::testing;

namespace {

/// A candidate in bf16, 2.5x faster than the baseline, whose outputs are off by `offset` (the
/// baseline's are 2 x the sample: at sample 1, an offset of 0.01 is a relative error of 0.005).
FakeBackend reduced(std::string name, double offset, double cosine = 1.0, double latency = 4.0) {
  FakeBehaviour behaviour{std::move(name), {latency}};
  behaviour.precision = "bf16";
  behaviour.output_offset = offset;
  behaviour.cosine = cosine;
  return FakeBackend(behaviour);
}

StrategyConfig with_budget(AccuracyBudget budget) {
  return StrategyConfig{}.set_accuracy_budget(std::move(budget));
}

}  // namespace

TEST_CASE("Without an accuracy budget a reduced-precision candidate outside its tolerance is "
          "refused, and with one it is judged by the budget and may win",
          "[strategy][accuracy]") {
  FakeModel model;
  const auto tune = [&](StrategyConfig config) {
    auto strategy = make_strategy(model, {reduced("Int8", 0.01)}, std::move(config));
    return strategy.tune(model, samples_of_one_shape(8)).report;
  };

  const TuneReport plain = tune({});
  CHECK(plain.baseline_selected);
  CHECK(row_of(plain, "Int8()").status == CandidateStatus::incorrect);
  CHECK_FALSE(row_of(plain, "Int8()").judged_by_budget);
  CHECK(plain.accuracy_budget.empty());
  CHECK_FALSE(to_json(plain).contains("accuracy_budget"));

  const TuneReport budgeted =
      tune(with_budget(AccuracyBudget{}.set_max_relative_error(0.01).set_min_samples(8)));
  const CandidateReport& int8 = row_of(budgeted, "Int8()");
  CHECK(int8.status == CandidateStatus::ok);
  CHECK(budgeted.selected == "Int8()");
  CHECK(int8.judged_by_budget);
  REQUIRE(int8.accuracy.size() == 1);
  // The worst sample is the first: 0.01 / 2.
  CHECK(int8.accuracy[0].relative_error == Catch::Detail::Approx(0.005));
  CHECK(int8.accuracy_verdict == "output: relative error 0.005 <= 0.01");
  CHECK(budgeted.accuracy_budget == "relative error <= 0.01; on >= 8 samples");
  CHECK_THAT(budgeted.decision,
             Catch::EndsWith("; it computes in bf16, within the accuracy budget (output: relative "
                             "error 0.005 <= 0.01)"));
  const std::string table = render_table(budgeted);
  CHECK_THAT(table, Catch::Contains("Int8(): within the accuracy budget: output: relative error "
                                    "0.005 <= 0.01") &&
                        Catch::Contains("accuracy budget (reduced precision): relative error <= "
                                        "0.01; on >= 8 samples") &&
                        Catch::Contains("budget"));
  CHECK_THAT(render_markdown(budgeted),
             Catch::Contains("within the accuracy budget: output: relative error 0.005"));
}

TEST_CASE("A budget blind to scale says so when a tuning starts; one with a relative bound does "
          "not",
          "[strategy][accuracy]") {
  // Before: cosine=0.98 alone accepted an IR whose outputs were 1.5 times too large (cosine
  // 0.986) and said nothing (N1). The budget keeps what the user set, and the warning says what
  // it cannot see and how to bound it.
  CHECK_THAT(AccuracyBudget{}.set_min_cosine(0.98).blind_spot(),
             Catch::StartsWith("the accuracy budget (cosine) does not see an output's scale"));
  CHECK_THAT(AccuracyBudget{}.set_top_k({}).blind_spot(), Catch::Contains("(top-k agreement)"));
  CHECK(AccuracyBudget{}.set_min_cosine(0.98).set_max_relative_error(0.5).blind_spot().empty());
  FakeModel model;
  for (const bool bounded : {false, true}) {
    AccuracyBudget budget = AccuracyBudget{}.set_min_cosine(0.98).set_min_samples(8);
    if (bounded) budget.set_max_relative_error(0.5);
    SinkRecorder sink;
    auto strategy = make_strategy(model, {reduced("Int8", 0.01)}, with_budget(budget), &sink);
    (void)strategy.tune(model, samples_of_one_shape(8));
    CHECK(sink.contains("does not see an output's scale") != bounded);
  }
}

TEST_CASE("A reduced-precision candidate that breaks its outputs is refused with the measure "
          "that failed and by how much, and never selected, however fast",
          "[strategy][accuracy]") {
  FakeModel model;
  const AccuracyBudget budget = AccuracyBudget{}.set_min_cosine(0.999).set_min_samples(8);
  auto strategy =
      make_strategy(model,
                    {reduced("Drifting", 0.01, /*cosine=*/0.98, /*latency=*/1.0),
                     reduced("Broken", std::numeric_limits<double>::quiet_NaN(), 1.0, 1.0),
                     reduced("Good", 0.01, /*cosine=*/0.9995, /*latency=*/4.0)},
                    with_budget(budget));
  const TuneReport report = strategy.tune(model, samples_of_one_shape(8)).report;

  const CandidateReport& drifting = row_of(report, "Drifting()");
  CHECK(drifting.status == CandidateStatus::incorrect);
  CHECK(drifting.judged_by_budget);
  CHECK_THAT(drifting.reason,
             Catch::Contains("outside the accuracy budget: output: cosine 0.980000 < 0.999"));
  // The least cosine only falls with more samples: the check ends at the first that misses.
  CHECK_THAT(drifting.reason,
             Catch::EndsWith("; the check stopped after sample 1 of 8, where the samples left "
                             "could not bring it within the budget"));
  const CandidateReport& broken = row_of(report, "Broken()");
  CHECK(broken.status == CandidateStatus::incorrect);
  CHECK_THAT(broken.reason, Catch::Contains("output is not finite"));
  CHECK(report.selected == "Good()");
  CHECK(row_of(report, "Good()").accuracy_verdict == "output: cosine 0.999500 >= 0.999");
  CHECK_THAT(render_table(report), Catch::Contains("outside the accuracy budget"));
}

TEST_CASE("A check ends once top-k agreement is out of reach of the samples still to come, and "
          "runs them all while it is not",
          "[strategy][accuracy]") {
  // The fake's top-1 agrees where its relative error, offset / (2 x sample), stays under 0.5:
  // with the samples 1.00, 1.01, ..., 1.99, an offset of 1.025 misses on the first three (97 of
  // 100 at best once the third has missed) and one of 1.015 on the first two (98 of 100).
  FakeModel model;
  const AccuracyBudget budget = AccuracyBudget{}.set_top_k({"", 1, 0.98});
  auto strategy = make_strategy(
      model, {reduced("ThreeMisses", 1.025, 1.0, 1.0), reduced("TwoMisses", 1.015, 1.0, 4.0)},
      with_budget(budget));
  const TuneReport report = strategy.tune(model, samples_of_one_shape(100)).report;

  const CandidateReport& short_of = row_of(report, "ThreeMisses()");
  CHECK(short_of.status == CandidateStatus::incorrect);
  CHECK_THAT(
      short_of.reason,
      Catch::Contains("outside the accuracy budget: output: top-1 agreement 0 % (0 of 3) < "
                      "98 %") &&
          Catch::EndsWith("; the check stopped after sample 3 of 100, where the samples left "
                          "could not bring it within the budget"));
  const CandidateReport& within = row_of(report, "TwoMisses()");
  CHECK(within.status == CandidateStatus::ok);
  CHECK(within.accuracy_verdict == "output: top-1 agreement 98 % (98 of 100) >= 98 %");
  CHECK(report.selected == "TwoMisses()");
}

TEST_CASE("Top-k agreement has missed the budget only when the rows still to come, all agreeing, "
          "could not lift it to the share",
          "[accuracy]") {
  const auto scores = [](std::string path, std::size_t agreed, std::size_t rows) {
    OutputAccuracy accuracy{std::move(path)};
    accuracy.top_k_agreed = agreed;
    accuracy.top_k_rows = rows;
    return accuracy;
  };
  AccuracyBudget budget;
  budget.set_top_k({"logits", 1, 0.98});
  const std::vector<OutputAccuracy> so_far{scores("output['logits']", 7, 10)};
  const std::vector<OutputAccuracy> ninety{scores("output['logits']", 0, 90)};
  const std::vector<OutputAccuracy> more{scores("output['logits']", 0, 190)};
  const std::vector<OutputAccuracy> other{scores("output['hidden']", 0, 90)};
  CHECK(budget.already_missed(so_far, ninety));      // 97 of 100 at best
  CHECK_FALSE(budget.already_missed(so_far, more));  // 197 of 200 at best
  // Rows not counted (or of another output) bound nothing: a share may still rise.
  CHECK_FALSE(budget.already_missed(so_far));
  CHECK_FALSE(budget.already_missed(so_far, other));
  // An output the budget does not take as class scores never ends a check by its agreement.
  const std::vector<OutputAccuracy> hidden{scores("output['hidden']", 0, 10)};
  CHECK_FALSE(budget.already_missed(hidden, other));
}

TEST_CASE("Without baseline outputs an accuracy budget cannot be judged: no candidate is "
          "selected unchecked",
          "[strategy][accuracy]") {
  FakeModel model;
  model.baseline.reset();  // no baseline (its factory throws): nothing to compare with
  auto strategy =
      make_strategy(model, {reduced("Int8", 0.0, 1.0, 1.0), FakeBackend("Plain", 2.0)},
                    with_budget(AccuracyBudget{}.set_min_cosine(0.999).set_min_samples(8)));
  try {
    (void)strategy.tune(model, samples_of_one_shape(8));
    FAIL("tune() returned");
  } catch (const NoCorrectBackendError& error) {
    REQUIRE(error.report() != nullptr);
    for (const char* name : {"Int8()", "Plain()"}) {
      CHECK(row_of(*error.report(), name).status == CandidateStatus::skipped);
      CHECK_THAT(row_of(*error.report(), name).reason,
                 Catch::Contains("nothing to check a candidate's outputs against"));
    }
  }
}

TEST_CASE("An accuracy budget judges only reduced-precision candidates: a full-precision one "
          "keeps its tolerance",
          "[strategy][accuracy]") {
  FakeModel model;
  FakeBehaviour off{"OffByOnePercent", {4.0}};
  off.output_offset = 0.01;
  auto strategy =
      make_strategy(model, {FakeBackend(off)},
                    with_budget(AccuracyBudget{}.set_max_relative_error(0.5).set_min_samples(8)));
  const TuneReport report = strategy.tune(model, samples_of_one_shape(8)).report;
  CHECK(row_of(report, "OffByOnePercent()").status == CandidateStatus::incorrect);
  CHECK_FALSE(row_of(report, "OffByOnePercent()").judged_by_budget);
  CHECK(report.baseline_selected);
}

TEST_CASE("An accuracy budget is checked on at least its count of samples: fewer is an error, "
          "and the time-bounded reference pass never cuts below it",
          "[strategy][accuracy]") {
  FakeModel model;
  const AccuracyBudget budget = AccuracyBudget{}.set_min_cosine(0.999);  // 100 samples
  auto few = make_strategy(model, {reduced("Int8", 0.0)}, with_budget(budget));
  CHECK_THROWS_WITH(few.tune(model, samples_of_one_shape(99)),
                    Catch::Contains("checked on at least 100 held-out samples, and 99 were given"));

  // The baseline takes 10 ms a call: 150 samples take 1.5 s, and half of a 0.6 s budget fits 30.
  auto bounded =
      make_strategy(model, {reduced("Int8", 0.0)},
                    with_budget(budget).set_profiling(ProfilingConfig{}.set_time_budget_ms(600.0)));
  const TuneReport report = bounded.tune(model, samples_of_one_shape(150)).report;
  REQUIRE(report.checked_samples);
  CHECK(*report.checked_samples == 100);

  auto unbudgeted =
      make_strategy(model, {reduced("Int8", 0.0)},
                    StrategyConfig{}.set_profiling(ProfilingConfig{}.set_time_budget_ms(600.0)));
  const TuneReport cut = unbudgeted.tune(model, samples_of_one_shape(150)).report;
  REQUIRE(cut.checked_samples);
  CHECK(*cut.checked_samples < 100);
}

TEST_CASE("The budget judges each measure on its worst output and counts top-k agreement on the "
          "class scores it names",
          "[accuracy]") {
  const auto output = [](std::string path, double relative, double cosine, std::size_t agreed,
                         std::size_t rows) {
    OutputAccuracy accuracy{std::move(path)};
    accuracy.relative_error = relative;
    accuracy.cosine = cosine;
    accuracy.top_k_agreed = agreed;
    accuracy.top_k_rows = rows;
    return accuracy;
  };
  const std::vector<OutputAccuracy> outputs{output("output['logits']", 0.02, 0.9999, 97, 100),
                                            output("output['hidden']", 0.05, 0.9990, 0, 0)};

  AccuracyBudget budget;
  budget.set_max_relative_error(0.1).set_min_cosine(0.999).set_top_k({"logits", 1, 0.98});
  CHECK(budget.measures_top_k("output['logits']"));
  CHECK_FALSE(budget.measures_top_k("output['hidden']"));
  CHECK_FALSE(budget.measures_top_k("output['logits_extra']"));
  const AccuracyVerdict verdict = budget.judge(outputs);
  CHECK_FALSE(verdict.within);
  CHECK(verdict.text == "output['logits']: top-1 agreement 97 % (97 of 100) < 98 % (within: "
                        "output['hidden']: relative error 0.05 <= 0.1; output['hidden']: cosine "
                        "0.999000 >= 0.999)");

  budget.set_top_k({"logits", 1, 0.95});
  const AccuracyVerdict within = budget.judge(outputs);
  CHECK(within.within);
  CHECK(within.text == "output['hidden']: relative error 0.05 <= 0.1; output['hidden']: cosine "
                       "0.999000 >= 0.999; output['logits']: top-1 agreement 97 % (97 of 100) >= "
                       "95 %");

  // Not named: the only output with class scores counts; two of them must be told apart.
  AccuracyBudget unnamed;
  unnamed.set_top_k({"", 5, 0.9});
  CHECK(unnamed.judge(outputs).within);
  const std::vector<OutputAccuracy> two{output("output[0]", 0, 1, 10, 10),
                                        output("output[1]", 0, 1, 10, 10)};
  CHECK_THAT(unnamed.judge(two).text, Catch::Contains("2 outputs have class scores; name the one"));
  AccuracyBudget missing;
  missing.set_top_k({"scores", 1, 0.9});
  CHECK_THAT(missing.judge(outputs).text,
             Catch::Contains("no output with 'scores' to count top-1 agreement on") &&
                 Catch::Contains("among output['logits']; output['hidden']"));

  // A NaN cosine (a broken output) is the worst there is.
  const std::vector<OutputAccuracy> nan{output("output[0]", 0.0, 1.0, 0, 0),
                                        output("output[1]", 0.0, std::nan(""), 0, 0)};
  const AccuracyVerdict broken = AccuracyBudget{}.set_min_cosine(0.5).judge(nan);
  CHECK_FALSE(broken.within);
  CHECK(broken.text == "output[1]: cosine nan < 0.5");

  CHECK(budget.describe() == "relative error <= 0.1; cosine >= 0.999; top-1 agreement >= 95 % "
                             "(logits); on >= 100 samples");
}

TEST_CASE("Accuracy budgets are refused when they measure nothing or out of range, and are part "
          "of the tuning cache's key",
          "[accuracy][cache]") {
  CHECK_THROWS_WITH(StrategyConfig{}.set_accuracy_budget(AccuracyBudget{}),
                    Catch::Contains("an accuracy budget needs a measure"));
  CHECK_THROWS_WITH(AccuracyBudget{}.set_min_cosine(1.5), Catch::Contains("in [-1, 1], got 1.5"));
  CHECK_THROWS_WITH(AccuracyBudget{}.set_max_relative_error(-1.0), Catch::Contains("in [0, 1e6]"));
  CHECK_THROWS_WITH(AccuracyBudget{}.set_top_k({"", 0, 0.9}), Catch::Contains("k >= 1"));
  CHECK_THROWS_WITH(AccuracyBudget{}.set_top_k({"", 1, 0.0}), Catch::Contains("in (0, 1]"));
  CHECK_THROWS_WITH(AccuracyBudget{}.set_min_samples(0), Catch::Contains("at least one sample"));
  CHECK_THROWS(AccuracyBudget{}.set_min_cosine(std::nan("")));

  const nlohmann::json none = settings_key(StrategyConfig{});
  CHECK_FALSE(none.contains("accuracy_budget"));
  const nlohmann::json strict = settings_key(with_budget(AccuracyBudget{}.set_min_cosine(0.999)));
  const nlohmann::json loose = settings_key(with_budget(AccuracyBudget{}.set_min_cosine(0.99)));
  CHECK(strict != none);
  CHECK(strict != loose);
  CHECK(strict == settings_key(with_budget(AccuracyBudget{}.set_min_cosine(0.999))));
  CHECK(strict["accuracy_budget"]["min_samples"] == 100);
}

TEST_CASE("A report judged by an accuracy budget keeps its measures and verdicts through JSON",
          "[report][accuracy]") {
  FakeModel model;
  auto strategy = make_strategy(
      model, {reduced("Int8", 0.01, 0.9995), reduced("Drifting", 0.01, 0.5)},
      with_budget(AccuracyBudget{}.set_min_cosine(0.999).set_top_k({}).set_min_samples(8)));
  const TuneReport report = strategy.tune(model, samples_of_one_shape(8)).report;
  const TuneReport back = report_from_json(to_json(report));
  CHECK(back.accuracy_budget == report.accuracy_budget);
  for (const std::string name : {"Int8()", "Drifting()"}) {
    const CandidateReport& before = row_of(report, name);
    const CandidateReport& after = row_of(back, name);
    CHECK(after.judged_by_budget);
    CHECK(after.accuracy_verdict == before.accuracy_verdict);
    REQUIRE(after.accuracy.size() == 1);
    CHECK(after.accuracy[0].cosine == before.accuracy[0].cosine);
    CHECK(after.accuracy[0].relative_error == before.accuracy[0].relative_error);
    // Drifting's check ended at its first sample (its cosine had missed the budget).
    const std::size_t rows = name == "Int8()" ? 8 : 1;
    CHECK(after.accuracy[0].top_k_rows == rows);
    CHECK(after.accuracy[0].top_k_agreed == rows);
  }
  CHECK(row_of(report, "Int8()").accuracy_verdict ==
        "output: cosine 0.999500 >= 0.999; output: top-1 agreement 100 % (8 of 8) >= 98 %");
}

TEST_CASE("A top-k budget with k at least the classes measures nothing and is never met",
          "[accuracy]") {
  // Before: top10=99% on a 10-class output said "top-10 agreement 100 % (6 of 6) >= 99 %" for
  // any candidate, right or wrong.
  OutputAccuracy ten{"output"};
  ten.top_k_agreed = 6;
  ten.top_k_rows = 6;
  ten.top_k_classes = 10;
  const std::vector<OutputAccuracy> outputs{ten};
  for (const int k : {10, 1000}) {
    INFO(k);
    AccuracyBudget budget;
    budget.set_top_k({"", k, 0.99});
    const AccuracyVerdict verdict = budget.judge(outputs);
    CHECK_FALSE(verdict.within);
    CHECK_THAT(verdict.text, Catch::Contains(fmt::format(
                                 "output: top-{} agreement measures nothing on 10 classes", k)));
  }
  AccuracyBudget below;
  below.set_top_k({"", 9, 0.99});
  CHECK(below.judge(outputs).within);
}
