// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Statistics, stop rules, timers and the profiling loop.
#include "support/fake_backend.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace aitune;
using namespace aitune::detail;  // the engine: the race, the looks, timed calls
using namespace aitune::testing;
using Catch::Detail::Approx;

TEST_CASE("LatencyStats summarises samples", "[stats]") {
  const std::vector<double> samples{5, 1, 4, 2, 3, 10, 6, 8, 7, 9};
  const auto stats = LatencyStats::from_samples(samples);
  CHECK(stats.n == 10);
  CHECK(stats.mean == Approx(5.5));
  CHECK(stats.median == Approx(5.5));
  CHECK(stats.p90 == Approx(9.1));   // 1 + 0.9 * 9 ranks
  CHECK(stats.p99 == Approx(9.91));  // 1 + 0.99 * 9 ranks
  CHECK(stats.min == 1);
  CHECK(stats.max == 10);
  CHECK(stats.stddev == Approx(3.0276503540974917));
  CHECK(stats.cv == Approx(3.0276503540974917 / 5.5));
}

TEST_CASE("LatencyStats of one sample has no spread; bad samples are rejected", "[stats]") {
  const std::vector<double> one{2.5};
  const auto stats = LatencyStats::from_samples(one);
  CHECK(stats.median == 2.5);
  CHECK(stats.p99 == 2.5);
  CHECK(stats.stddev == 0.0);
  CHECK(stats.cv == 0.0);
  CHECK_THROWS_AS(LatencyStats::from_samples(std::vector<double>{}), Error);
  CHECK_THROWS_AS(LatencyStats::from_samples(std::vector<double>{1.0, -1.0}), Error);
  CHECK_THROWS_AS(LatencyStats::from_samples(std::vector<double>{1.0, std::nan("")}), Error);
}

TEST_CASE("Quantiles interpolate between ranks", "[stats]") {
  const std::vector<double> sorted{10, 20, 30, 40};
  CHECK(quantile_of_sorted(sorted, 0.0) == 10);
  CHECK(quantile_of_sorted(sorted, 1.0) == 40);
  CHECK(quantile_of_sorted(sorted, 0.5) == Approx(25));
  CHECK(quantile_of_sorted(sorted, 0.25) == Approx(17.5));
  CHECK(median_of(std::vector<double>{3, 1, 2}) == 2);
  CHECK_THROWS_AS(quantile_of_sorted(sorted, 1.5), ConfigError);
}

TEST_CASE("NumSteps warms up 10 calls and measures 20 by default", "[stop_rules]") {
  const NumSteps rule;
  CHECK(rule.warmup_calls() == 10);
  CHECK(rule.measured_calls() == 20);
  std::vector<double> samples(19, 1.0);
  CHECK_FALSE(rule.is_finished(samples));
  samples.push_back(1.0);
  CHECK(rule.is_finished(samples));
  CHECK(rule.measured(samples).size() == 20);
  CHECK(rule.describe() == "NumSteps(warmup=10, measured=20)");
}

TEST_CASE("NumSteps rejects invalid counts", "[stop_rules]") {
  CHECK_THROWS_AS(NumSteps(10, 0), ConfigError);
  CHECK_THROWS_AS(NumSteps(10, -3), ConfigError);
  CHECK_THROWS_WITH(NumSteps(-1, 20), Catch::Contains("warm-up") && Catch::Contains("-1"));
  CHECK_NOTHROW(NumSteps(0, 1));
}

TEST_CASE("StableWindow finishes once the last window is stable and keeps that window",
          "[stop_rules]") {
  const StableWindow rule;  // window 20, CV 10 %, at most 100
  CHECK(rule.window() == 20);
  CHECK(rule.max_cv() == Approx(0.10));
  CHECK(rule.max_measured() == 100);
  // 10 noisy samples, then steady ones.
  std::vector<double> samples{1, 9, 1, 9, 1, 9, 1, 9, 1, 9};
  int calls = 0;
  while (!rule.is_finished(samples)) {
    samples.push_back(5.0 + 0.01 * (calls++ % 3));
  }
  CHECK(samples.size() == 30);  // first window without any noisy sample
  const auto measured = rule.measured(samples);
  REQUIRE(measured.size() == 20);
  CHECK(LatencyStats::from_samples(measured).median == Approx(5.01));
}

TEST_CASE("StableWindow fails with a clear error when latency never settles", "[stop_rules]") {
  const StableWindow rule(5, 0.05, 12, 0);
  std::vector<double> samples;
  for (int i = 0; i < 11; ++i) {
    samples.push_back(i % 2 == 0 ? 1.0 : 3.0);
    REQUIRE_FALSE(rule.is_finished(samples));
  }
  samples.push_back(3.0);
  CHECK_THROWS_AS(rule.is_finished(samples), MeasurementError);
  CHECK_THROWS_WITH(rule.is_finished(samples), Catch::Contains("never became stable") &&
                                                   Catch::Contains("after 12 timed calls"));
}

TEST_CASE("StableWindow rejects invalid values", "[stop_rules]") {
  CHECK_THROWS_AS(StableWindow(0), ConfigError);
  CHECK_THROWS_AS(StableWindow(1), ConfigError);
  CHECK_THROWS_AS(StableWindow(20, -0.1), ConfigError);
  CHECK_THROWS_AS(StableWindow(20, 1.5), ConfigError);
  CHECK_THROWS_AS(StableWindow(20, 0.1, 10), ConfigError);  // max below window
  CHECK_THROWS_AS(StableWindow(20, 0.1, 100, -1), ConfigError);
  CHECK_NOTHROW(StableWindow(2, 0.0, 2, 0));
  CHECK_NOTHROW(StableWindow(20, 1.0));
}

TEST_CASE("ProfilingConfig has defaults, fluent setters and validation", "[config]") {
  ProfilingConfig config;
  CHECK(config.stop_rule().describe() == "NumSteps(warmup=10, measured=20)");
  config.set_stop_rule(StableWindow(10));
  CHECK_THAT(config.stop_rule().describe(), Catch::StartsWith("StableWindow(window=10"));
  CHECK_THROWS_AS(config.set_stop_rule(std::shared_ptr<const StopRule>{}), ConfigError);

  StrategyConfig strategy;
  CHECK(strategy.performance_validation());
  CHECK(strategy.correctness_check());
  strategy.enable_performance_validation(false).enable_correctness_check(false);
  CHECK_FALSE(strategy.performance_validation());
  CHECK_FALSE(strategy.correctness_check());
}

TEST_CASE("VirtualTimer measures exactly what the call advanced", "[timer]") {
  auto clock = std::make_shared<VirtualClock>();
  VirtualTimer timer(clock);
  const Timing timing = timer.measure([&] { clock->advance(3.25); });
  CHECK(timing.host_ms == 3.25);
  CHECK_FALSE(timing.device_ms.has_value());
  CHECK(timing.ms() == 3.25);
  CHECK(timer.now_ms() == 3.25);
  CHECK(Timing{1.0, 0.5}.ms() == 0.5);  // a device time wins when there is one
}

TEST_CASE("HostTimer is at least as long as the call it times", "[timer]") {
  HostTimer timer;
  const double before = timer.now_ms();
  const Timing timing =
      timer.measure([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  CHECK(timing.host_ms >= 2.0);
  CHECK(timer.now_ms() - before >= timing.host_ms);
}

TEST_CASE("The profiling loop warms up, then times until the stop rule is done", "[loop]") {
  FakeModel model;
  FakeBehaviour behaviour;
  behaviour.latencies_ms = {100, 100, 1, 2, 3};  // two slow warm-up calls
  FakeBackend backend(behaviour);
  backend.build(model, one_sample());
  VirtualTimer timer(model.clock);
  const auto timed =
      time_calls([&](std::size_t) { (void)backend.infer(1.0); }, NumSteps(2, 3), timer);
  CHECK(timed.measured_ms == std::vector<double>{1, 2, 3});
  CHECK(timed.calls == 5);
  CHECK(timed.time_ms == 206.0);  // warm-up included
  CHECK(backend.calls() == 5);
  // A budget smaller than the calls take ends the measurement with a clear error.
  FakeBackend slow("Slow", 10.0);
  slow.build(model, one_sample());
  CHECK_THROWS_WITH(
      time_calls([&](std::size_t) { (void)slow.infer(1.0); }, NumSteps(2, 3), timer, 25.0),
      Catch::Contains("over its time budget"));
}
