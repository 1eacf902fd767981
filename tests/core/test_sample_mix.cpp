// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Tuning over a mix of shapes (core/measure/sample_mix.hpp): the weights decide, each shape's
// first call in a block pays for the change, and no shape goes unchecked.
#include "support/fake_backend.hpp"
#include "support/report_rows.hpp"
#include <aitune/core/report/markdown.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace aitune;
using namespace aitune::testing;
using Catch::Detail::Approx;

namespace {

// Samples of 100 and above stand for inputs of a length (FakeBackend::shape_of).
constexpr double short_input = 150.0;  // "length 100"
constexpr double long_input = 250.0;   // "length 200"

/// A backend of `short_ms` on short inputs and `long_ms` on long ones.
FakeBackend by_length(std::string name, double short_ms, double long_ms) {
  FakeBehaviour behaviour{std::move(name)};
  behaviour.latency_of_sample = [=](double sample) { return sample >= 200.0 ? long_ms : short_ms; };
  return FakeBackend(behaviour);
}

FakeModel model_by_length() {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager"};
  model.baseline->latency_of_sample = [](double) { return 10.0; };
  return model;
}

StrategyConfig weighted(std::vector<double> weights, Schedule schedule = Schedule::interleaved) {
  return StrategyConfig{}.set_profiling(
      ProfilingConfig{}.set_schedule(schedule).set_sample_weights(std::move(weights)));
}

}  // namespace

// A is fastest on short inputs, B on long ones: which serves the mix better depends on the mix
// alone. A = 1 and 8 ms, B = 3 and 4 ms: at 90 % short A costs 1.7 ms a request and B 3.1; at 20 %
// short A costs 6.6 and B 3.8.
TEST_CASE("The mix's weights decide between a backend fast on short inputs and one fast on long",
          "[strategy][shapes]") {
  const std::vector<double> samples{short_input, long_input};
  const auto schedule = GENERATE(Schedule::interleaved, Schedule::sequential);
  CAPTURE(to_string(schedule));
  const auto tune = [&](std::vector<double> weights) {
    const FakeModel model = model_by_length();
    auto strategy = make_strategy(model, {by_length("A", 1.0, 8.0), by_length("B", 3.0, 4.0)},
                                  weighted(std::move(weights), schedule));
    return strategy.tune(model, samples).report;
  };

  const TuneReport mostly_short = tune({0.9, 0.1});
  CHECK(mostly_short.selected == "A()");
  const CandidateReport& a = row_of(mostly_short, "A()");
  REQUIRE(a.shape_medians_ms.size() == 2);
  CHECK(a.shape_medians_ms[0] == Approx(1.0));
  CHECK(a.shape_medians_ms[1] == Approx(8.0));
  REQUIRE(a.latency.has_value());
  CHECK(a.latency->median == Approx(1.7));  // what the mix costs, not a median of mixed calls
  REQUIRE(mostly_short.measurement.shapes.size() == 2);
  CHECK(mostly_short.measurement.shapes[0].shape == "length 100");
  CHECK(mostly_short.measurement.shapes[0].weight == Approx(0.9));
  CHECK(mostly_short.measurement.shapes[1].shape == "length 200");
  CHECK(mostly_short.measurement.shapes[1].weight == Approx(0.1));

  const TuneReport mostly_long = tune({0.2, 0.8});
  CHECK(mostly_long.selected == "B()");
  CHECK(row_of(mostly_long, "B()").latency->median == Approx(3.8));
  // The baseline's 10 ms at either length: its ratio is the mix's.
  REQUIRE(row_of(mostly_long, "B()").speedup.has_value());
  CHECK(*row_of(mostly_long, "B()").speedup == Approx(10.0 / 3.8).epsilon(0.01));
}

TEST_CASE("Without weights each sample weighs the same: a shape weighs as many samples as it has",
          "[strategy][shapes]") {
  const FakeModel model = model_by_length();
  // One short sample, three long: 25 % short, so B (3.75 ms) serves the mix better than A (6.25).
  const std::vector<double> samples{short_input, long_input, long_input + 1, long_input + 2};
  auto strategy = make_strategy(model, {by_length("A", 1.0, 8.0), by_length("B", 3.0, 4.0)});
  const TuneReport report = strategy.tune(model, samples).report;
  CHECK(report.selected == "B()");
  REQUIRE(report.measurement.shapes.size() == 2);
  CHECK(report.measurement.shapes[0].weight == Approx(0.25));
  CHECK(report.measurement.shapes[1].samples == 3);
}

// A shape change costs its first call 50 ms (a compiled model re-specialising, caches refilled):
// a block whose discarded call ran at another shape than its timed calls would time that cost.
TEST_CASE("Each shape's first call in a block is the one discarded, so a shape change is never "
          "timed",
          "[strategy][shapes]") {
  FakeModel model = model_by_length();
  auto last_length = std::make_shared<double>(0.0);
  FakeBehaviour changing{"Changing"};
  changing.latency_of_sample = [last_length](double sample) {
    const double length = std::floor(sample / 100.0);
    const double cost = length == *last_length ? 1.0 : 51.0;
    *last_length = length;
    return cost;
  };
  auto strategy = make_strategy(model, {FakeBackend(changing)});
  const std::vector<double> samples{short_input, long_input, short_input + 1, long_input + 1};
  const TuneReport report = strategy.tune(model, samples).report;
  const CandidateReport& row = row_of(report, "Changing()");
  REQUIRE(row.status == CandidateStatus::ok);
  REQUIRE(!row.samples_ms.empty());
  CHECK(*std::max_element(row.samples_ms.begin(), row.samples_ms.end()) == Approx(1.0));
  CHECK(report.selected == "Changing()");
}

TEST_CASE("Samples of weight 0 are checked, never timed, and a bounded reference pass still checks "
          "every shape",
          "[strategy][shapes][budget]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {100.0}};
  // Sample 0 (weight 0) stands for the range's bound; the only long input is sample 100, and 20
  // short ones follow.
  std::vector<double> samples{50.0};
  std::vector<double> weights{0.0};
  for (int i = 0; i < 99; ++i) {
    samples.push_back(short_input);
    weights.push_back(1.0);
  }
  samples.push_back(long_input);
  weights.push_back(1.0);
  samples.insert(samples.end(), 20, short_input + 1);
  weights.insert(weights.end(), 20, 1.0);
  FakeBehaviour a{"A", {1.0}};
  auto strategy = make_strategy(
      model, {FakeBackend(a)},
      StrategyConfig{}.set_profiling(
          ProfilingConfig{}.set_time_budget_ms(20'000.0).set_sample_weights(weights)));
  const TuneReport report = strategy.tune(model, samples).report;
  // Half the budget fits 100 calls of 100 ms; the long input's first sample is the 101st.
  REQUIRE(report.checked_samples.has_value());
  CHECK(*report.checked_samples == 101);
  CHECK(row_of(report, "A()").status == CandidateStatus::ok);
  // The bound ran once, in the check; the race timed only the shapes of weight.
  CHECK(std::count(a.samples_seen->begin(), a.samples_seen->end(), 50.0) == 1);
  CHECK(std::count(a.samples_seen->begin(), a.samples_seen->end(), long_input) > 1);
  REQUIRE(report.measurement.shapes.size() == 3);
  CHECK(report.measurement.shapes[2].weight == 0.0);
  CHECK(report.measurement.shapes[2].shape.empty());
  CHECK_THAT(render_table(report), Catch::Contains("checked, not timed: (one shape)"));
}

TEST_CASE("The report states the shapes, their weights and what the selected costs at each, and "
          "keeps them through JSON",
          "[strategy][shapes][report]") {
  const FakeModel model = model_by_length();
  auto strategy = make_strategy(model, {by_length("A", 1.0, 8.0), by_length("B", 3.0, 4.0)},
                                weighted({3.0, 1.0}));
  TuneReport report = strategy.tune(model, std::vector<double>{short_input, long_input}).report;
  report.measurement.serves = "input_ids [1, 8..256]";
  const std::string table = render_table(report);
  CHECK_THAT(table, Catch::Contains("shapes: length 100 weight 0.75 (1 sample), selected 1.000 ms; "
                                    "length 200 weight 0.25 (1 sample), selected 8.000 ms"));
  CHECK_THAT(table, Catch::Contains("serves: input_ids [1, 8..256]"));
  CHECK_THAT(render_markdown(report), Catch::Contains("length 200 weight 0.25"));
  const nlohmann::json json = to_json(report);
  CHECK(json.at("measurement").at("shapes").size() == 2);
  CHECK(json.at("measurement").at("serves") == "input_ids [1, 8..256]");
  const TuneReport back = report_from_json(json);
  CHECK(to_json(back) == json);
  CHECK(row_of(back, "A()").shape_medians_ms == row_of(report, "A()").shape_medians_ms);
  // One shape: nothing more in the JSON than before shapes were weighed.
  const TuneReport plain =
      make_strategy(model, {by_length("A", 1.0, 8.0)}).tune(model, std::vector<double>{1.0}).report;
  CHECK_FALSE(to_json(plain).at("measurement").contains("shapes"));
  CHECK_FALSE(to_json(plain).at("candidates").at(0).contains("shape_medians_ms"));
}

TEST_CASE("The weights are part of the settings a cached decision is keyed by", "[shapes][cache]") {
  const auto key = [](std::vector<double> weights) {
    return settings_key(
        StrategyConfig{}.set_profiling(ProfilingConfig{}.set_sample_weights(std::move(weights))));
  };
  CHECK(key({3.0, 1.0}) == key({3.0, 1.0}));
  CHECK(key({3.0, 1.0}) != key({1.0, 3.0}));
  CHECK(key({}) == settings_key(StrategyConfig{}));
  CHECK_FALSE(key({}).at("measurement").contains("sample_weights"));
}

TEST_CASE("Weights that cannot make a mix are refused with what is wrong", "[shapes][config]") {
  CHECK_THROWS_WITH(ProfilingConfig{}.set_sample_weights({1.0, -1.0}),
                    Catch::Contains("sample 1's weight is -1"));
  CHECK_THROWS_AS(ProfilingConfig{}.set_sample_weights({std::nan("")}), ConfigError);
  const FakeModel model = model_by_length();
  auto counted = make_strategy(model, {by_length("A", 1.0, 8.0)}, weighted({1.0, 2.0, 3.0}));
  CHECK_THROWS_WITH(counted.tune(model, std::vector<double>{short_input, long_input}),
                    Catch::Contains("3 weights for 2 samples"));
  auto zero = make_strategy(model, {by_length("A", 1.0, 8.0)}, weighted({0.0, 0.0}));
  CHECK_THROWS_WITH(zero.tune(model, std::vector<double>{short_input, long_input}),
                    Catch::Contains("every sample weighs 0"));
}

TEST_CASE("Weights whose sum would overflow still share the traffic by their ratios",
          "[shapes][config]") {
  // Before: 1e308 + 1e308 summed to inf, every shape weighed 0, nothing was timed, and the
  // tuning said no candidate beat the baseline.
  const std::vector<std::string> labels{"1x4", "1x32", "1x32"};
  const SampleMix huge = SampleMix::of(labels, std::vector<double>{1e308, 1e308, 1e308});
  REQUIRE(huge.timed().size() == 2);
  CHECK(huge.timed()[0].weight == Approx(1.0 / 3.0));
  CHECK(huge.timed()[1].weight == Approx(2.0 / 3.0));
  const SampleMix mixed = SampleMix::of(labels, std::vector<double>{1.7e308, 0.0, 0.85e308});
  REQUIRE(mixed.timed().size() == 2);
  CHECK(mixed.timed()[0].weight == Approx(2.0 / 3.0));
  CHECK(mixed.checked_only().size() == 1);  // sample 1, of weight 0
  const SampleMix tiny = SampleMix::of(labels, std::vector<double>{4.9e-324, 4.9e-324, 0.0});
  CHECK(tiny.timed()[0].weight == Approx(0.5));
  const FakeModel model = model_by_length();
  auto strategy = make_strategy(model, {by_length("A", 1.0, 8.0)}, weighted({1e308, 1e308}));
  const auto result = strategy.tune(model, std::vector<double>{short_input, long_input});
  CHECK(result.report.selected == "A()");
  CHECK(result.report.measurement.shapes.size() == 2);
}
