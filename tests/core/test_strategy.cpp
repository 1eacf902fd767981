// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The MinLatencyStrategy flow on fake backends and a virtual clock.
#include "support/fake_backend.hpp"
#include <aitune/core/report/markdown.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

using namespace aitune;
using namespace aitune::testing;
using Catch::Detail::Approx;

namespace {

StrategyConfig checks_off() {
  return StrategyConfig{}.enable_performance_validation(false).enable_correctness_check(false);
}

FakeBackend failing_build(std::string name) {
  FakeBehaviour behaviour;
  behaviour.name = std::move(name);
  behaviour.fail_build = true;
  return FakeBackend(behaviour);
}

FakeBackend throwing_on_call(std::string name, std::size_t call, double latency_ms = 1.0) {
  FakeBehaviour behaviour;
  behaviour.name = std::move(name);
  behaviour.latencies_ms = {latency_ms};
  behaviour.throw_on_call = call;
  return FakeBackend(behaviour);
}

FakeBackend wrong_outputs(std::string name, double latency_ms = 1.0) {
  FakeBehaviour behaviour;
  behaviour.name = std::move(name);
  behaviour.latencies_ms = {latency_ms};
  behaviour.output_offset = 0.5;
  return FakeBackend(behaviour);
}

const CandidateReport& entry(const TuneReport& report, std::string_view backend) {
  const CandidateReport* found = report.find(backend);
  if (found == nullptr) FAIL("no report entry for " << backend);
  return *found;
}

}  // namespace

TEST_CASE("With validation and checks off, the faster of two candidates is selected",
          "[strategy]") {
  FakeModel model;
  auto strategy =
      make_strategy(model, {FakeBackend("Slow", 5.0), FakeBackend("Fast", 2.0)}, checks_off());
  auto result = strategy.tune(model, one_sample(), "net");
  CHECK(result.report.selected == "Fast()");
  CHECK_FALSE(result.baseline_selected());
  CHECK(result.backend.describe() == "Fast()");
  CHECK(result.backend.is_active());
  CHECK_FALSE(result.report.baseline.has_value());
  CHECK(strategy.perf_validation_results().empty());
  CHECK(entry(result.report, "Fast()").selected);
  CHECK_FALSE(entry(result.report, "Slow()").selected);
  CHECK(entry(result.report, "Fast()").latency->median == Approx(2.0));
}

TEST_CASE("With validation on, the baseline is profiled in pre_tune but is not a candidate",
          "[strategy]") {
  FakeModel model;  // baseline TorchEager at 10 ms
  auto strategy = make_strategy(
      model, {FakeBackend("Frozen", 4.0), FakeBackend("TorchEager", 12.0)});  // user's eager
  auto result = strategy.tune(model, one_sample());
  REQUIRE(strategy.baseline_result().has_value());
  CHECK(strategy.baseline_result()->latency == Approx(10.0));
  REQUIRE(result.report.baseline.has_value());
  CHECK(result.report.baseline->backend == "TorchEager()");
  CHECK(result.report.baseline->latency->median == Approx(10.0));
  // The user's TorchEager stays an ordinary candidate; the baseline is not added to the list.
  REQUIRE(result.report.candidates.size() == 2);
  CHECK(result.report.candidates[1].backend == "TorchEager()");
  CHECK(result.report.candidates[1].status == CandidateStatus::ok);
  CHECK(result.report.candidates[1].speedup == Approx(10.0 / 12.0));
  CHECK(result.report.selected == "Frozen()");
  CHECK(strategy.perf_validation_results().size() == 2);
}

TEST_CASE("With validation on, a best candidate slower than the baseline loses to it",
          "[strategy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {3.0}};
  auto strategy = make_strategy(model, {FakeBackend("A", 5.0), FakeBackend("B", 4.0)});
  auto result = strategy.tune(model, one_sample());
  CHECK(result.baseline_selected());
  CHECK(result.report.selected == "TorchEager()");
  CHECK(result.report.baseline->selected);
  CHECK(result.backend.is_active());
  CHECK(result.backend.infer(1.0) == 2.0);
  CHECK(result.report.selected_candidate() == nullptr);
}

TEST_CASE("With validation on, a candidate that ties with the baseline does not displace it",
          "[strategy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {4.0}};
  auto strategy = make_strategy(model, {FakeBackend("Same", 4.0)});
  auto result = strategy.tune(model, one_sample());
  CHECK(result.baseline_selected());
  REQUIRE(strategy.perf_validation_results().size() == 1);
  CHECK(strategy.perf_validation_results()[0].speedup == Approx(1.0));
  CHECK(strategy.perf_validation_results()[0].passed);  // speedup >= 1
}

TEST_CASE("With validation on and every candidate failing, the baseline is selected and works",
          "[strategy]") {
  FakeModel model;
  auto strategy =
      make_strategy(model, {failing_build("A"), wrong_outputs("B"), throwing_on_call("C", 5)});
  auto result = strategy.tune(model, one_sample(), "net");
  CHECK(result.baseline_selected());
  CHECK(result.report.selected == "TorchEager()");
  CHECK(result.backend.state() == BackendState::active);
  CHECK(result.backend.infer(3.0) == 6.0);
  CHECK(strategy.perf_validation_results().empty());
}

TEST_CASE("With validation off, the best candidate wins even if the baseline is faster",
          "[strategy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {1.0}};
  auto strategy = make_strategy(model, {FakeBackend("A", 5.0), FakeBackend("B", 4.0)},
                                StrategyConfig{}.enable_performance_validation(false));
  auto result = strategy.tune(model, one_sample());
  CHECK_FALSE(result.baseline_selected());
  CHECK(result.report.selected == "B()");
  CHECK_FALSE(strategy.baseline_result().has_value());
  CHECK(strategy.perf_validation_results().empty());
  // The baseline was still built for its reference outputs, but not measured.
  REQUIRE(result.report.baseline.has_value());
  CHECK_FALSE(result.report.baseline->latency.has_value());
}

TEST_CASE("With validation off and every candidate failing, tune throws and lists them",
          "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {failing_build("A"), wrong_outputs("B")},
                                StrategyConfig{}.enable_performance_validation(false));
  CHECK_THROWS_AS(strategy.tune(model, one_sample()), NoCorrectBackendError);
  CHECK_THROWS_WITH(strategy.tune(model, one_sample(), "net"),
                    Catch::Contains("no correct backend was found") && Catch::Contains("net") &&
                        Catch::Contains("A(): build failed: scripted build failure") &&
                        Catch::Contains("B(): incorrect"));
  // The root of the hierarchy catches it.
  CHECK_THROWS_AS(strategy.tune(model, one_sample()), Error);
}

TEST_CASE("A baseline that fails to build leaves nothing to check against: no candidate is "
          "selected unchecked",
          "[strategy]") {
  // Before: the tuning went on, and a candidate whose outputs were never compared with anything
  // was selected (a wrong OpenVINO IR among them, when the baseline failed on a range's bounds).
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {1.0}, true, std::nullopt, 0.0};
  SinkRecorder sink;
  auto strategy = make_strategy(model, {FakeBackend("A", 5.0), FakeBackend("B", 4.0)}, {}, &sink);
  try {
    (void)strategy.tune(model, one_sample());
    FAIL("tune selected a candidate never compared with a reference");
  } catch (const NoCorrectBackendError& error) {
    CHECK_THAT(error.what(), Catch::Contains("(the baseline TorchEager() failed: build failed: "));
    REQUIRE(error.report() != nullptr);
    for (const CandidateReport& row : error.report()->candidates) {
      CHECK(row.status == CandidateStatus::skipped);
      CHECK_THAT(row.reason, Catch::Contains("not tried: the baseline TorchEager() failed") &&
                                 Catch::Contains("none is selected unchecked"));
    }
  }
  CHECK(sink.contains("WARNING: baseline TorchEager() failed (build: "));
}

TEST_CASE("A baseline that fails to build, the check turned off: tuning goes on with the "
          "candidates",
          "[strategy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {1.0}, true, std::nullopt, 0.0};
  SinkRecorder sink;
  auto strategy = make_strategy(model, {FakeBackend("A", 5.0), FakeBackend("B", 4.0)},
                                StrategyConfig{}.enable_correctness_check(false), &sink);
  auto result = strategy.tune(model, one_sample());
  CHECK(sink.contains("WARNING: baseline TorchEager() failed (build: "));
  CHECK(result.report.selected == "B()");
  CHECK_FALSE(strategy.baseline_result().has_value());
  CHECK(strategy.perf_validation_results().empty());
  REQUIRE(result.report.baseline.has_value());
  CHECK(result.report.baseline->status == CandidateStatus::build_failed);
  CHECK_FALSE(entry(result.report, "B()").speedup.has_value());
}

TEST_CASE("A baseline that fails to measure is a warning; tuning goes on with the candidates",
          "[strategy]") {
  FakeModel model;
  // Call 1 computes the reference output; call 3 is inside the warm-up.
  model.baseline = FakeBehaviour{"TorchEager", {1.0}, false, 3, 0.0};
  SinkRecorder sink;
  auto strategy =
      make_strategy(model, {FakeBackend("A", 5.0), wrong_outputs("Wrong", 0.1)}, {}, &sink);
  auto result = strategy.tune(model, one_sample());
  CHECK(sink.contains("WARNING: baseline TorchEager() failed (measure: "));
  CHECK(result.report.baseline->status == CandidateStatus::measure_failed);
  CHECK_THAT(result.report.baseline->reason, Catch::Contains("scripted failure on call 3"));
  // The reference outputs survived, so the wrong candidate is still caught.
  CHECK(entry(result.report, "Wrong()").status == CandidateStatus::incorrect);
  CHECK(result.report.selected == "A()");
  CHECK_FALSE(result.baseline_selected());
}

TEST_CASE("A candidate that throws in build is marked failed and the others are unaffected",
          "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {failing_build("Broken"), FakeBackend("Good", 2.0)});
  auto result = strategy.tune(model, one_sample());
  const auto& broken = entry(result.report, "Broken()");
  CHECK(broken.status == CandidateStatus::build_failed);
  CHECK(broken.reason == "scripted build failure");
  CHECK_FALSE(broken.latency.has_value());
  CHECK(entry(result.report, "Good()").status == CandidateStatus::ok);
  CHECK(result.report.selected == "Good()");
}

TEST_CASE("A candidate that throws in the correctness check is marked incorrect", "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {throwing_on_call("Flaky", 1), FakeBackend("Good", 2.0)});
  auto result = strategy.tune(model, one_sample());
  const auto& flaky = entry(result.report, "Flaky()");
  CHECK(flaky.status == CandidateStatus::incorrect);
  CHECK_THAT(flaky.reason,
             Catch::Contains("correctness check") && Catch::Contains("scripted failure on call 1"));
  CHECK(result.report.selected == "Good()");
}

TEST_CASE("A candidate with wrong outputs is rejected by the correctness check", "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {wrong_outputs("Wrong", 0.5), FakeBackend("Good", 2.0)});
  const std::vector<double> samples{1.0, 2.0};
  auto result = strategy.tune(model, samples);
  const auto& wrong = entry(result.report, "Wrong()");
  CHECK(wrong.status == CandidateStatus::incorrect);
  CHECK(wrong.reason == "sample 1 of 2: max abs error 0.5");
  CHECK(result.report.selected == "Good()");
}

TEST_CASE("A candidate that throws during measurement is marked failed and left deactivated",
          "[strategy]") {
  FakeModel model;
  // Call 1 is the correctness check; call 15 lies in the timed calls (10 warm-up from call 2).
  auto strategy =
      make_strategy(model, {throwing_on_call("Dies", 15, 0.5), FakeBackend("Good", 2.0)});
  auto result = strategy.tune(model, one_sample());
  const auto& dies = entry(result.report, "Dies()");
  CHECK(dies.status == CandidateStatus::measure_failed);
  CHECK(dies.reason == "scripted failure on call 15");
  CHECK(result.report.selected == "Good()");
}

TEST_CASE("Failed and losing candidates are left deactivated; the winner stays active",
          "[strategy]") {
  FakeModel model;
  auto events = std::make_shared<std::vector<std::string>>();
  FakeBehaviour first{"First", {3.0}};
  FakeBehaviour broken{"Broken", {1.0}};
  broken.fail_build = true;
  FakeBehaviour best{"Best", {1.0}};
  FakeBehaviour later{"Later", {2.0}};
  for (FakeBehaviour* behaviour : {&first, &broken, &best, &later})
    behaviour->events = events;
  auto strategy = make_strategy(
      model, {FakeBackend(first), FakeBackend(broken), FakeBackend(best), FakeBackend(later)});
  auto result = strategy.tune(model, one_sample());
  CHECK(result.report.selected == "Best()");
  CHECK(result.backend.is_active());
  CHECK(*events ==
        std::vector<std::string>{"Broken: deactivate", "First: deactivate", "Later: deactivate"});
}

TEST_CASE("perf_validation_results hold one entry per profiled candidate", "[strategy]") {
  FakeModel model;  // baseline 10 ms
  auto strategy = make_strategy(
      model, {FakeBackend("Half", 5.0), FakeBackend("Slower", 20.0), failing_build("Broken")});
  (void)strategy.tune(model, one_sample());
  const auto& results = strategy.perf_validation_results();
  REQUIRE(results.size() == 2);
  CHECK(results[0].backend == "Half()");
  CHECK(results[0].metric == Approx(5.0));
  CHECK(results[0].baseline_metric == Approx(10.0));
  CHECK(results[0].speedup == Approx(2.0));
  CHECK(results[0].passed);
  CHECK(results[1].backend == "Slower()");
  CHECK(results[1].speedup == Approx(0.5));
  CHECK_FALSE(results[1].passed);

  SECTION("pre_tune clears the results of an earlier run") {
    (void)strategy.tune(model, one_sample());
    CHECK(strategy.perf_validation_results().size() == 2);
  }
}

TEST_CASE("perf_validation_results get no entry for a metric that is not positive", "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("Instant", 0.0), FakeBackend("Half", 5.0)});
  auto result = strategy.tune(model, one_sample());
  REQUIRE(strategy.perf_validation_results().size() == 1);
  CHECK(strategy.perf_validation_results()[0].backend == "Half()");
  CHECK_FALSE(entry(result.report, "Instant()").speedup.has_value());
}

TEST_CASE("describe() names the strategy and lists every candidate", "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("A", 1.0), FakeBackend("B", 2.0)});
  const std::string text = strategy.describe();
  CHECK_THAT(text, Catch::StartsWith("name: Min Latency Strategy"));
  CHECK_THAT(text, Catch::Contains("1. A()") && Catch::Contains("2. B()"));
  CHECK_THAT(text, Catch::Contains("schedule: interleaved"));
  CHECK_THAT(text, Catch::Contains("race: interleaved rounds of 2 call(s) (first discarded)"));
  CHECK_THAT(text, Catch::Contains("decision: confident median rule"));
  auto sequential = make_strategy(
      model, {FakeBackend("A", 1.0)},
      StrategyConfig{}.set_profiling(ProfilingConfig{}.set_schedule(Schedule::sequential)));
  CHECK_THAT(sequential.describe(), Catch::Contains("stop rule: NumSteps(warmup=10, measured=20)"));
  CHECK_THAT(text, Catch::Contains("at batch size 1"));
}

TEST_CASE("After tuning, the sink gets a speedup line with both latencies", "[strategy]") {
  FakeModel model;  // baseline 10 ms
  SinkRecorder sink;
  auto strategy = make_strategy(model, {FakeBackend("Quick", 2.5)}, {}, &sink);
  (void)strategy.tune(model, one_sample(), "resnet");
  CHECK(sink.contains(
      "resnet: selected Quick() at 2.500 ms, 4.00x faster than the baseline TorchEager() at "
      "10.000 ms"));
  // Progress is indented by depth.
  CHECK(sink.contains("  [1/1] Quick()"));
  CHECK(sink.contains("    Quick(): latency 2.500 ms (4.00x vs baseline)"));
}

TEST_CASE("When the baseline wins, the sink says so with its description and latency",
          "[strategy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {1.25}};
  SinkRecorder sink;
  auto strategy = make_strategy(model, {FakeBackend("Slow", 2.0)}, {}, &sink);
  (void)strategy.tune(model, one_sample(), "net");
  CHECK(sink.contains("Baseline was selected: TorchEager() at 1.250 ms"));
}

TEST_CASE("A sink takes the level with each line, and the log level decides what reaches it",
          "[strategy][log]") {
  FakeModel model;
  struct Line {
    LogLevel level;
    std::string text;
  };
  const auto run = [&model](MessageSink sink, LogLevel threshold) {
    FakeStrategy strategy({failing_build("Broken"), FakeBackend("Good", 2.0)},
                          StrategyConfig{}.set_sink(std::move(sink)).set_log_level(threshold),
                          VirtualTimer(model.clock));
    (void)strategy.tune(model, one_sample(), "net");
  };
  std::vector<Line> lines;
  const auto by_level = [&lines](LogLevel level, std::string_view text) {
    lines.push_back({level, std::string(text)});
  };
  const auto count = [&lines](LogLevel level) {
    return std::count_if(lines.begin(), lines.end(),
                         [level](const Line& line) { return line.level == level; });
  };

  run(by_level, LogLevel::info);
  CHECK(count(LogLevel::info) > 3);
  REQUIRE(count(LogLevel::warning) == 1);
  const auto warning = std::find_if(
      lines.begin(), lines.end(), [](const Line& line) { return line.level == LogLevel::warning; });
  // The level is told apart, not written into the line; the indentation stays.
  CHECK(warning->text == "    build failed: scripted build failure");

  lines.clear();
  run(by_level, LogLevel::warning);
  CHECK(count(LogLevel::info) == 0);
  CHECK(count(LogLevel::warning) == 1);

  lines.clear();
  run(by_level, LogLevel::off);
  CHECK(lines.empty());

  // A sink of plain lines reads the level in the line, as before levels.
  SinkRecorder plain;
  run(plain.sink(), LogLevel::info);
  CHECK(plain.contains("    WARNING: build failed: scripted build failure"));
  CHECK(plain.contains("net: selected Good()"));
  plain.lines->clear();
  run(plain.sink(), LogLevel::warning);
  CHECK(plain.lines->size() == 1);

  // An empty sink drops everything; one from an empty std::function too.
  CHECK_FALSE(static_cast<bool>(MessageSink{}));
  CHECK_FALSE(static_cast<bool>(MessageSink(std::function<void(std::string_view)>{})));
  CHECK_FALSE(Logger(null_sink()).enabled(LogLevel::warning));
  CHECK(to_string(LogLevel::warning) == "warning");
  CHECK(parse_token<LogLevel>("info") == LogLevel::info);
}

TEST_CASE("A latency that never settles under StableWindow fails that candidate only",
          "[strategy]") {
  FakeModel model;
  FakeBehaviour jumpy;
  jumpy.name = "Jumpy";
  jumpy.latencies_ms = {1.0, 5.0};
  // StableWindow is a stop rule of the sequential schedule.
  auto config = StrategyConfig{}.set_profiling(
      ProfilingConfig{}.set_schedule(Schedule::sequential).set_stop_rule(StableWindow()));
  auto strategy = make_strategy(model, {FakeBackend(jumpy), FakeBackend("Steady", 2.0)}, config);
  auto result = strategy.tune(model, one_sample());
  CHECK(entry(result.report, "Jumpy()").status == CandidateStatus::measure_failed);
  CHECK_THAT(entry(result.report, "Jumpy()").reason, Catch::Contains("never became stable"));
  CHECK(entry(result.report, "Steady()").latency->n == 20);
  CHECK(result.report.selected == "Steady()");
}

TEST_CASE("Tuning twice starts from fresh copies of the candidates", "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("A", 1.0)});
  auto first = strategy.tune(model, one_sample());
  auto second = strategy.tune(model, one_sample());
  CHECK(first.report.selected == "A()");
  CHECK(second.report.selected == "A()");
  CHECK(first.backend.calls() == second.backend.calls());
}

TEST_CASE("Bad input to the strategy is rejected with a clear error", "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("A", 1.0)});
  CHECK_THROWS_WITH(strategy.tune(model, std::vector<double>{}),
                    Catch::Contains("at least one batch-size-1 sample"));
  FakeBackend built("Built", 1.0);
  built.build(model, one_sample());
  CHECK_THROWS_WITH(make_strategy(model, {built}),
                    Catch::Contains("Built()") && Catch::Contains("unbuilt"));
}

// Backends are user code: whatever they throw, and whatever type it is, the tuning goes on.
namespace {

FakeBehaviour throwing_in(std::string name, std::string step, double latency_ms,
                          std::shared_ptr<std::vector<std::string>> events = nullptr) {
  FakeBehaviour behaviour{std::move(name), {latency_ms}};
  behaviour.throw_in = std::move(step);
  if (events) behaviour.events = std::move(events);
  return behaviour;
}

}  // namespace

TEST_CASE("A candidate whose describe() or key() throws is named by its position, never built "
          "or selected",
          "[strategy][user_code]") {
  for (const std::string step : {"describe", "key"}) {
    INFO(step);
    FakeModel model;
    // The thrower would be the fastest by far.
    auto strategy = make_strategy(
        model, {FakeBackend("Quick", 5.0), FakeBackend(throwing_in("Thrower", step, 0.5))});
    auto result = strategy.tune(model, one_sample());
    const CandidateReport& thrower = result.report.candidates[1];
    CHECK(thrower.status == CandidateStatus::build_failed);
    CHECK_THAT(thrower.reason, Catch::Contains(step + "() threw: unknown exception"));
    if (step == "describe") CHECK(thrower.backend == "candidate #2");
    CHECK(thrower.calls == 0);
    CHECK(result.report.selected == "Quick()");
    CHECK_THAT(render_table(result.report), Catch::Contains("#2"));
  }
}

namespace {

/// The report of a tuning that must end in NoCorrectBackendError.
TuneReport report_of_failed(FakeStrategy& strategy, const FakeModel& model,
                            const std::vector<double>& samples) {
  try {
    (void)strategy.tune(model, samples);
  } catch (const NoCorrectBackendError& error) {
    REQUIRE(error.report() != nullptr);
    return *error.report();
  }
  FAIL("tune() returned");
  return {};
}

}  // namespace

TEST_CASE("A baseline factory that throws is a failed baseline, named, and no candidate is "
          "selected unchecked",
          "[strategy][user_code]") {
  FakeModel model;
  model.baseline = throwing_in("TorchEager", "make_baseline", 10.0);
  auto strategy = make_strategy(model, {FakeBackend("Quick", 2.0)});
  const TuneReport report = report_of_failed(strategy, model, one_sample());
  REQUIRE(report.baseline);
  CHECK(report.baseline->status == CandidateStatus::build_failed);
  CHECK_THAT(report.baseline->reason, Catch::Contains("making the baseline threw"));
  CHECK(report.candidates.at(0).status == CandidateStatus::skipped);
  CHECK_FALSE(render_table(report).empty());
  // With the check off there is nothing to compare, and the candidates go on.
  auto unchecked = make_strategy(
      model, {FakeBackend("Quick", 2.0)},
      StrategyConfig{}.enable_correctness_check(false).enable_performance_validation(false));
  CHECK(unchecked.tune(model, one_sample()).report.selected == "Quick()");
}

TEST_CASE("A baseline whose describe() throws is named 'baseline'", "[strategy][user_code]") {
  FakeModel model;
  model.baseline = throwing_in("TorchEager", "describe", 10.0);
  auto strategy = make_strategy(model, {FakeBackend("Quick", 2.0)});
  const TuneReport report = report_of_failed(strategy, model, one_sample());
  REQUIRE(report.baseline);
  CHECK(report.baseline->backend == "baseline");
  CHECK(report.baseline->status == CandidateStatus::build_failed);
}

TEST_CASE("A baseline whose activate() throws when it is kept is not handed back: the best "
          "candidate serves",
          "[strategy][user_code]") {
  // Measured alone (sequential schedule), the baseline is freed after pre_tune and must be
  // activated again to be handed back.
  FakeModel model;
  model.baseline = throwing_in("TorchEager", "activate", 1.0);
  auto strategy = make_strategy(
      model, {FakeBackend("Slow", 5.0)},
      StrategyConfig{}.set_profiling(ProfilingConfig{}.set_schedule(Schedule::sequential)));
  auto result = strategy.tune(model, one_sample());
  CHECK_FALSE(result.report.baseline_selected);
  CHECK(result.report.selected == "Slow()");
  CHECK(result.backend.is_active());
  CHECK(result.report.baseline->status == CandidateStatus::activate_failed);
  CHECK_THAT(result.report.baseline->reason, Catch::Contains("activate() threw"));
  CHECK_THAT(result.report.decision, Catch::Contains("could not be activated again"));
}

TEST_CASE("deactivate() runs at most once per activation, never on the backend handed back, "
          "even when it throws",
          "[strategy][user_code]") {
  auto events = std::make_shared<std::vector<std::string>>();
  FakeModel model;
  model.baseline = throwing_in("TorchEager", "deactivate", 10.0, events);
  FakeBehaviour broken = throwing_in("Broken", "deactivate", 1.0, events);
  broken.fail_build = true;
  auto strategy = make_strategy(
      model, {FakeBackend(throwing_in("Loser", "deactivate", 20.0, events)),
              FakeBackend(throwing_in("Winner", "deactivate", 2.0, events)), FakeBackend(broken)});
  auto result = strategy.tune(model, one_sample());
  CHECK(result.report.selected == "Winner()");
  CHECK(result.backend.is_active());
  for (const std::string name : {"TorchEager", "Loser", "Winner", "Broken"}) {
    const auto count = [&](const std::string& what) {
      return std::count(events->begin(), events->end(), name + ": " + what);
    };
    INFO(name << ": " << count("deactivate") << " deactivations, " << count("activate")
              << " activations");
    CHECK(count("deactivate") <= count("activate") + 1);  // built active, then each activation
  }
  // The winner was never deactivated: it is handed back as it was built.
  CHECK(std::count(events->begin(), events->end(), "Winner: deactivate") == 0);
  // The others were, once each, although every deactivate() threw.
  CHECK(std::count(events->begin(), events->end(), "Loser: deactivate") == 1);
  CHECK(std::count(events->begin(), events->end(), "TorchEager: deactivate") == 1);
}

TEST_CASE("A baseline freed after pre_tune whose deactivate() threw is not deactivated again",
          "[strategy][user_code]") {
  // Sequential schedule: the baseline is measured and freed in pre_tune; a candidate then wins.
  auto events = std::make_shared<std::vector<std::string>>();
  FakeModel model;
  model.baseline = throwing_in("TorchEager", "deactivate", 10.0, events);
  auto strategy = make_strategy(
      model, {FakeBackend("Quick", 1.0)},
      StrategyConfig{}.set_profiling(ProfilingConfig{}.set_schedule(Schedule::sequential)));
  auto result = strategy.tune(model, one_sample());
  CHECK(result.report.selected == "Quick()");
  CHECK(std::count(events->begin(), events->end(), "TorchEager: deactivate") == 1);
}

TEST_CASE("A backend whose calls measure 0 ms leaves no nan or inf in the report or the sink",
          "[strategy][user_code]") {
  for (const double baseline_ms : {0.0, 1.0}) {
    for (const double candidate_ms : {0.0, 1.0}) {
      FakeModel model;
      model.baseline = FakeBehaviour{"TorchEager", {baseline_ms}};
      SinkRecorder sink;
      auto strategy = make_strategy(
          model, {FakeBackend("Zero", candidate_ms), FakeBackend("Other", 0.0)}, {}, &sink);
      auto result = strategy.tune(model, one_sample());
      const std::string text = render_table(result.report) + sink.all() + result.report.decision;
      const std::string json = to_json(result.report).dump();
      for (const std::string bad : {"nan", "inf"}) {
        INFO("baseline " << baseline_ms << " ms, candidate " << candidate_ms << " ms\n"
                         << text << "\n"
                         << json);
        CHECK(text.find(bad) == std::string::npos);
        CHECK(json.find(bad) == std::string::npos);
      }
    }
  }
}

TEST_CASE("The library's default time budget is finite: 60 s, as the command's", "[strategy]") {
  CHECK(ProfilingConfig{}.time_budget_ms() == default_time_budget_ms);
  CHECK(default_time_budget_ms == 60'000.0);
  CHECK(StrategyConfig{}.profiling().time_budget_ms() == default_time_budget_ms);
}

TEST_CASE("When every candidate is incorrect, the decision says so (not 'could not be measured')",
          "[strategy]") {
  FakeModel model;
  auto strategy = make_strategy(model, {wrong_outputs("A", 0.1), wrong_outputs("B", 0.2)});
  const auto result = strategy.tune(model, one_sample());
  CHECK(result.baseline_selected());
  CHECK(result.report.decision == "every candidate failed (see their reasons)");
  CHECK(render_table(result.report).find("could not be measured") == std::string::npos);
}

TEST_CASE("A failure on one sample of several names the sample, in one line", "[strategy]") {
  const std::vector<double> samples{1.0, 2.0, 3.0};
  FakeModel failing;
  failing.baseline = FakeBehaviour{"TorchEager", {1.0}, false, 2, 0.0};
  auto on_failing = make_strategy(failing, {FakeBackend("Good", 2.0)});
  const TuneReport failed = report_of_failed(on_failing, failing, samples);
  REQUIRE(failed.baseline.has_value());
  CHECK(failed.baseline->reason == "run the samples: sample 2 of 3: scripted failure on call 2");

  FakeModel model;
  FakeBehaviour traced;
  traced.name = "Traced";
  traced.throw_on_call = 3;
  traced.error_trace = "Traceback (most recent call last):\n  File \"model.py\", line 3\n";
  SinkRecorder sink;
  auto strategy = make_strategy(model, {FakeBackend(traced), FakeBackend("Good", 2.0)}, {}, &sink);
  const auto result = strategy.tune(model, samples);
  const auto& traced_entry = entry(result.report, "Traced()");
  CHECK(traced_entry.status == CandidateStatus::incorrect);
  CHECK(traced_entry.reason == "correctness check: sample 3 of 3: scripted failure on call 3");
  CHECK_FALSE(sink.contains("Traceback"));  // reasons are one line unless asked otherwise
  CHECK(entry(result.report, "Good()").status == CandidateStatus::ok);

  SECTION("with full errors on, the log also has the whole text") {
    SinkRecorder verbose;
    auto told = make_strategy(model, {FakeBackend(traced)},
                              StrategyConfig{}.enable_full_errors(true), &verbose);
    CHECK(told.tune(model, samples).baseline_selected());
    CHECK(verbose.contains("the full error: Traceback (most recent call last):"));
  }
}

TEST_CASE("A failure in the timed calls names the sample it ran", "[strategy]") {
  const std::vector<double> samples{1.0, 2.0};
  FakeModel model;
  // Calls 1-2 are the correctness check; call 15 lies in the timed calls.
  auto strategy =
      make_strategy(model, {throwing_on_call("Dies", 15, 0.5), FakeBackend("Good", 2.0)});
  const auto result = strategy.tune(model, samples);
  const auto& dies = entry(result.report, "Dies()");
  CHECK(dies.status == CandidateStatus::measure_failed);
  CHECK_THAT(dies.reason, Catch::Matches("sample [12] of 2: scripted failure on call 15"));
}

TEST_CASE("A tuning that finds nothing usable throws its report with the error", "[strategy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {1.0}, true, std::nullopt, 0.0};
  auto strategy = make_strategy(model, {failing_build("A"), throwing_on_call("B", 1)});
  try {
    (void)strategy.tune(model, one_sample(), "net");
    FAIL("tune() returned");
  } catch (const NoCorrectBackendError& error) {
    REQUIRE(error.report() != nullptr);
    const TuneReport& report = *error.report();
    CHECK(report.module == "net");
    REQUIRE(report.candidates.size() == 2);
    // With the baseline failed there is nothing to check them against: neither is tried.
    for (const CandidateReport& row : report.candidates) {
      CHECK(row.status == CandidateStatus::skipped);
      CHECK_THAT(row.reason, Catch::StartsWith("not tried: the baseline TorchEager() failed"));
    }
    REQUIRE(report.baseline.has_value());
    CHECK(report.baseline->status == CandidateStatus::build_failed);
    CHECK(report.selected.empty());
    CHECK_THAT(render_table(report), Catch::EndsWith("selected: none\n"));
  }
}

TEST_CASE("Reasons number the caller's samples from 1 and name the samples added before them",
          "[strategy]") {
  // Before: samples were counted from 0 here and from 1 elsewhere, and a layer's added samples
  // (lt::tune's range bounds, put first) shifted the number of every sample the caller gave.
  FakeModel model;
  FakeBehaviour refusing{"Refusing", {1.0}};
  refusing.refuse_sample = 3;
  FakeBehaviour failing{"Failing", {1.0}};
  failing.throw_on_call = 3;
  StrategyConfig config;
  config.set_profiling(ProfilingConfig().set_sample_names(
      SampleNames({"the range's smallest sample (1x2)", "the range's largest sample (1x64)"})));
  auto strategy = make_strategy(
      model, {FakeBackend(refusing), FakeBackend(failing), wrong_outputs("Wrong", 0.5)}, config);
  const std::vector<double> samples{1.0, 2.0, 3.0, 4.0};
  const auto result = strategy.tune(model, samples);
  CHECK(entry(result.report, "Refusing()").reason == "sample 2 of 2: scripted refusal");
  CHECK(entry(result.report, "Failing()").reason ==
        "correctness check: sample 1 of 2: scripted failure on call 3");
  CHECK(entry(result.report, "Wrong()").reason ==
        "the range's smallest sample (1x2): max abs error 0.5");
  // Without names, from 1; a SampleError's own text says the same to a caller of build.
  const SampleError refused(3, 4, "scripted refusal");
  CHECK(std::string(refused.what()) == "sample 4 of 4: scripted refusal");
  CHECK(SampleNames().of(0, 4) == "sample 1 of 4");
}

TEST_CASE("A baseline whose outputs are not finite is a warning on its row", "[strategy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {10.0}, false, std::nullopt, std::nan("")};
  SinkRecorder sink;
  auto strategy = make_strategy(model, {FakeBackend("A", 5.0)}, {}, &sink);
  const std::vector<double> samples{1.0, 2.0};
  const auto result = strategy.tune(model, samples);
  REQUIRE(result.report.baseline.has_value());
  CHECK(result.report.baseline->note == "sample 1 of 2: the reference is not finite");
  CHECK(sink.contains("WARNING: sample 1 of 2: the reference is not finite"));
  CHECK_THAT(render_table(result.report), Catch::Contains("the reference is not finite"));
}

TEST_CASE("A stop requested through the stop token cancels the tuning with its report so far",
          "[strategy]") {
  FakeModel model;
  std::stop_source stop;
  SECTION("before it starts: the baseline is prepared, no candidate is") {
    stop.request_stop();
    auto strategy = make_strategy(model, {FakeBackend("A", 5.0), FakeBackend("B", 4.0)},
                                  StrategyConfig{}.set_stop_token(stop.get_token()));
    try {
      (void)strategy.tune(model, one_sample());
      FAIL("tune() returned");
    } catch (const CancelledError& error) {
      CHECK_THAT(error.what(), Catch::Contains("the tuning was cancelled"));
      REQUIRE(error.report() != nullptr);
      CHECK(error.report()->candidates.empty());
      CHECK(error.report()->decision == "the tuning was cancelled");
    }
  }
  SECTION("during the measurement: it ends at the next call, without lane failures") {
    SinkRecorder sink;
    StrategyConfig config;
    config.set_stop_token(stop.get_token());
    auto strategy = MinLatencyStrategy<FakeBackend, VirtualTimer>(
        {FakeBackend("A", 5.0), FakeBackend("B", 4.0)},
        config.set_sink([&, lines = sink.sink()](std::string_view line) {
          lines(line);
          if (line.find("measuring") != std::string_view::npos) stop.request_stop();
        }),
        VirtualTimer(model.clock));
    CHECK_THROWS_AS(strategy.tune(model, one_sample()), CancelledError);
    CHECK_FALSE(sink.contains("measure failed"));
    CHECK(strategy.baseline_result() == std::nullopt);
  }
}

TEST_CASE("The progress callback hears each backend prepared, the measurement and the decision",
          "[strategy][progress]") {
  FakeModel model;
  std::vector<Progress> heard;
  auto strategy = make_strategy(
      model, {FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)},
      StrategyConfig{}.set_progress([&](const Progress& progress) { heard.push_back(progress); }));
  const auto result = strategy.tune(model, one_sample(), "net");
  REQUIRE(heard.size() >= 4);
  CHECK(heard[0].stage == ProgressStage::preparing);
  CHECK(heard[0].index == 0);
  CHECK(heard[0].backend == "TorchEager()");
  CHECK(heard[1].index == 1);
  CHECK(heard[1].total == 2);
  CHECK(heard[2].backend == "Fast()");
  CHECK(describe(heard[2]).starts_with("[2/2] preparing Fast()  "));
  const auto measuring = std::find_if(heard.begin(), heard.end(), [](const Progress& p) {
    return p.stage == ProgressStage::measuring && !p.leader.empty();
  });
  REQUIRE(measuring != heard.end());
  CHECK(measuring->leader == "Fast()");
  CHECK(measuring->rounds > 0);
  CHECK(measuring->calls > 0);
  CHECK(describe(*measuring).find("best so far Fast() (0.200x the baseline)") != std::string::npos);
  CHECK(heard.back().stage == ProgressStage::finished);
  CHECK(heard.back().leader == result.report.selected);
  for (std::size_t i = 1; i < heard.size(); ++i)
    CHECK(heard[i].elapsed_ms >= heard[i - 1].elapsed_ms);
  CHECK(std::isinf(heard.back().budget_ms) == false);
}

TEST_CASE("A progress callback that throws is a warning and the tuning completes",
          "[strategy][progress]") {
  FakeModel model;
  SinkRecorder recorder;
  int calls = 0;
  auto strategy = make_strategy(model, {FakeBackend("Fast", 2.0)},
                                StrategyConfig{}.set_progress([&](const Progress&) {
                                  ++calls;
                                  throw std::runtime_error("display gone");
                                }),
                                &recorder);
  CHECK(strategy.tune(model, one_sample(), "net").report.selected == "Fast()");
  CHECK(calls == 1);
  CHECK(recorder.contains("the progress callback threw (display gone)"));
}

namespace {

constexpr std::int64_t mib = 1024 * 1024;

// AddressSanitizer keeps freed memory in quarantine, resident: what a build frees still shows.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool freed_memory_stays_resident = true;
#else
constexpr bool freed_memory_stays_resident = false;
#endif

FakeBackend taking_memory(std::string name, double latency_ms, std::size_t kept,
                          std::size_t scratch) {
  FakeBehaviour behaviour;
  behaviour.name = std::move(name);
  behaviour.latencies_ms = {latency_ms};
  behaviour.host_kept_bytes = kept;
  behaviour.host_scratch_bytes = scratch;
  return FakeBackend(behaviour);
}

}  // namespace

TEST_CASE("The memory watch leaves the process's peak mark alone unless a reset is allowed",
          "[strategy][memory]") {
  if (!HostMemory::peak_bytes() || !HostMemory::reset_peak()) {
    WARN("no /proc/self here: nothing to watch");
    return;
  }
  // A spike well above what the tuning takes, then freed: the process's mark stays at it.
  const auto spike = [] {
    std::vector<char> block(256 * mib);
    volatile char* bytes = block.data();  // writes the optimiser must keep
    for (std::size_t i = 0; i < block.size(); i += 4096)
      bytes[i] = 1;  // resident, page by page
    return HostMemory::peak_bytes().value_or(0);
  };
  FakeModel model;
  const std::vector<FakeBackend> candidates{taking_memory("Scratch", 3.0, 0, 32 * mib)};

  const std::int64_t high = spike();
  auto polite = make_strategy(model, candidates);
  const auto kept_mark = polite.tune(model, one_sample(), "net");
  // The process's own mark is untouched (the kernel's count may lag by a few pages; a reset
  // would take it 200 MiB down).
  CHECK(*HostMemory::peak_bytes() >= high - 16 * mib);
  // Its peak lay below the older high: unknown, so absent rather than wrong.
  CHECK_FALSE(entry(kept_mark.report, "Scratch()").memory->host_peak_bytes);
  CHECK(entry(kept_mark.report, "Scratch()").memory->host_kept_bytes);

  const std::int64_t high_again = spike();
  auto resetting = make_strategy(model, candidates, StrategyConfig{}.enable_peak_reset(true));
  const auto reset_mark = resetting.tune(model, one_sample(), "net");
  CHECK(*HostMemory::peak_bytes() < high_again - 128 * mib);
  CHECK(*entry(reset_mark.report, "Scratch()").memory->host_peak_bytes >= 30 * mib);
}

TEST_CASE("Each backend's row notes the host memory its build and check took, kept and at peak",
          "[strategy][memory]") {
  if (!HostMemory::resident_bytes() || !HostMemory::reset_peak()) {
    WARN("no /proc/self here: nothing to watch");
    return;
  }
  FakeModel model;
  auto strategy =
      make_strategy(model,
                    {taking_memory("Keeps", 2.0, 48 * mib, 0),
                     taking_memory("Scratch", 3.0, 0, 96 * mib), FakeBackend("Light", 4.0)},
                    StrategyConfig{}.enable_peak_reset(true));
  const TuneResult<FakeBackend> result = strategy.tune(model, one_sample(), "net");
  const auto& keeps = entry(result.report, "Keeps()");
  const auto& scratch = entry(result.report, "Scratch()");
  const auto& light = entry(result.report, "Light()");
  REQUIRE(keeps.memory);
  REQUIRE(scratch.memory);
  REQUIRE(light.memory);
  REQUIRE(result.report.baseline->memory);
  CHECK_FALSE(keeps.memory->has_device());  // the model is on no device that reports

  CHECK(*keeps.memory->host_kept_bytes >= 46 * mib);
  CHECK(*keeps.memory->host_peak_bytes >= *keeps.memory->host_kept_bytes);
  CHECK(*scratch.memory->host_peak_bytes >= 94 * mib);
  if (!freed_memory_stays_resident) CHECK(*scratch.memory->host_kept_bytes < 16 * mib);
  CHECK(*light.memory->host_peak_bytes < 16 * mib);

  // The figures travel with the report: JSON, table, markdown.
  const TuneReport back = report_from_json(to_json(result.report));
  REQUIRE(back.find("Keeps()")->memory);
  CHECK(back.find("Keeps()")->memory->host_kept_bytes == keeps.memory->host_kept_bytes);
  CHECK_FALSE(back.find("Keeps()")->memory->device_peak_bytes);
  const std::string table = render_table(result.report);
  CHECK(table.find("MiB kept/peak") != std::string::npos);
  CHECK(table.find(detail::memory_cell(keeps, false)) != std::string::npos);
  CHECK(render_markdown(result.report).find("| MiB kept/peak |") != std::string::npos);
}

TEST_CASE("Device memory comes through the backend family's customisation point",
          "[strategy][memory]") {
  FakeModel model;
  model.device = std::make_shared<FakeDevice>();
  model.device->allocate(7 * mib);  // someone else's, before the tuning
  FakeBehaviour hungry{"Hungry", {2.0}};
  hungry.device_kept_bytes = 100 * mib;
  hungry.device_scratch_bytes = 400 * mib;
  auto strategy = make_strategy(model, {FakeBackend(hungry), FakeBackend("Light", 3.0)},
                                StrategyConfig{}.enable_peak_reset(true));
  const TuneReport report = strategy.tune(model, one_sample(), "net").report;
  const MemoryUse& memory = *entry(report, "Hungry()").memory;
  CHECK(memory.device_kept_bytes == 100 * mib);
  CHECK(memory.device_peak_bytes == 500 * mib);
  CHECK(entry(report, "Light()").memory->device_kept_bytes == 0);
  CHECK(entry(report, "Light()").memory->device_peak_bytes == 0);
  CHECK(render_table(report).find("GPU MiB kept/peak") != std::string::npos);
  CHECK(render_table(report).find("100 / 500") != std::string::npos);
}

TEST_CASE("Without a peak reset the device's peak statistics stay the process's, and a peak "
          "below an older high is absent",
          "[strategy][memory]") {
  FakeModel model;
  model.device = std::make_shared<FakeDevice>();
  model.device->allocate(900 * mib);  // an older high, then freed
  model.device->allocate(-900 * mib);
  FakeBehaviour hungry{"Hungry", {2.0}};
  hungry.device_scratch_bytes = 400 * mib;  // below the older high
  FakeBehaviour greedy{"Greedy", {3.0}};
  greedy.device_scratch_bytes = 1000 * mib;  // a new high
  auto strategy = make_strategy(model, {FakeBackend(hungry), FakeBackend(greedy)});
  const TuneReport report = strategy.tune(model, one_sample(), "net").report;
  CHECK(model.device->memory.peak_bytes >= 1000 * mib);  // never set back
  CHECK(entry(report, "Hungry()").memory->device_kept_bytes == 0);
  CHECK_FALSE(entry(report, "Hungry()").memory->device_peak_bytes);
  CHECK(entry(report, "Greedy()").memory->device_peak_bytes == 1000 * mib);
}

TEST_CASE("With the memory watch off, no row has memory figures", "[strategy][memory]") {
  FakeModel model;
  model.device = std::make_shared<FakeDevice>();
  auto strategy =
      make_strategy(model, {FakeBackend("Fast", 2.0)}, StrategyConfig{}.enable_memory_watch(false));
  const TuneReport report = strategy.tune(model, one_sample(), "net").report;
  CHECK_FALSE(report.baseline->memory);
  CHECK_FALSE(entry(report, "Fast()").memory);
  CHECK(detail::memory_cell(entry(report, "Fast()"), false) == "-");
}

TEST_CASE("A time budget bounds the baseline's pass over many samples: outputs are checked on the "
          "first samples that fit half of it, and the report says how many",
          "[strategy][budget]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {100.0}};
  const std::vector<double> samples(1000, 1.0);  // 100 s of reference pass at 100 ms a call
  SinkRecorder sink;
  auto strategy = make_strategy(
      model, {FakeBackend("A", 50.0), FakeBackend("B", 80.0)},
      StrategyConfig{}.set_profiling(ProfilingConfig{}.set_time_budget_ms(10'000.0)), &sink);
  const double start_ms = model.clock->now_ms();
  const auto result = strategy.tune(model, samples);
  const double took_ms = model.clock->now_ms() - start_ms;
  REQUIRE(result.report.checked_samples.has_value());
  CHECK(*result.report.checked_samples == 50);  // 5 s of the 10 s budget at 100 ms a call
  REQUIRE(result.report.baseline.has_value());
  CHECK_THAT(result.report.baseline->note,
             Catch::Contains("outputs checked on the first 50 of 1000 samples"));
  CHECK(sink.contains("WARNING: outputs checked on the first 50 of 1000 samples"));
  CHECK_THAT(render_table(result.report), Catch::Contains("first 50 of 1000 samples"));
  CHECK(to_json(result.report).at("checked_samples") == 50);
  CHECK(report_from_json(to_json(result.report)).checked_samples == 50U);
  // Each candidate is checked on those 50 (2.5 s and 4 s): the whole tuning stays within about
  // one budget and one candidate's check, where it took over 100 s.
  CHECK(took_ms < 15'000.0);
  CHECK(entry(result.report, "A()").status == CandidateStatus::ok);

  SECTION("samples that fit are all checked, and the report has no count") {
    auto roomy = make_strategy(
        model, {FakeBackend("A", 50.0)},
        StrategyConfig{}.set_profiling(ProfilingConfig{}.set_time_budget_ms(1'000'000.0)));
    const auto all = roomy.tune(model, samples);
    CHECK_FALSE(all.report.checked_samples.has_value());
    CHECK(to_json(all.report).at("checked_samples").is_null());
  }
}

TEST_CASE("A stop requested while the samples run ends the tuning before the next sample",
          "[strategy][budget]") {
  FakeModel model;
  std::stop_source stop;
  model.baseline = FakeBehaviour{"TorchEager", {100.0}};
  // 2 s into the baseline's pass over the samples (its 20th call): Ctrl-C.
  model.baseline->after_call = [&](std::size_t call) {
    if (call == 20) stop.request_stop();
  };
  const std::vector<double> samples(100, 1.0);
  auto strategy = make_strategy(model, {FakeBackend("Slow", 100.0)},
                                StrategyConfig{}.set_stop_token(stop.get_token()));
  try {
    (void)strategy.tune(model, samples);
    FAIL("tune() returned");
  } catch (const CancelledError& error) {
    REQUIRE(error.report() != nullptr);
    REQUIRE(error.report()->baseline.has_value());
    CHECK(error.report()->baseline->status == CandidateStatus::skipped);
    CHECK_THAT(error.report()->baseline->reason, Catch::Contains("cancelled"));
    CHECK(model.clock->now_ms() < 2'200.0);  // one more call at most, not 10 s of them
  }
}

TEST_CASE("What a backend's calls change for the whole process is put back before another runs",
          "[strategy][race]") {
  // As lt::TorchThreads sets LibTorch's thread count: the baseline and the other candidate
  // must run at the process's own value, in the checks, the warm-ups and every block.
  for (const Schedule schedule : {Schedule::interleaved, Schedule::sequential}) {
    INFO(to_string(schedule));
    FakeModel model;
    *model.process_value = 4;
    FakeBehaviour one_thread{"OneThread", {5.0}};
    one_thread.sets_process_value = 1;
    FakeBehaviour failing{"Failing", {6.0}};  // its sixth call throws, after setting its value
    failing.sets_process_value = 2;
    failing.throw_on_call = 6;
    auto strategy = make_strategy(
        model, {FakeBackend(one_thread), FakeBackend("Plain", 8.0), FakeBackend(failing)},
        StrategyConfig{}.set_profiling(ProfilingConfig{}.set_schedule(schedule)));
    const auto result = strategy.tune(model, one_sample());
    CHECK(result.report.selected == "OneThread()");
    CHECK(entry(result.report, "Failing()").status == CandidateStatus::measure_failed);
    CHECK(*model.process_value == 4);
    const std::map<std::string, int> sets{{"OneThread", 1}, {"Failing", 2}};
    std::map<std::string, std::size_t> calls;
    for (const auto& [backend, value] : *model.calls_seen) {
      INFO(backend << " call " << calls[backend]);
      CHECK(value == (sets.contains(backend) ? sets.at(backend) : 4));
      ++calls[backend];
    }
    CHECK(calls["TorchEager"] > 2);
    CHECK(calls["Plain"] > 2);
    CHECK(calls["OneThread"] > 2);
    CHECK(calls["Failing"] == 5);  // the sixth threw before it was recorded
  }
}

TEST_CASE("is_better answers as the strategy decides between one candidate and the baseline",
          "[strategy][decision]") {
  // Pairs of call latencies (ms, cycled): the baseline's, then the candidate's. Among them a gain
  // below the minimum (1.5 %), a clear gain, a noisy gain whose intervals overlap, a tie and a
  // loss, under both decision rules.
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> pairs{
      {{10.0}, {9.85}}, {{10.0}, {5.0}}, {{10.0, 10.4, 9.6, 10.2}, {9.3, 10.3, 9.0, 9.9}},
      {{4.0}, {4.0}},   {{4.0}, {5.0}},  {{10.0, 11.0, 9.0}, {9.6, 9.7, 9.5}}};
  for (const DecisionRule rule : {DecisionRule::confident_median, DecisionRule::aitune_mean}) {
    for (const auto& [baseline_ms, candidate_ms] : pairs) {
      INFO(to_string(rule) << ": baseline " << baseline_ms.front() << " ms, candidate "
                           << candidate_ms.front() << " ms");
      FakeModel model;
      model.baseline = FakeBehaviour{"TorchEager", baseline_ms};
      FakeBehaviour candidate{"Candidate", candidate_ms};
      auto strategy =
          make_strategy(model, {FakeBackend(candidate)},
                        StrategyConfig{}
                            .set_decision(DecisionConfig{}.set_rule(rule))
                            .set_profiling(ProfilingConfig{}.set_schedule(Schedule::sequential)));
      const auto result = strategy.tune(model, one_sample());
      REQUIRE(strategy.baseline_result());
      const CandidateReport& row = entry(result.report, "Candidate()");
      REQUIRE(row.latency);
      MinLatencyProfilingResult measured(row.latency->median, *row.latency);
      measured.samples_ms = row.samples_ms;
      CHECK(strategy.is_better(measured, *strategy.baseline_result()) ==
            !result.baseline_selected());
    }
  }
}

TEST_CASE("A graph's reduced-precision run is incorrect when its full-precision run is",
          "[strategy][graph]") {
  // The same graph in fp32 and bf16 (as one OpenVINO IR is): fp32's outputs are wrong; bf16's
  // check, here, passes. The bf16 run must share its graph's verdict and never be selected,
  // whichever is listed first and whatever the schedule.
  for (const Schedule schedule : {Schedule::interleaved, Schedule::sequential}) {
    for (const bool bf16_first : {false, true}) {
      INFO(to_string(schedule) << (bf16_first ? ", bf16 listed first" : ", fp32 listed first"));
      FakeModel model;
      std::vector<FakeBackend> candidates{graph_run("Fp32", "", true, 4.0),
                                          graph_run("Bf16", "bf16", false, 2.0),
                                          FakeBackend("Other", 6.0)};
      if (bf16_first) std::swap(candidates[0], candidates[1]);
      auto strategy =
          make_strategy(model, candidates,
                        StrategyConfig{}.set_profiling(ProfilingConfig{}.set_schedule(schedule)));
      const auto result = strategy.tune(model, one_sample());
      const CandidateReport& bf16 = entry(result.report, "Bf16()");
      CHECK(bf16.status == CandidateStatus::incorrect);
      CHECK_THAT(bf16.reason, Catch::StartsWith("the full-precision run of its graph, Fp32(), is "
                                                "incorrect: "));
      CHECK(result.report.selected == "Other()");
      CHECK(entry(result.report, "Other()").status == CandidateStatus::ok);
    }
  }
  // A graph of its own, or one whose full-precision run passes, keeps its own verdict.
  FakeModel model;
  auto strategy = make_strategy(
      model, {graph_run("Fp32", "", false, 4.0), graph_run("Bf16", "bf16", false, 2.0)});
  CHECK(strategy.tune(model, one_sample()).report.selected == "Bf16()");
}
