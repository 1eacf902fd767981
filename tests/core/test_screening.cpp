// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The screening before the checks (core/measure/screening_config.hpp): where checks are long, a
// candidate clearly slower than a checked backend is screened out unchecked and reported with its
// ratio; a fast candidate that fails its check screens nobody out; short checks are not screened.
#include "support/fake_backend.hpp"
#include "support/report_rows.hpp"
#include <aitune/core/cache/settings_key.hpp>
#include <aitune/core/report/markdown.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

using namespace aitune;
using namespace aitune::testing;

namespace {

FakeBehaviour timed(std::string name, double latency_ms) {
  return FakeBehaviour{std::move(name), {latency_ms}};
}

/// The pool: a bf16 candidate fastest of all whose outputs break the budget, a correct one 3.3x
/// faster than the baseline, one 1.1x its time, one 2x its time, and one 2x the baseline's. Each
/// behaviour keeps the samples its backend was called on.
struct Pool {
  FakeBehaviour broken = [] {
    FakeBehaviour behaviour{"Broken", {1.0}};
    behaviour.precision = "bf16";
    behaviour.cosine = 0.98;
    return behaviour;
  }();
  FakeBehaviour fast = timed("Fast", 3.0);
  FakeBehaviour near = timed("Near", 3.3);
  FakeBehaviour slow = timed("Slow", 6.0);
  FakeBehaviour slower_than_baseline = timed("Crawl", 20.0);

  std::vector<FakeBackend> all() const {
    return {FakeBackend(broken), FakeBackend(fast), FakeBackend(near), FakeBackend(slow),
            FakeBackend(slower_than_baseline)};
  }
};

std::size_t distinct_samples(const FakeBehaviour& behaviour) {
  return std::set<double>(behaviour.samples_seen->begin(), behaviour.samples_seen->end()).size();
}

StrategyConfig with_budget(std::size_t samples) {
  return StrategyConfig{}.set_accuracy_budget(
      AccuracyBudget{}.set_min_cosine(0.999).set_min_samples(samples));
}

}  // namespace

TEST_CASE("Where checks are long, a candidate clearly slower than a checked backend is screened "
          "out unchecked, with its ratio; a faster one that fails its check screens nobody out",
          "[strategy][screening]") {
  FakeModel model;
  const Pool pool;
  auto strategy = make_strategy(model, pool.all(), with_budget(30));
  const TuneReport report = strategy.tune(model, samples_of_one_shape(30)).report;

  // Checked fastest first: Broken fails its check, so Fast is checked though 3x Broken's time.
  CHECK(row_of(report, "Broken()").status == CandidateStatus::incorrect);
  CHECK(row_of(report, "Fast()").status == CandidateStatus::ok);
  CHECK(report.selected == "Fast()");
  // 1.1x a checked backend is not clearly slower: checked and raced.
  CHECK(row_of(report, "Near()").status == CandidateStatus::ok);

  const CandidateReport& slow = row_of(report, "Slow()");
  CHECK(slow.status == CandidateStatus::screened_out);
  CHECK_THAT(slow.reason, Catch::StartsWith("ratio 2.00") &&
                              Catch::Contains("to Fast() (checked) in 8 interleaved rounds") &&
                              Catch::EndsWith("0.5 margin, left unchecked and unraced"));
  const CandidateReport& crawl = row_of(report, "Crawl()");
  CHECK(crawl.status == CandidateStatus::screened_out);
  // Against the strongest evidence: 6.67x Fast's time rather than 2x the baseline's.
  CHECK_THAT(crawl.reason, Catch::Contains("to Fast() (checked)"));

  // The checked candidates ran every one of the 30 samples; the screened-out ones did not.
  CHECK(distinct_samples(pool.fast) == 30);
  CHECK(distinct_samples(pool.slow) < 30);
  CHECK(distinct_samples(pool.slower_than_baseline) < 30);

  CHECK_THAT(report.measurement.screening,
             Catch::StartsWith("8 round(s) of 6 backend(s)") &&
                 Catch::Contains("2 of 5 candidate(s) screened out (slower than a checked "
                                 "backend with confidence, by over 1.5x)"));
  CHECK_THAT(render_table(report), Catch::Contains("screening before the checks: 8 round(s)") &&
                                       Catch::Contains("screened out"));
  CHECK_THAT(render_markdown(report), Catch::Contains("Screening before the checks: 8 round(s)"));
  const TuneReport back = report_from_json(to_json(report));
  CHECK(back.measurement.screening == report.measurement.screening);
  CHECK(row_of(back, "Slow()").status == CandidateStatus::screened_out);
  CHECK(to_json(report).at("candidates")[3].at("status") == "screened_out");
}

TEST_CASE("A pool screened out against the baseline keeps it, and says why: screened, not failed",
          "[strategy][screening]") {
  FakeModel model;  // the baseline takes 10 ms
  auto strategy =
      make_strategy(model, {FakeBackend(timed("Slow", 20.0)), FakeBackend(timed("Crawl", 40.0))},
                    with_budget(30));
  const TuneReport report = strategy.tune(model, samples_of_one_shape(30)).report;
  CHECK(report.baseline_selected);
  CHECK(row_of(report, "Slow()").status == CandidateStatus::screened_out);
  CHECK_THAT(row_of(report, "Slow()").reason, Catch::Contains("to TorchEager() (checked)"));
  CHECK_FALSE(report.every_candidate_failed());  // a decision a tuning cache may keep
  CHECK_THAT(report.decision, Catch::Contains("every candidate was screened out as clearly "
                                              "slower, or failed"));
}

TEST_CASE("Short checks are not screened, nor a pool whose screening is off: every candidate is "
          "checked as before",
          "[strategy][screening]") {
  FakeModel model;
  const auto tune = [&](StrategyConfig config, std::size_t count) {
    const Pool pool;
    auto strategy = make_strategy(model, pool.all(), std::move(config));
    const TuneReport report = strategy.tune(model, samples_of_one_shape(count)).report;
    CHECK(report.measurement.screening.empty());
    CHECK(distinct_samples(pool.slow) == count);
    CHECK(row_of(report, "Slow()").status != CandidateStatus::screened_out);
    return report;
  };
  // 8 samples: under the 20 a screening needs (the default tuning checks one).
  CHECK(tune(with_budget(8), 8).selected == "Fast()");
  // Turned off.
  StrategyConfig off = with_budget(30);
  off.set_profiling(ProfilingConfig{}.set_screening(ScreeningConfig{}.set_rounds(0)));
  CHECK(tune(off, 30).selected == "Fast()");
}

TEST_CASE("Screening settings are checked, described, and in the cache key only when changed",
          "[screening][cache]") {
  CHECK_THROWS_WITH(ScreeningConfig{}.set_rounds(-1), Catch::Contains("at least 0"));
  CHECK_THROWS_WITH(ScreeningConfig{}.set_margin(-0.1), Catch::Contains("within [0, 10]"));
  CHECK_THROWS_WITH(ScreeningConfig{}.set_min_checked_samples(0), Catch::Contains("at least 1"));
  CHECK(ScreeningConfig{}.describe() ==
        "screening in 8 round(s) where 20 or more samples are checked: a candidate slower than "
        "a checked backend with confidence, by over 1.5x, is not checked");
  CHECK_FALSE(ScreeningConfig{}.applies(19));
  CHECK(ScreeningConfig{}.applies(20));
  CHECK_FALSE(ScreeningConfig{}.set_rounds(0).applies(100));

  const nlohmann::json plain = settings_key(StrategyConfig{});
  CHECK_FALSE(plain["measurement"].contains("screening"));
  StrategyConfig changed;
  changed.set_profiling(ProfilingConfig{}.set_screening(ScreeningConfig{}.set_margin(0.75)));
  CHECK(settings_key(changed)["measurement"]["screening"]["margin"] == 0.75);
}
