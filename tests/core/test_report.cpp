// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Results, formatting, the report (table and JSON), messages and the customisation points.
#include "support/fake_backend.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace aitune;
using namespace aitune::testing;
using Catch::Detail::Approx;

TEST_CASE("MinLatencyProfilingResult is taken at batch size 1 and serialises exactly",
          "[results]") {
  const MinLatencyProfilingResult result(5);
  CHECK(result.latency == 5.0);
  CHECK(result.metric() == 5.0);
  const nlohmann::json json = result;
  CHECK(json == nlohmann::json::parse(R"({"latency": 5.0, "selected_batch_size": 1})"));
  CHECK(json.size() == 2);
  CHECK(json["latency"].is_number_float());
  CHECK(json.dump() == R"({"latency":5.0,"selected_batch_size":1})");
}

TEST_CASE("Latencies print with 3 decimals and their unit", "[format]") {
  CHECK(format_ms(5.123) == "5.123 ms");
  CHECK(format_ms(5.12345) == "5.123 ms");
  CHECK(format_ms(0.5) == "0.500 ms");
  CHECK(format_ms(12) == "12.000 ms");
  CHECK(format_ms(0.0004) == "0.400 us");  // not "0.000 ms"
  CHECK(format_ms(0.05) == "50.000 us");
  CHECK(format_ms(0.0) == "0.000 ms");
  CHECK(format_speedup(2.4149) == "2.41x");
}

TEST_CASE("The logger indents by depth and marks warnings", "[sink]") {
  SinkRecorder recorder;
  Logger log(recorder.sink());
  log.info(0, "top");
  log.info(2, "nested");
  log.warn(1, "careful");
  REQUIRE(recorder.lines->size() == 3);
  CHECK((*recorder.lines)[0] == "top");
  CHECK((*recorder.lines)[1] == "    nested");
  CHECK((*recorder.lines)[2] == "  WARNING: careful");
  Logger silent(MessageSink{});  // an empty sink is allowed and drops messages
  silent.info(0, "nothing happens");
}

TEST_CASE("The report shows every candidate with status, reason, statistics and speedup",
          "[report]") {
  FakeModel model;  // baseline 10 ms
  FakeBehaviour broken{"Broken", {1.0}};
  broken.fail_build = true;
  auto strategy = make_strategy(
      model, {FakeBackend("Fast", 2.0), FakeBackend(broken), FakeBackend("Slow", 20.0)});
  const auto result = strategy.tune(model, one_sample(), "net");
  const std::string table = render_table(result.report);
  CHECK_THAT(table, Catch::StartsWith("Min Latency Strategy - module 'net' (batch size 1)"));
  CHECK_THAT(table, Catch::Contains("* Fast()") && Catch::Contains("2.000 ms") &&
                        Catch::Contains("5.00x"));
  CHECK_THAT(table, Catch::Contains("TorchEager()") && Catch::Contains("baseline") &&
                        Catch::Contains("10.000 ms"));
  CHECK_THAT(table, Catch::Contains("build failed") &&
                        Catch::Contains("#2 Broken(): build failed: scripted build failure"));
  CHECK_THAT(table, Catch::Contains("0.50x"));
  CHECK_THAT(table, Catch::EndsWith("selected: Fast()\n"));
  REQUIRE(result.report.find("Slow()") != nullptr);
  CHECK(result.report.find("Slow()")->speedup == Approx(0.5));
  CHECK(result.report.find("Missing()") == nullptr);

  const nlohmann::json json = to_json(result.report);
  CHECK(json["strategy"] == "Min Latency Strategy");
  CHECK(json["module"] == "net");
  CHECK(json["selected"] == "Fast()");
  CHECK(json["selected_key"] == "fake:Fast");
  CHECK(json["baseline_selected"] == false);
  CHECK(json["baseline"]["backend"] == "TorchEager()");
  CHECK(json["baseline"]["latency_ms"]["median"] == Approx(10.0));
  REQUIRE(json["candidates"].size() == 3);
  CHECK(json["candidates"][0]["backend"] == "Fast()");
  CHECK(json["candidates"][0]["status"] == "ok");
  CHECK(json["candidates"][0]["selected"] == true);
  CHECK(json["candidates"][0]["speedup"] == Approx(5.0));
  CHECK(json["candidates"][0]["latency_ms"]["median"] == Approx(2.0));
  // Interleaved: the kept calls of each block (the first is discarded) in every round it ran.
  CHECK(json["candidates"][0]["latency_ms"]["n"] ==
        RaceConfig{}.kept_calls_per_block() *
            json["candidates"][0]["vs_baseline"]["paired_rounds"].get<int>());
  CHECK(json["candidates"][0]["vs_baseline"]["ratio"] == Approx(0.2));
  CHECK(json["measurement"]["schedule"] == "interleaved");
  CHECK(json["measurement"]["stop_reason"] == "settled");
  CHECK(json["candidates"][1]["status"] == "build_failed");
  CHECK(json["candidates"][1]["reason"] == "scripted build failure");
  CHECK(json["candidates"][1]["latency_ms"].is_null());
  CHECK(json["candidates"][1]["speedup"].is_null());
}

TEST_CASE("Every report enum reads back from its token, and shows people its label",
          "[report][format]") {
  // Walks each table until its first value that is no enumerator: every token parses back to
  // the value it came from, tokens are snake case, and no two values share a token.
  const auto check_table = [](auto first) {
    using E = decltype(first);
    std::vector<std::string_view> tokens;
    for (int i = 0;; ++i) {
      const E value = static_cast<E>(i);
      if (enum_text(value).token.empty()) break;
      const std::string_view token = to_string(value);
      INFO(token);
      CHECK(parse_token<E>(token) == std::optional<E>(value));
      CHECK(token.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string_view::npos);
      CHECK(std::find(tokens.begin(), tokens.end(), token) == tokens.end());
      CHECK_FALSE(to_label(value).empty());
      tokens.push_back(token);
    }
    CHECK(tokens.size() >= 2);
    CHECK_FALSE(parse_token<E>("no such token"));
  };
  check_table(CandidateStatus::ok);
  check_table(DecisionRule::confident_median);
  check_table(Schedule::interleaved);
  check_table(StopReason::not_measured);
  CHECK(to_string(CandidateStatus::activate_failed) == "activate_failed");
  CHECK(to_label(CandidateStatus::activate_failed) == "activate failed");
  CHECK(parse_token<CandidateStatus>("measure failed") == std::nullopt);
  CHECK(parse_token<CandidateStatus>("measure failed", /*labels_too=*/true) ==
        CandidateStatus::measure_failed);
  CHECK(to_string(static_cast<CandidateStatus>(99)) == "unknown");
}

TEST_CASE("Confidence levels print with the digits they need to be true", "[format]") {
  CHECK(format_level(0.95) == "95.0 %");
  CHECK(format_level(0.992) == "99.2 %");
  CHECK(format_level(0.9984) == "99.84 %");
  CHECK(format_level(0.99925) == "99.925 %");              // not "99.9 %", and never "100.0 %"
  CHECK(format_level(1.0 - 2.0 * 1.7e-6) == "99.9996 %");  // beyond 4 decimals: rounded down
  CHECK(format_level(1.0 - 1e-9) == "99.9999 %");
  CHECK(format_level(std::nan("")) == "-");
  // An unbounded interval reads the same in the table and in the sentences: never [-inf, inf].
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(format_ratio(1.0, -inf, inf) == "1.000 [-, -]");
}

TEST_CASE("Every checked candidate shows its precision and how close it came to failing, and a "
          "reduced-precision winner is named in the decision",
          "[report][accuracy]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {10.0}};
  FakeBehaviour bf16{"Half", {4.0}};
  bf16.precision = "bf16";
  bf16.output_offset = 5e-10;  // half the allowance
  FakeBehaviour same{"Same", {10.0}};
  auto strategy = make_strategy(model, {FakeBackend(same), FakeBackend(bf16)});
  const auto result = strategy.tune(model, std::vector<double>{1.0, 2.0});
  const CandidateReport& half = *result.report.find("Half()");
  CHECK(half.precision == Precision::bf16);
  CHECK(half.reduced_precision);
  REQUIRE(half.accuracy.size() == 1);
  CHECK(half.accuracy[0].output == "output");
  CHECK(half.accuracy[0].worst_error_ratio == Approx(0.5).epsilon(0.01));
  const CandidateReport& exact = *result.report.find("Same()");
  CHECK(exact.precision == Precision::fp64);
  CHECK_FALSE(exact.reduced_precision);
  CHECK(exact.accuracy.at(0).worst_error_ratio == 0.0);

  CHECK(result.report.selected == "Half()");
  CHECK_THAT(result.report.decision,
             Catch::EndsWith("; it computes in bf16, which moved the outputs by at most 50 % of "
                             "the tolerance (worst: output)"));
  const std::string table = render_table(result.report);
  CHECK_THAT(table, Catch::Contains("precision") && Catch::Contains("error/tol") &&
                        Catch::Contains("bf16") && Catch::Contains("50 %"));
  const nlohmann::json json = to_json(result.report)["candidates"][1];
  CHECK(json["precision"] == "bf16");
  CHECK(json["reduced_precision"] == true);
  CHECK(json["accuracy"][0]["output"] == "output");
  CHECK(json["accuracy"][0]["worst_error_ratio"].get<double>() == Approx(0.5).epsilon(0.01));
  CHECK(to_json(result.report)["baseline"]["accuracy"].is_null());  // the reference itself
}

TEST_CASE("A report that selects the baseline says so in the table and the JSON", "[report]") {
  FakeModel model;
  model.baseline = FakeBehaviour{"TorchEager", {1.0}};
  auto strategy = make_strategy(model, {FakeBackend("Slow", 2.0)});
  const auto result = strategy.tune(model, one_sample());
  CHECK_THAT(render_table(result.report), Catch::Contains("selected: TorchEager() (the baseline)"));
  CHECK(to_json(result.report)["baseline_selected"] == true);
  CHECK(to_json(result.report)["baseline"]["selected"] == true);
}

namespace {
// A backend without check_outputs: its outputs are compared with ==.
class PlainBackend : public BackendLifecycle<PlainBackend> {
 public:
  using model_type = FakeModel;
  using sample_type = int;
  using output_type = int;
  explicit PlainBackend(int bias = 0) : bias_(bias) {}
  static PlainBackend make_baseline(const FakeModel&) { return PlainBackend(0); }
  std::string describe() const { return bias_ == 0 ? "Plain()" : "Biased()"; }
  std::string key() const { return describe(); }
  BackendIdentity identity() const {
    return {{"family", std::string("plain")}, {"bias", std::int64_t{bias_}}};
  }
  void do_build(const FakeModel&, std::span<const int>) {}
  int do_infer(int x) { return x + bias_; }

 private:
  int bias_;
};

// A backend with no baseline customisation and no copy.
class MoveOnlyBackend : public BackendLifecycle<MoveOnlyBackend> {
 public:
  using model_type = FakeModel;
  using sample_type = double;
  using output_type = double;
  MoveOnlyBackend() = default;
  MoveOnlyBackend(MoveOnlyBackend&&) = default;
  MoveOnlyBackend& operator=(MoveOnlyBackend&&) = default;
  MoveOnlyBackend(const MoveOnlyBackend&) = delete;
  std::string describe() const { return "MoveOnly()"; }
  std::string key() const { return "move-only"; }
  void do_build(const FakeModel& model, std::span<const double>) { clock_ = model.clock; }
  double do_infer(double x) {
    clock_->advance(1.0);
    return x;
  }

 private:
  std::shared_ptr<VirtualClock> clock_;
};
}  // namespace

namespace {
/// Biased() (incorrect: it adds 1) then Plain() tuned on the sample 3, without performance
/// validation: Plain() is selected.
TuneResult<PlainBackend> tune_biased_then_plain() {
  FakeModel model;
  MinLatencyStrategy<PlainBackend> strategy(
      {PlainBackend(1), PlainBackend(0)},
      StrategyConfig{}
          .enable_performance_validation(false)
          .set_sink(null_sink())
          .set_profiling(ProfilingConfig{}.set_stop_rule(NumSteps(0, 1))));
  const std::vector<int> samples{3};
  return strategy.tune(model, samples);
}
}  // namespace

TEST_CASE("Without check_outputs, outputs are compared with ==", "[customization]") {
  const auto result = tune_biased_then_plain();
  CHECK(result.report.candidates[0].status == CandidateStatus::incorrect);
  CHECK(result.report.candidates[0].reason == "output differs from the baseline's");
  CHECK(result.report.selected == "Plain()");
  PlainBackend direct(1);
  int reference = 3;
  CHECK_FALSE(output_checker<PlainBackend>::check(direct, &reference, 4).passed);
  CHECK(output_checker<PlainBackend>::check(direct, nullptr, 4).passed);
}

TEST_CASE("A report names each backend's identity beside its key, and reads it back", "[report]") {
  const TuneReport report = tune_biased_then_plain().report;
  REQUIRE(report.selected == "Plain()");
  CHECK(report.selected_identity == BackendIdentity{{"family", "plain"}, {"bias", 0}});
  CHECK(report.candidates[0].identity == BackendIdentity{{"family", "plain"}, {"bias", 1}});
  CHECK(identity_text(report.selected_identity, "family") == "plain");
  CHECK(identity_text(report.selected_identity, "bias").empty());  // a count, not a text
  const nlohmann::json json = to_json(report);
  CHECK(json["selected_identity"] == nlohmann::json{{"family", "plain"}, {"bias", 0}});
  CHECK(json["candidates"][0]["identity"]["bias"] == 1);
  const TuneReport back = report_from_json(json);
  CHECK(back.selected_identity == report.selected_identity);
  CHECK(back.candidates[0].identity == report.candidates[0].identity);
  // A report written before identities were has none; a field that is neither a text nor a
  // count is refused, by name.
  nlohmann::json old = json;
  old.erase("selected_identity");
  old["candidates"][0].erase("identity");
  CHECK(report_from_json(old).selected_identity.empty());
  CHECK(report_from_json(old).candidates[0].identity.empty());
  nlohmann::json bad = json;
  bad["selected_identity"]["bias"] = 0.5;
  CHECK_THROWS_WITH(report_from_json(bad), Catch::Contains("identity field 'bias' is 0.5"));
  // A backend that says nothing of itself has an empty identity.
  CHECK(identity_of<MoveOnlyBackend>::of(MoveOnlyBackend()).empty());
}

TEST_CASE("A backend type without a baseline still tunes, with a warning", "[customization]") {
  static_assert(!baseline_traits<MoveOnlyBackend>::available);
  static_assert(baseline_traits<FakeBackend>::available);
  FakeModel model;
  SinkRecorder sink;
  std::vector<MoveOnlyBackend> candidates;
  candidates.emplace_back();
  MinLatencyStrategy<MoveOnlyBackend, VirtualTimer> strategy(
      std::move(candidates), StrategyConfig{}.set_sink(sink.sink()), VirtualTimer(model.clock));
  auto result = strategy.tune(model, one_sample());
  CHECK(result.report.selected == "MoveOnly()");
  CHECK(sink.contains("defines no baseline"));
  CHECK(sink.contains("(no baseline latency to compare with)"));
  SECTION("a backend type that cannot be copied is consumed by the first tune") {
    CHECK_THROWS_WITH(strategy.tune(model, one_sample()), Catch::Contains("consumed"));
  }
}

TEST_CASE("JSON files are written whole or not at all, by many writers at once, and a failure "
          "names its cause",
          "[report][json][concurrency]") {
  const auto dir = std::filesystem::temp_directory_path() / "aitune_json_file_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = dir / "report.json";
  write_json_file(path, nlohmann::json{{"selected", "Fast()"}});
  {
    std::ifstream in(path);
    CHECK(nlohmann::json::parse(in)["selected"] == "Fast()");
  }

  // Writers sharing one temporary name overwrote and renamed each other's files.
  std::atomic<int> failed_writes{0};
  std::atomic<int> bad_reads{0};
  std::atomic<bool> writing{true};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 200; ++i) {
        try {
          write_json_file(path,
                          nlohmann::json{{"writer", w}, {"i", i}, {"pad", std::string(500, 'x')}});
        } catch (const Error&) {
          ++failed_writes;
        }
      }
    });
  }
  std::thread reader([&] {
    while (writing) {
      std::ifstream in(path);
      if (!nlohmann::json::accept(in)) ++bad_reads;
    }
  });
  for (auto& writer : writers)
    writer.join();
  writing = false;
  reader.join();
  CHECK(failed_writes == 0);
  CHECK(bad_reads == 0);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir))
    ++files;
  CHECK(files == 1);  // no temporary left behind

  const auto unwritable = dir / "no_such_folder" / "report.json";
  CHECK_THROWS_WITH(write_json_file(unwritable, nlohmann::json::object()),
                    Catch::Contains("cannot write") && Catch::Contains("no_such_folder") &&
                        Catch::Contains("No such file or directory"));
  CHECK_THROWS_WITH(check_writable(unwritable), Catch::Contains("No such file or directory"));
  CHECK_THROWS_WITH(check_writable(dir), Catch::Contains("it is a directory"));
  CHECK_NOTHROW(check_writable(dir / "later.json"));
  CHECK_FALSE(std::filesystem::exists(dir / "later.json"));
  CHECK_FALSE(std::filesystem::exists(dir / "no_such_folder"));

  // Any text (report.md, report.svg) goes the same way, byte for byte; a failure is an error.
  const std::string markdown = "# report\n\n| a | b |\n";
  write_text_file(dir / "report.md", markdown);
  {
    std::ifstream in(dir / "report.md", std::ios::binary);
    CHECK(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) ==
          markdown);
  }
  CHECK_THROWS_WITH(write_text_file(path / "inside_a_file.md", markdown),
                    Catch::Contains("cannot write") && Catch::Contains("inside_a_file.md"));
  std::filesystem::remove_all(dir);  // leave nothing behind in the temporary directory
}

TEST_CASE("The table orders the rows as the race decided, even after the baseline left it",
          "[report][race]") {
  // B leads early, while the baseline still races, then falls behind A for good: its early ratio
  // to the baseline is the better one, yet the race selects A. Its row must not show a higher
  // speedup than A's: speedups are chained through the selected backend.
  FakeModel model;                                        // baseline 10 ms
  FakeBehaviour late{"B", std::vector<double>(20, 4.5)};  // its warm-up and first rounds
  late.latencies_ms.resize(20 + 4000, 5.5);
  auto strategy = make_strategy(model, {FakeBackend("A", 5.0), FakeBackend(late)});
  const TuneReport report = strategy.tune(model, one_sample(), "net").report;
  REQUIRE(report.selected == "A()");
  const CandidateReport& a = *report.find("A()");
  const CandidateReport& b = *report.find("B()");
  REQUIRE(a.speedup);
  REQUIRE(b.vs_selected);
  CHECK(b.vs_selected->ratio > 1.0);
  CHECK(a.vs_selected->ratio == 1.0);
  const auto chained = detail::chained_speedup(report, b);
  REQUIRE(chained);
  CHECK(*chained < *a.speedup);
  CHECK(*chained == Approx(*a.speedup / b.vs_selected->ratio));
  const std::string table = render_table(report);
  CHECK_THAT(table, Catch::Contains(format_speedup(*chained)) &&
                        Catch::Contains(format_speedup(*a.speedup)));
  // Its own paired speedup over the baseline, from the rounds before the baseline left, is the
  // higher one (the premise: a table of those contradicted the decision). It stays in the JSON.
  REQUIRE(b.speedup);
  CHECK(*b.speedup > *a.speedup);
  const TuneReport back = report_from_json(to_json(report));
  REQUIRE(back.find("B()")->vs_selected);
  CHECK(back.find("B()")->vs_selected->ratio == Approx(b.vs_selected->ratio));
  CHECK(render_table(back) == table);
}
