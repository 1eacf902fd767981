// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The tuning cache: SHA-256, the file (merge, lock, damaged files), reports read back, and
// tune_with_cache on fake backends.
#include "support/fake_backend.hpp"
#include <aitune/core/io/cpu_info.hpp>

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace aitune;
using namespace aitune::testing;

namespace {

/// A fresh folder for one test, unique to this process.
std::filesystem::path fresh_folder(std::string_view name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("aitune_cache_test_{}_{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const std::filesystem::path& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::size_t count_warnings(const SinkRecorder& recorder) {
  std::size_t warnings = 0;
  for (const auto& line : *recorder.lines) {
    if (line.find("WARNING") != std::string::npos) ++warnings;
  }
  return warnings;
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    files.push_back(entry.path());
  return files;
}

const nlohmann::json key_a{{"model", "a"}, {"inputs", {"1x3"}}};
const nlohmann::json key_b{{"model", "b"}, {"inputs", {"1x3"}}};
const nlohmann::json report_a{{"selected", "A"}};

/// A key for the caches whose entries are signed (16 bytes at least).
const std::string test_key = "a test key, 32 bytes long, or so";

/// Signs `entry` again with test_key, as a holder of the key would after editing it.
void sign_again(nlohmann::json& entry) {
  entry.erase("signature");
  entry["signature"] = hmac_sha256_hex(test_key, entry.dump());
}

}  // namespace

TEST_CASE("SHA-256 gives the FIPS 180-4 digests, across block boundaries", "[cache]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  for (int i = 0; i < 1000; ++i)
    million.update(std::string(1000, 'a'));  // pieces that straddle blocks
  CHECK(million.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

  const auto dir = fresh_folder("sha");
  write_text(dir / "f", "abc");
  CHECK(sha256_file(dir / "f") == sha256_hex("abc"));
  CHECK_THROWS_WITH(sha256_file(dir / "missing"), Catch::Contains("missing"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("SHA-256 through the CPU's SHA extensions compresses as the portable code does",
          "[cache]") {
#if AITUNE_SHA256_X86
  if (!detail::sha256_has_x86_extensions()) {
    WARN("this CPU has no SHA extensions: only the portable code runs");
    return;
  }
  std::mt19937 random(7);
  std::vector<std::uint8_t> data(64 * 40);
  for (auto& byte : data)
    byte = static_cast<std::uint8_t>(random() & 0xffU);
  for (const std::size_t blocks : {1U, 2U, 7U, 40U}) {
    std::array<std::uint32_t, 8> portable{1, 2, 3, 4, 5, 6, 7, 0xffffffffU};
    std::array<std::uint32_t, 8> extensions = portable;
    detail::sha256_blocks_portable(portable, data.data(), blocks);
    detail::sha256_blocks_x86(extensions, data.data(), blocks);
    CHECK(extensions == portable);
  }
#else
  WARN("not an x86-64 build: only the portable code runs");
#endif
}

TEST_CASE("Base64 gives RFC 4648's encodings, round-trips any bytes and refuses bad text",
          "[cache]") {
  const std::vector<std::pair<std::string, std::string>> vectors{{"", ""},
                                                                 {"f", "Zg=="},
                                                                 {"fo", "Zm8="},
                                                                 {"foo", "Zm9v"},
                                                                 {"foob", "Zm9vYg=="},
                                                                 {"fooba", "Zm9vYmE="},
                                                                 {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    CHECK(base64_encode(bytes) == text);
    CHECK(base64_decode(text) == bytes);
  }
  std::string every_byte;
  for (int i = 0; i < 256; ++i)
    every_byte += static_cast<char>(i);
  for (std::size_t length = 250; length <= every_byte.size(); ++length) {
    const std::string bytes = every_byte.substr(0, length);
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
  }
  for (const std::string_view bad :
       {"Zg=", "Z===", "Zm9v!A==", "Zg==Zg==", "Zm=v", "====", "Zm9v\n"}) {
    CAPTURE(bad);
    CHECK_FALSE(base64_decode(bad));
  }
}

TEST_CASE("The cache finds what was stored under the same key only, and keeps other entries",
          "[cache]") {
  const auto dir = fresh_folder("basic");
  SinkRecorder recorder;
  const TuningCache cache(dir / "sub" / "cache.json");
  const Logger log(recorder.sink());    // the cache has no sink: each call is given one
  CHECK_FALSE(cache.find(key_a, log));  // no file yet: a plain miss
  cache.store(key_a, report_a, nullptr, log);
  cache.store(key_b, {{"selected", "B"}}, nullptr, log);
  cache.store(key_a, {{"selected", "A2"}}, nullptr, log);  // replaces a's entry

  const auto a = cache.find(key_a, log);
  REQUIRE(a);
  CHECK(a->report["selected"] == "A2");
  CHECK(a->key == key_a);
  CHECK(a->created.size() == 20);  // 2026-11-30T18:54:06Z
  REQUIRE(cache.find(key_b, log));
  CHECK(cache.find(key_b, log)->report["selected"] == "B");
  nlohmann::json other_key = key_a;
  other_key["inputs"] = {"1x4"};
  CHECK_FALSE(cache.find(other_key, log));

  const auto document = nlohmann::json::parse(read_text(cache.path()));
  CHECK(document["schema_version"] == tuning_cache_schema_version);
  CHECK(document["entries"].size() == 2);
  CHECK(count_warnings(recorder) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A corrupt, truncated or damaged cache file is one warning, kept aside, then replaced",
          "[cache]") {
  const auto dir = fresh_folder("corrupt");
  const auto path = dir / "cache.json";
  const std::string bad = GENERATE(std::string(R"({"schema_version": 1, "entries": {"ab)"),
                                   std::string("\x00\x01garbage", 9), std::string(""),
                                   std::string(R"({"schema_version": 1, "entries": [1]})"));
  write_text(path, bad);
  SinkRecorder recorder;
  const TuningCache cache(path);
  const Logger log(recorder.sink());
  CHECK_FALSE(cache.find(key_a, log));
  cache.store(key_a, report_a, nullptr, log);
  CHECK(count_warnings(recorder) == 1);
  CHECK(recorder.contains("is unusable"));
  REQUIRE(cache.find(key_a, log));

  // The unreadable file is kept, byte for byte, beside the new one.
  std::size_t kept = 0;
  for (const auto& file : files_in(dir)) {
    if (file.filename().string().starts_with("cache.json.corrupt-")) {
      ++kept;
      CHECK(read_text(file) == bad);
    }
  }
  CHECK(kept == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("JSON nested deeper than the bound is refused while parsing, however deep",
          "[cache][trust]") {
  std::string why;
  CHECK(parse_json_bounded("[[[1]]]", &why, 3) == nlohmann::json::parse("[[[1]]]"));
  CHECK(parse_json_bounded("[[[[1]]]]", &why, 3).is_discarded());
  CHECK(why == "it nests deeper than 3 levels");
  CHECK(parse_json_bounded("{\"a\": [", &why).is_discarded());
  CHECK(why == "it is not valid JSON (truncated?)");

  // 150 000 levels (300 KB): dumping it would overflow the stack; its indented dump at 20 000
  // levels took 800 MB. The cache is one warning, and moved aside when a tuning is stored.
  const auto dir = fresh_folder("deep");
  const auto path = dir / "cache.json";
  const std::size_t depth = 150'000;
  write_text(path, R"({"schema_version": 2, "entries": {"a": )" + std::string(depth, '[') +
                       std::string(depth, ']') + "}}");
  SinkRecorder recorder;
  const TuningCache cache(path);
  const Logger log(recorder.sink());
  CHECK_FALSE(cache.find(key_a, log));
  CHECK(recorder.contains("nests deeper than 256 levels"));
  cache.store(key_a, report_a, nullptr, log);
  CHECK(cache.find(key_a, log));
  CHECK(std::filesystem::file_size(path) < 4096);
  CHECK(count_warnings(recorder) == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache path that is not ours to change is one warning and left as it is",
          "[cache][trust]") {
  const auto dir = fresh_folder("foreign");
  const auto path = dir / "cache.json";
  const auto check_left_alone = [&](std::string_view why, const std::function<bool()>& unchanged) {
    CAPTURE(why);
    SinkRecorder recorder;
    const TuningCache cache(path);
    const Logger log(recorder.sink());
    CHECK_FALSE(cache.find(key_a, log));  // a FIFO would block here if it were opened
    cache.store(key_a, report_a, nullptr, log);
    CHECK(unchanged());
    CHECK(count_warnings(recorder) == 1);
    CHECK(recorder.contains(why));
    CHECK(files_in(dir).size() <= 2);  // nothing moved aside (the lock file aside)
  };
  // Valid JSON of another kind: a report written to the cache's path, a list.
  for (const std::string& text :
       {std::string(R"({"schema_version": 3, "strategy": "x"})"), std::string("[1, 2, 3]"),
        std::string(R"({"kind": "other", "entries": {}})"),
        std::string(R"({"kind": 3, "entries": {}})")}) {
    write_text(path, text);
    check_left_alone("it is not a tuning cache", [&] { return read_text(path) == text; });
    std::filesystem::remove(path);
  }
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  check_left_alone("it is not a regular file", [&] { return std::filesystem::is_fifo(path); });
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);
  check_left_alone("it is not a regular file", [&] { return std::filesystem::is_directory(path); });
  std::filesystem::remove(path);

  // Read-only (no write permission bit): its decisions are used, nothing is stored in it.
  {
    const TuningCache writer(path);
    writer.store(key_b, report_a, nullptr, Logger(null_sink()));
  }
  const std::string before = read_text(path);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  check_left_alone("is read-only", [&] { return read_text(path) == before; });
  CHECK(TuningCache(path).find(key_b, Logger(null_sink())));
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);

  // Unreadable: only testable without root, who reads any file.
  if (::geteuid() != 0) {
    std::filesystem::permissions(path, std::filesystem::perms::none);
    check_left_alone("cannot be read", [&] {
      std::filesystem::permissions(path, std::filesystem::perms::owner_all);
      const bool same = read_text(path) == before;
      std::filesystem::permissions(path, std::filesystem::perms::none);
      return same;
    });
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  } else {
    WARN("running as root, who reads any file: the unreadable cache is not tested");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache reached through a symbolic link is written through to its target, marked",
          "[cache][trust]") {
  const auto dir = fresh_folder("symlink");
  std::filesystem::create_directories(dir / "shared");
  std::filesystem::create_directories(dir / "server");
  const auto shared = dir / "shared" / "cache.json";
  {
    const TuningCache first(shared);
    first.store(key_a, report_a, nullptr, Logger(null_sink()));
  }
  const auto link = dir / "server" / "cache.json";
  std::filesystem::create_symlink(shared, link);
  const TuningCache cache(link);
  REQUIRE(cache.find(key_a, Logger(null_sink())));
  cache.store(key_b, report_a, nullptr, Logger(null_sink()));
  CHECK(std::filesystem::is_symlink(link));  // still shared
  const auto document = nlohmann::json::parse(read_text(shared));
  CHECK(document["entries"].size() == 2);
  CHECK(document["kind"] == "aitune-tuning-cache");
  CHECK(std::filesystem::exists(shared.string() + ".lock"));  // one lock for every link
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache path through a dangling or looping link is written through, or not at all: "
          "the link stays",
          "[cache][trust]") {
  // Before: either link was silently replaced by a regular file.
  const auto dir = fresh_folder("links");
  SECTION("a link to a file not made yet: made where the link points") {
    const auto link = dir / "cache.json";
    std::filesystem::create_directories(dir / "shared");
    std::filesystem::create_symlink(dir / "shared" / "made.json", link);
    TuningCache(link).store(key_a, report_a, nullptr, Logger(null_sink()));
    CHECK(std::filesystem::is_symlink(link));
    CHECK(std::filesystem::is_regular_file(dir / "shared" / "made.json"));
    CHECK(TuningCache(link).find(key_a, Logger(null_sink())));
  }
  SECTION("a link into a folder that does not exist: an error, nothing written") {
    const auto link = dir / "cache.json";
    std::filesystem::create_symlink(dir / "missing" / "cache.json", link);
    CHECK_THROWS_AS(TuningCache(link).store(key_a, report_a, nullptr, Logger(null_sink())), Error);
    CHECK(std::filesystem::is_symlink(link));
    CHECK_FALSE(std::filesystem::exists(dir / "missing"));
  }
  SECTION("links that go round in a loop: an error that says so, nothing written") {
    std::filesystem::create_symlink(dir / "b.json", dir / "a.json");
    std::filesystem::create_symlink(dir / "a.json", dir / "b.json");
    std::filesystem::create_symlink(dir / "self.json", dir / "self.json");
    for (const char* name : {"a.json", "self.json"}) {
      INFO(name);
      CHECK_THROWS_WITH(
          TuningCache(dir / name).store(key_a, report_a, nullptr, Logger(null_sink())),
          Catch::Contains("leads round in a loop"));
      CHECK(std::filesystem::is_symlink(dir / name));
    }
    // Through tune_with_cache: a warning, and the tuning stands.
    SinkRecorder sink;
    FakeModel model;
    auto strategy = make_strategy(model, {FakeBackend("Fast", 2.0)}, {}, &sink);
    const TuningCache cache(dir / "a.json");
    const auto result = tune_with_cache(strategy, cache, key_a, model, one_sample(), "net");
    CHECK(result.report.selected == "Fast()");
    CHECK(sink.contains("leads round in a loop"));
    CHECK(std::filesystem::is_symlink(dir / "a.json"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("A store waits for another writer's lock only so long, and a hit never waits",
          "[cache][trust]") {
  using namespace std::chrono_literals;
  const auto dir = fresh_folder("lock");
  const auto path = dir / "cache.json";
  TuningCache cache(path);
  cache.store(key_a, report_a, nullptr, Logger(null_sink()));
  cache.set_lock_timeout(300ms);
  // Another writer holds the lock (its own open file description: flock's unit, as a process).
  const int held = ::open((path.string() + ".lock").c_str(), O_RDWR);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);

  auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(cache.store(key_b, report_a, nullptr, Logger(null_sink())),
                    Catch::Contains("is held by another process (waited 0.3 s)"));
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited >= 250ms);
  CHECK(waited < 5s);

  // Through tune_with_cache: one warning, the tuning stands.
  SinkRecorder recorder;
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("Fast", 2.0)}, {}, &recorder);
  CHECK(tune_with_cache(strategy, cache, key_b, model, one_sample(), "net").report.selected ==
        "Fast()");
  CHECK(recorder.contains("the decision was not stored in the tuning cache: the lock"));

  // A hit's digest save takes the memo's lock only if it is free at once: it never waits.
  ::close(held);
  const int memo_held = ::open((path.string() + ".digests.lock").c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(memo_held >= 0);
  REQUIRE(::flock(memo_held, LOCK_EX) == 0);
  (void)cache.digest_of("/bin/sh", Logger(null_sink()));  // an old file: its digest is kept
  start = std::chrono::steady_clock::now();
  CHECK_FALSE(cache.save_digests(Logger(null_sink())));
  CHECK(std::chrono::steady_clock::now() - start < 200ms);
  ::close(memo_held);
  CHECK(cache.save_digests(Logger(null_sink())));
  CHECK_FALSE(cache.find(key_b, Logger(null_sink())));
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache of a newer schema is a warning and is left as it is", "[cache]") {
  const auto dir = fresh_folder("newer");
  const auto path = dir / "cache.json";
  const std::string newer = R"({"schema_version": 99, "entries": {}, "shards": []})";
  write_text(path, newer);
  SinkRecorder recorder;
  const TuningCache cache(path);
  const Logger log(recorder.sink());
  CHECK_FALSE(cache.find(key_a, log));
  cache.store(key_a, report_a, nullptr, log);
  CHECK(read_text(path) == newer);
  CHECK(count_warnings(recorder) == 1);
  CHECK(recorder.contains(
      fmt::format("newer aitune (schema 99; this one reads {})", tuning_cache_schema_version)));
  std::filesystem::remove_all(dir);
}

TEST_CASE("A damaged entry is a warning and a miss", "[cache]") {
  const auto dir = fresh_folder("entry");
  const auto path = dir / "cache.json";
  write_text(path, fmt::format(R"({{"schema_version": {}, "entries": {{"{}": {{"key": 3}}}}}})",
                               tuning_cache_schema_version, TuningCache::entry_id(key_a)));
  SinkRecorder recorder;
  const TuningCache cache(path);
  const Logger log(recorder.sink());
  CHECK_FALSE(cache.find(key_a, log));
  CHECK(recorder.contains("the entry for this key is damaged"));
  cache.store(key_a, report_a, nullptr, log);
  CHECK(cache.find(key_a, log));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Entries of the older schema are misses with one warning, dropped at the next store",
          "[cache]") {
  const auto dir = fresh_folder("older");
  const auto path = dir / "cache.json";
  const std::string digests = R"({"/m.pt2": {"identity": {}, "sha256": "ab"}})";
  write_text(path, fmt::format(R"({{"schema_version": 1, "file_digests": {},
                                    "entries": {{"{}": {{"key": {}, "report": {{}}}}}}}})",
                               digests, TuningCache::entry_id(key_a), key_a.dump()));
  SinkRecorder recorder;
  const TuningCache cache(path);
  const Logger log(recorder.sink());
  CHECK_FALSE(cache.find(key_a, log));
  CHECK_FALSE(cache.find(key_a, log));
  CHECK(count_warnings(recorder) == 1);
  CHECK(recorder.contains("older aitune (schema 1"));
  cache.store(key_b, report_a, nullptr, log);
  const auto document = nlohmann::json::parse(read_text(path));
  CHECK(document["schema_version"] == tuning_cache_schema_version);
  CHECK(document["entries"].size() == 1);
  CHECK(document["entries"].contains(TuningCache::entry_id(key_b)));
  CHECK(document["file_digests"] == nlohmann::json::parse(digests));
  CHECK(recorder.contains("dropped 1 entry of the older schema"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("The settings key changes with every setting that can change a decision",
          "[cache][key]") {
  const StrategyConfig base = StrategyConfig{};
  const nlohmann::json key = settings_key(base);
  CHECK(key == settings_key(StrategyConfig{}));
  // Settings that cannot change the choice stay out of the key.
  CHECK(key == settings_key(StrategyConfig{}
                                .enable_full_errors(true)
                                .enable_memory_watch(false)
                                .enable_peak_reset(true)
                                .set_sink(null_sink())));

  const auto with_decision = [](auto change) {
    DecisionConfig decision;
    change(decision);
    return settings_key(StrategyConfig{}.set_decision(decision));
  };
  const auto with_profiling = [](auto change) {
    ProfilingConfig profiling;
    change(profiling);
    return settings_key(StrategyConfig{}.set_profiling(profiling));
  };
  const auto with_race = [&](auto change) {
    return with_profiling([&](ProfilingConfig& p) {
      RaceConfig race;
      change(race);
      p.set_race(race);
    });
  };
  const auto with_warmup = [&](auto change) {
    return with_profiling([&](ProfilingConfig& p) {
      WarmupConfig warmup;
      change(warmup);
      p.set_warmup(warmup);
    });
  };
  const std::vector<std::pair<std::string, nlohmann::json>> flipped{
      {"performance validation",
       settings_key(StrategyConfig{}.enable_performance_validation(false))},
      {"correctness check", settings_key(StrategyConfig{}.enable_correctness_check(false))},
      {"rule", with_decision([](DecisionConfig& d) { d.set_rule(DecisionRule::aitune_mean); })},
      {"min gain", with_decision([](DecisionConfig& d) { d.set_min_gain(0.05); })},
      {"tie margin", with_decision([](DecisionConfig& d) { d.set_tie_margin(0.03); })},
      {"alpha", with_decision([](DecisionConfig& d) { d.set_alpha(0.05); })},
      {"futility alpha", with_decision([](DecisionConfig& d) { d.set_futility_alpha(0.2); })},
      {"schedule",
       with_profiling([](ProfilingConfig& p) { p.set_schedule(Schedule::sequential); })},
      {"time budget", with_profiling([](ProfilingConfig& p) { p.set_time_budget_ms(5'000); })},
      {"candidate budget",
       with_profiling([](ProfilingConfig& p) { p.set_candidate_time_budget_ms(5'000); })},
      {"block calls", with_race([](RaceConfig& r) { r.set_block_calls(3); })},
      {"discard first call", with_race([](RaceConfig& r) { r.set_discard_first_call(false); })},
      {"switch warm-up", with_race([](RaceConfig& r) { r.set_switch_warmup_ms(5); })},
      {"first look", with_race([](RaceConfig& r) { r.set_looks(12, 1.5, 9); })},
      {"look growth", with_race([](RaceConfig& r) { r.set_looks(10, 2.0, 9); })},
      {"max looks", with_race([](RaceConfig& r) { r.set_looks(10, 1.5, 5); })},
      {"max rounds", with_race([](RaceConfig& r) { r.set_max_rounds(50); })},
      {"max calls", with_race([](RaceConfig& r) { r.set_max_calls(500); })},
      {"first look share", with_race([](RaceConfig& r) { r.set_first_look_share(0.5); })},
      {"futility start", with_race([](RaceConfig& r) { r.set_futility_looks(20, 2); })},
      {"futility cadence", with_race([](RaceConfig& r) { r.set_futility_looks(10, 3); })},
      {"confirmation", with_race([](RaceConfig& r) { r.set_confirmation_rounds(2); })},
      {"seed", with_race([](RaceConfig& r) { r.set_seed(7); })},
      {"warm-up min", with_warmup([](WarmupConfig& w) { w.set_min_calls(3); })},
      {"warm-up max", with_warmup([](WarmupConfig& w) { w.set_max_calls(20); })},
      {"warm-up settle", with_warmup([](WarmupConfig& w) { w.set_settle_ratio(0.9); })},
  };
  for (const auto& [setting, other] : flipped) {
    INFO(setting);
    CHECK(other != key);
  }

  // The sequential schedule is keyed by its stop rule.
  const auto sequential = [](auto rule) {
    return settings_key(StrategyConfig{}.set_profiling(
        ProfilingConfig{}.set_schedule(Schedule::sequential).set_stop_rule(rule)));
  };
  CHECK(sequential(NumSteps(10, 50)) != sequential(NumSteps(10, 60)));
  // Infinity (no budget) is a value JSON can hold and read back.
  CHECK(key["measurement"]["candidate_time_budget_ms"] == "unlimited");
}

TEST_CASE("Writers storing at once lose no entry", "[cache][concurrency]") {
  const auto dir = fresh_folder("writers");
  const auto path = dir / "cache.json";
  constexpr int writers = 6;
  constexpr int each = 8;
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      const TuningCache cache(path);  // its own lock file descriptor, as a process
      for (int i = 0; i < each; ++i)
        cache.store({{"writer", w}, {"i", i}}, {{"selected", fmt::format("{}-{}", w, i)}});
    });
  }
  for (auto& thread : threads)
    thread.join();
  const TuningCache cache(path);
  for (int w = 0; w < writers; ++w) {
    for (int i = 0; i < each; ++i) {
      const auto found = cache.find({{"writer", w}, {"i", i}});
      REQUIRE(found);
      CHECK(found->report["selected"] == fmt::format("{}-{}", w, i));
    }
  }
  // Only the cache and its lock file: no temporary left.
  CHECK(files_in(dir).size() == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A report reads back from its JSON as it was written", "[cache][report]") {
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)});
  const TuneReport report = strategy.tune(model, one_sample(), "net").report;
  const nlohmann::json json = to_json(report, {.raw_samples = true});
  CHECK(json["schema_version"] == report_schema_version);
  CHECK(json["candidates"][1]["samples_ms"].size() == report.candidates[1].latency->n);
  CHECK_FALSE(to_json(report).at("candidates")[1].contains("samples_ms"));
  const TuneReport back = report_from_json(json);
  CHECK(to_json(back, {.raw_samples = true}) == json);
  CHECK(render_table(back) == render_table(report));

  nlohmann::json broken = json;
  broken["candidates"][0]["status"] = "splendid";
  CHECK_THROWS_WITH(report_from_json(broken), Catch::Contains("unknown status 'splendid'"));
  broken = json;
  broken["schema_version"] = 1;
  CHECK_THROWS_WITH(report_from_json(broken), Catch::Contains("not a report of schema"));
}

TEST_CASE("A report of schema 2, which wrote labels for its enums, still reads back",
          "[cache][report]") {
  FakeModel model;
  auto strategy =
      make_strategy(model, {FakeBackend(FakeBehaviour{.name = "Broken", .fail_build = true}),
                            FakeBackend("Fast", 2.0)});
  const TuneReport report = strategy.tune(model, one_sample(), "net").report;
  nlohmann::json json = to_json(report);
  CHECK(json["schema_version"] == 3);
  CHECK(json["candidates"][0]["status"] == "build_failed");  // a snake-case token
  CHECK(json["measurement"]["decision_rule"] == "confident_median");
  // The same report as schema 2 wrote it: labels where schema 3 writes tokens.
  nlohmann::json old = json;
  old["schema_version"] = 2;
  old["candidates"][0]["status"] = "build failed";
  old["measurement"]["decision_rule"] = "confident median";
  const TuneReport back = report_from_json(old);
  CHECK(back.candidates[0].status == CandidateStatus::build_failed);
  CHECK(back.measurement.decision_rule == DecisionRule::confident_median);
  CHECK(to_json(back) == json);
  // Schema 3 reads tokens only: a label there is no status.
  nlohmann::json mixed = json;
  mixed["candidates"][0]["status"] = "build failed";
  CHECK_THROWS_WITH(report_from_json(mixed), Catch::Contains("unknown status 'build failed'"));
}

TEST_CASE("tune_with_cache tunes on a miss, then rebuilds and checks the choice without measuring",
          "[cache][strategy]") {
  const auto dir = fresh_folder("tune");
  SinkRecorder recorder;
  TuningCache cache(dir / "cache.json");
  cache.set_key(test_key);  // signed entries keep the baseline's outputs
  FakeModel model;
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};

  auto first_strategy = make_strategy(model, candidates, {}, &recorder);
  auto first = tune_with_cache(first_strategy, cache, key_a, model, one_sample(), "net");
  CHECK(first.report.selected == "Fast()");
  CHECK_FALSE(first.report.cache_hit);
  REQUIRE(cache.find(key_a));
  CHECK(first.reference_outputs.empty());  // stored, then dropped
  auto plain = make_strategy(model, candidates, {}, &recorder);
  CHECK(plain.tune(model, one_sample(), "net").reference_outputs.empty());  // unless asked
  plain.keep_reference_outputs(true);
  CHECK(plain.tune(model, one_sample(), "net").reference_outputs == std::vector<double>{3.0});

  const double before = model.clock->now_ms();
  auto second_strategy = make_strategy(model, candidates, {}, &recorder);
  auto second = tune_with_cache(second_strategy, cache, key_a, model, one_sample(), "net");
  CHECK(second.report.selected == "Fast()");
  CHECK(second.backend.is_active());
  CHECK(second.backend.calls() == one_sample().size());  // the check's one pass, no timing
  REQUIRE(second.report.cache_hit);
  CHECK(second.report.cache_hit->file == cache.path().string());
  CHECK(second.report.cache_hit->created == cache.find(key_a)->created);
  CHECK(second.report.measurement.calls == first.report.measurement.calls);  // the figures kept
  // Only the choice's check ran on the clock (2 ms), against the baseline's stored outputs:
  // the baseline (10 ms a call) was not built.
  CHECK(model.clock->now_ms() - before == Catch::Detail::Approx(2.0));
  CHECK(second.report.cache_hit->stored_reference);
  CHECK(render_table(second.report).find("from the tuning cache") != std::string::npos);
  CHECK(render_table(second.report).find("against the baseline's outputs stored") !=
        std::string::npos);
  CHECK(report_from_json(to_json(second.report)).cache_hit->stored_reference);

  // A key that differs (another model, shape, candidate set) is a miss and a tuning.
  auto third_strategy = make_strategy(model, candidates, {}, &recorder);
  auto third = tune_with_cache(third_strategy, cache, key_b, model, one_sample(), "net");
  CHECK_FALSE(third.report.cache_hit);
  CHECK(count_warnings(recorder) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A hit on other sample values checks its choice against the baseline, built again",
          "[cache][strategy]") {
  const auto dir = fresh_folder("other_values");
  SinkRecorder recorder;
  TuningCache cache(dir / "cache.json");
  cache.set_key(test_key);
  FakeModel model;
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};
  auto first_strategy = make_strategy(model, candidates, {}, &recorder);
  (void)tune_with_cache(first_strategy, cache, key_a, model, one_sample(), "net");
  REQUIRE(cache.find(key_a)->reference.is_object());

  // The same key (shapes and dtypes alike), other values: the stored outputs are not theirs.
  const std::vector<double> other{4.0};
  const double before = model.clock->now_ms();
  auto second_strategy = make_strategy(model, candidates, {}, &recorder);
  auto second = tune_with_cache(second_strategy, cache, key_a, model, other, "net");
  REQUIRE(second.report.cache_hit);
  CHECK(second.report.selected == "Fast()");
  CHECK_FALSE(second.report.cache_hit->stored_reference);
  CHECK(model.clock->now_ms() - before == Catch::Detail::Approx(12.0));  // baseline + choice
  CHECK(recorder.contains("for other sample values"));
  CHECK(count_warnings(recorder) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Stored baseline outputs that cannot be read are a warning, and the baseline is built",
          "[cache][strategy]") {
  const auto dir = fresh_folder("bad_reference");
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};
  FakeModel model;
  {
    TuningCache cache(dir / "cache.json");
    cache.set_key(test_key);
    auto strategy = make_strategy(model, candidates);
    (void)tune_with_cache(strategy, cache, key_a, model, one_sample(), "net");
  }
  // Damaged by a holder of the key (signed again): the signature holds, the outputs do not.
  const auto damage = [&](const std::string& outputs, bool fix_digest) {
    nlohmann::json file = nlohmann::json::parse(read_text(dir / "cache.json"));
    nlohmann::json& entry = file["entries"][TuningCache::entry_id(key_a)];
    entry["reference"]["outputs"] = outputs;
    if (fix_digest) entry["reference"]["outputs_sha256"] = sha256_hex(outputs);
    sign_again(entry);
    write_text(dir / "cache.json", file.dump());
  };
  for (const auto& [outputs, fix_digest, why] :
       {std::tuple{std::string("9.5"), false, "SHA-256 does not match"},
        std::tuple{std::string("three"), true, "cannot be read"},
        std::tuple{std::string("3,3"), true, "2 outputs for 1 samples"}}) {
    CAPTURE(outputs);
    damage(outputs, fix_digest);
    SinkRecorder recorder;
    TuningCache cache(dir / "cache.json");
    cache.set_key(test_key);
    auto strategy = make_strategy(model, candidates, {}, &recorder);
    auto hit = tune_with_cache(strategy, cache, key_a, model, one_sample(), "net");
    REQUIRE(hit.report.cache_hit);
    CHECK(hit.report.selected == "Fast()");
    CHECK_FALSE(hit.report.cache_hit->stored_reference);
    CHECK(count_warnings(recorder) == 1);
    CHECK(recorder.contains(why));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("Without a key a hit checks its choice against the baseline, and no outputs are stored",
          "[cache][strategy][trust]") {
  const auto dir = fresh_folder("unsigned");
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};
  FakeModel model;
  const TuningCache cache(dir / "cache.json");
  CHECK_FALSE(cache.signs());
  auto first = make_strategy(model, candidates);
  (void)tune_with_cache(first, cache, key_a, model, one_sample(), "net");
  const nlohmann::json file = nlohmann::json::parse(read_text(cache.path()));
  const nlohmann::json& entry = file["entries"][TuningCache::entry_id(key_a)];
  CHECK_FALSE(entry.contains("reference"));  // outputs anyone could edit are not stored
  CHECK_FALSE(entry.contains("signature"));
  const double before = model.clock->now_ms();
  auto second = make_strategy(model, candidates);
  const auto hit = tune_with_cache(second, cache, key_a, model, one_sample(), "net");
  REQUIRE(hit.report.cache_hit);
  CHECK(hit.report.selected == "Fast()");
  CHECK_FALSE(hit.report.cache_hit->stored_reference);
  CHECK(model.clock->now_ms() - before == Catch::Detail::Approx(12.0));  // baseline + choice
  std::filesystem::remove_all(dir);
}

TEST_CASE("A forged cache entry never selects a candidate with wrong outputs, signed or not",
          "[cache][strategy][trust]") {
  const auto dir = fresh_folder("forged");
  FakeBehaviour wrong{"Wrong", {1.0}};
  wrong.output_offset = 0.5;  // faster than both, and incorrect
  const std::vector<FakeBackend> candidates{FakeBackend("Fast", 2.0), FakeBackend(wrong)};
  for (const bool keyed : {false, true}) {
    CAPTURE(keyed);
    FakeModel model;
    TuningCache cache(dir / fmt::format("cache_{}.json", keyed));
    if (keyed) cache.set_key(test_key);
    auto first = make_strategy(model, candidates);
    REQUIRE(tune_with_cache(first, cache, key_a, model, one_sample(), "net").report.selected ==
            "Fast()");
    // The forger makes the report choose Wrong() consistently, and stores Wrong()'s outputs as
    // the baseline's (3.5 for the sample 1.5), with their SHA-256; they do not hold the key.
    nlohmann::json file = nlohmann::json::parse(read_text(cache.path()));
    nlohmann::json& entry = file["entries"][TuningCache::entry_id(key_a)];
    nlohmann::json& report = entry["report"];
    report["selected"] = "Wrong()";
    report["selected_key"] = "fake:Wrong";
    for (nlohmann::json& row : report["candidates"]) {
      row["selected"] = row["backend"] == "Wrong()";
      if (row["backend"] == "Wrong()") {
        row["status"] = "ok";
        row["reason"] = "";
        row["latency"] = report["candidates"][0]["latency"];
        row["latency"]["median"] = 1.0;
      }
    }
    entry["reference"] = {
        {"samples_digest", reference_codec<FakeBackend>::digest(one_sample()).value_or("")},
        {"outputs", "3.5"},
        {"outputs_sha256", sha256_hex("3.5")}};
    write_text(cache.path(), file.dump());

    SinkRecorder recorder;
    auto second = make_strategy(model, candidates, {}, &recorder);
    const auto result = tune_with_cache(second, cache, key_a, model, one_sample(), "net");
    CHECK(result.report.selected == "Fast()");
    CHECK_FALSE(result.report.cache_hit);  // the forged choice failed its check: tuned again
    CHECK(recorder.contains("cannot be reused: incorrect"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("A hit on a reduced-precision run of a graph that is wrong in full precision is refused",
          "[cache][strategy][trust][graph]") {
  // Before: only the cached choice was rebuilt and checked (its bf16 tolerance passes a graph
  // whose weights are wrong), so a forged entry served the bf16 run that a tuning refuses.
  const auto dir = fresh_folder("forged_graph");
  const std::vector<FakeBackend> candidates{graph_run("Fp32", "", true, 4.0),
                                            graph_run("Bf16", "bf16", false, 2.0),
                                            FakeBackend("Other", 6.0)};
  FakeModel model;
  TuningCache cache(dir / "cache.json");
  auto first = make_strategy(model, candidates);
  REQUIRE(tune_with_cache(first, cache, key_a, model, one_sample(), "net").report.selected ==
          "Other()");
  nlohmann::json file = nlohmann::json::parse(read_text(cache.path()));
  nlohmann::json& report = file["entries"][TuningCache::entry_id(key_a)]["report"];
  report["selected"] = "Bf16()";
  report["selected_key"] = "fake:Bf16";
  for (nlohmann::json& row : report["candidates"]) {
    row["selected"] = row["backend"] == "Bf16()";
    if (row["backend"] == "Bf16()") {
      row["status"] = "ok";
      row["reason"] = "";
      row["latency"] = report["baseline"]["latency"];
      row["latency"]["median"] = 1.0;
    }
  }
  write_text(cache.path(), file.dump());

  SinkRecorder recorder;
  auto second = make_strategy(model, candidates, {}, &recorder);
  const auto result = tune_with_cache(second, cache, key_a, model, one_sample(), "net");
  CHECK(result.report.selected == "Other()");
  CHECK_FALSE(result.report.cache_hit);
  CHECK(recorder.contains("cannot be reused: incorrect: the full-precision run of its graph, "
                          "Fp32(), is incorrect"));
  // A graph whose full-precision run passes keeps its cached bf16 run.
  const std::vector<FakeBackend> right{graph_run("Fp32", "", false, 4.0),
                                       graph_run("Bf16", "bf16", false, 2.0)};
  TuningCache fine(dir / "fine.json");
  auto tuned = make_strategy(model, right);
  REQUIRE(tune_with_cache(tuned, fine, key_a, model, one_sample(), "net").report.selected ==
          "Bf16()");
  auto again = make_strategy(model, right);
  const auto hit = tune_with_cache(again, fine, key_a, model, one_sample(), "net");
  CHECK(hit.report.cache_hit);
  CHECK(hit.report.selected == "Bf16()");
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache entry's counts are checked and its texts cleaned before anything prints them",
          "[cache][strategy][trust]") {
  // Before: a forged `rounds: -1` printed as 18446744073709551615 rounds, and a text's escape
  // sequences (a terminal title, a clear screen) reached the terminal.
  const auto dir = fresh_folder("forged_figures");
  FakeModel model;
  TuningCache cache(dir / "cache.json");
  auto first = make_strategy(model, {FakeBackend("Fast", 2.0)});
  REQUIRE(tune_with_cache(first, cache, key_a, model, one_sample(), "net").report.selected ==
          "Fast()");
  const std::string clean = read_text(cache.path());
  const auto forged = [&](const std::function<void(nlohmann::json&)>& forge) {
    nlohmann::json file = nlohmann::json::parse(clean);
    forge(file["entries"][TuningCache::entry_id(key_a)]["report"]);
    write_text(cache.path(), file.dump());
    SinkRecorder recorder;
    auto again = make_strategy(model, {FakeBackend("Fast", 2.0)}, {}, &recorder);
    const auto result = tune_with_cache(again, cache, key_a, model, one_sample(), "net");
    return std::pair{result.report, recorder};
  };
  for (const char* field : {"rounds", "calls", "looks"}) {
    INFO(field);
    const auto [report, recorder] =
        forged([&](nlohmann::json& report) { report["measurement"][field] = -1; });
    CHECK_FALSE(report.cache_hit);  // a miss: tuned again
    CHECK(recorder.contains(fmt::format("{} is -1 in a report, not a count", field)));
    CHECK_FALSE(recorder.contains("18446744073709551615"));
  }
  const auto [shown, recorder] = forged([](nlohmann::json& report) {
    report["decision"] = "fine\x1b]0;PWNED\x07\x1b[2J\nsecond line";
  });
  REQUIRE(shown.cache_hit);
  CHECK(shown.decision == "fine\\x1B]0;PWNED\\x07\\x1B[2J\\x0Asecond line");
  CHECK(render_table(shown).find('\x1b') == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache entry whose report contradicts its choice is a miss with one warning",
          "[cache][strategy][trust]") {
  const auto dir = fresh_folder("contradiction");
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};
  using Edit = void (*)(nlohmann::json&);
  const std::vector<std::tuple<Edit, std::string>> edits{
      {[](nlohmann::json& report) {
         for (nlohmann::json& row : report["candidates"])
           row["selected"] = row["backend"] == "Slow()";
         report["selected"] = "Slow()";  // 12 ms against the baseline's 10
       },
       "slower than the baseline in its own figures"},
      {[](nlohmann::json& report) { report["selected"] = "Missing()"; },
       "which is not among its candidates"},
      {[](nlohmann::json& report) { report["baseline_selected"] = true; },
       "says the baseline was selected, but names Fast()"},
  };
  for (const auto& [edit, why] : edits) {
    CAPTURE(why);
    FakeModel model;
    const TuningCache cache(dir / "cache.json");
    auto first = make_strategy(model, candidates);
    (void)tune_with_cache(first, cache, key_a, model, one_sample(), "net");
    nlohmann::json file = nlohmann::json::parse(read_text(cache.path()));
    edit(file["entries"][TuningCache::entry_id(key_a)]["report"]);
    write_text(cache.path(), file.dump());
    SinkRecorder recorder;
    auto second = make_strategy(model, candidates, {}, &recorder);
    const auto result = tune_with_cache(second, cache, key_a, model, one_sample(), "net");
    CHECK_FALSE(result.report.cache_hit);
    CHECK(result.report.selected == "Fast()");
    CHECK(count_warnings(recorder) == 1);
    CHECK(recorder.contains(why));
    std::filesystem::remove(cache.path());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("With a key, an unsigned or badly signed entry is checked through the baseline, then "
          "signed",
          "[cache][strategy][trust]") {
  const auto dir = fresh_folder("resign");
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};
  FakeModel model;
  {
    const TuningCache unsigned_cache(dir / "cache.json");
    auto first = make_strategy(model, candidates);
    (void)tune_with_cache(first, unsigned_cache, key_a, model, one_sample(), "net");
  }
  TuningCache cache(dir / "cache.json");
  cache.set_key(test_key);
  REQUIRE(cache.find(key_a));
  CHECK_FALSE(cache.find(key_a)->authenticated);
  const double before = model.clock->now_ms();
  auto second = make_strategy(model, candidates);
  const auto hit = tune_with_cache(second, cache, key_a, model, one_sample(), "net");
  REQUIRE(hit.report.cache_hit);
  CHECK(model.clock->now_ms() - before == Catch::Detail::Approx(12.0));  // the baseline built
  REQUIRE(cache.find(key_a));
  CHECK(cache.find(key_a)->authenticated);  // signed once checked

  // Another key does not verify it; the right one does.
  TuningCache other(dir / "cache.json");
  other.set_key("another key of sixteen bytes or more");
  CHECK_FALSE(other.find(key_a)->authenticated);
  CHECK_THROWS_AS(other.set_key("short"), ConfigError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("HMAC-SHA256 gives RFC 4231's values, and a key file must be its owner's alone",
          "[cache][trust]") {
  const auto bytes = [](std::size_t n, char c) { return std::string(n, c); };
  // RFC 4231 test cases 1, 2, 3, 4, 6 and 7 (case 5 truncates the output).
  CHECK(hmac_sha256_hex(bytes(20, '\x0b'), "Hi There") ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(hmac_sha256_hex(bytes(20, '\xaa'), bytes(50, '\xdd')) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (int i = 1; i <= 25; ++i)
    key4.push_back(static_cast<char>(i));
  CHECK(hmac_sha256_hex(key4, bytes(50, '\xcd')) ==
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  CHECK(hmac_sha256_hex(bytes(131, '\xaa'),
                        "Test Using Larger Than Block-Size Key - Hash Key First") ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(hmac_sha256_hex(bytes(131, '\xaa'),
                        "This is a test using a larger than block-size key and a larger than "
                        "block-size data. The key needs to be hashed before being used by the "
                        "HMAC algorithm.") ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
  CHECK(equal_in_constant_time("abc", "abc"));
  CHECK_FALSE(equal_in_constant_time("abc", "abd"));
  CHECK_FALSE(equal_in_constant_time("abc", "ab"));

  const auto dir = fresh_folder("key_file");
  const auto file = dir / "key";
  write_text(file, test_key + "\n");
  std::filesystem::permissions(file, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write);
  CHECK(TuningCache::read_key_file(file) == test_key);  // the newline is not part of it
  std::filesystem::permissions(file, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  CHECK_THROWS_WITH(TuningCache::read_key_file(file), Catch::Contains("may be read by others"));
  CHECK_THROWS_AS(TuningCache::read_key_file(dir / "missing"), ConfigError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Baseline outputs over the cache's limit are not stored", "[cache][strategy]") {
  const auto dir = fresh_folder("reference_limit");
  FakeModel model;
  const std::vector<FakeBackend> candidates{FakeBackend("Fast", 2.0)};
  SinkRecorder recorder;
  // "3" is one byte of text; the limit is 0 (never) or 1 byte.
  TuningCache never(dir / "never.json", 0);
  never.set_key(test_key);
  auto first = make_strategy(model, candidates, {}, &recorder);
  (void)tune_with_cache(first, never, key_a, model, one_sample(), "net");
  CHECK(never.find(key_a)->reference.is_null());

  const std::vector<double> two{1.5, 2.5};  // "3,5": three bytes
  TuningCache small(dir / "small.json", 1);
  small.set_key(test_key);
  auto second = make_strategy(model, candidates, {}, &recorder);
  (void)tune_with_cache(second, small, key_a, model, two, "net");
  CHECK(small.find(key_a)->reference.is_null());
  CHECK(recorder.contains("over its limit"));
  auto third = make_strategy(model, candidates, {}, &recorder);
  (void)tune_with_cache(third, small, key_a, model, one_sample(), "net");  // "3" fits
  CHECK(small.find(key_a)->reference.is_null());                           // a hit stores nothing
  TuningCache fresh(dir / "fresh.json", 1);
  fresh.set_key(test_key);
  auto fourth = make_strategy(model, candidates, {}, &recorder);
  (void)tune_with_cache(fourth, fresh, key_a, model, one_sample(), "net");
  CHECK(fresh.find(key_a)->reference.at("outputs") == "3");
  CHECK(count_warnings(recorder) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cached choice that fails its check now is a warning, a tuning and a replaced entry",
          "[cache][strategy]") {
  const auto dir = fresh_folder("stale");
  SinkRecorder recorder;
  const TuningCache cache(dir / "cache.json");
  FakeModel model;
  auto first_strategy =
      make_strategy(model, {FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)}, {}, &recorder);
  CHECK(tune_with_cache(first_strategy, cache, key_a, model, one_sample(), "net").report.selected ==
        "Fast()");

  // Same key, but "Fast" now computes wrong outputs (say, a driver update broke it).
  FakeBehaviour broken;
  broken.name = "Fast";
  broken.latencies_ms = {2.0};
  broken.output_offset = 0.5;
  auto second_strategy =
      make_strategy(model, {FakeBackend("Slow", 8.0), FakeBackend(broken)}, {}, &recorder);
  auto second = tune_with_cache(second_strategy, cache, key_a, model, one_sample(), "net");
  CHECK_FALSE(second.report.cache_hit);
  CHECK(second.report.selected == "Slow()");
  CHECK(count_warnings(recorder) >= 1);
  CHECK(recorder.contains("cannot be reused: incorrect"));
  CHECK(cache.find(key_a)->report["selected"] == "Slow()");
  std::filesystem::remove_all(dir);
}

TEST_CASE("Through tune_with_cache the cache writes to the strategy's sink, at its level",
          "[cache][strategy][log]") {
  const auto dir = fresh_folder("one_sink");
  const std::filesystem::path path = dir / "cache.json";
  FakeModel model;
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};
  for (const LogLevel threshold : {LogLevel::warning, LogLevel::off}) {
    write_text(path, "{ truncated");
    const TuningCache cache(path);  // no sink of its own
    SinkRecorder recorder;
    auto quiet =
        make_strategy(model, candidates, StrategyConfig{}.set_log_level(threshold), &recorder);
    (void)tune_with_cache(quiet, cache, key_a, model, one_sample(), "net");
    if (threshold == LogLevel::off) {
      CHECK(recorder.lines->empty());
    } else {
      // The unusable file, then keeping it aside: the warning passes, the note does not.
      CHECK(count_warnings(recorder) == 1);
      CHECK(recorder.contains("is unusable"));
      CHECK(recorder.lines->size() == 1);
    }
    CHECK(cache.find(key_a, Logger(null_sink())));  // stored all the same
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cached baseline decision rebuilds only the baseline", "[cache][strategy]") {
  const auto dir = fresh_folder("baseline");
  const TuningCache cache(dir / "cache.json");
  FakeModel model;
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 30.0)};
  auto first_strategy = make_strategy(model, candidates);
  CHECK(
      tune_with_cache(first_strategy, cache, key_a, model, one_sample()).report.baseline_selected);
  auto second_strategy = make_strategy(model, candidates);
  auto second = tune_with_cache(second_strategy, cache, key_a, model, one_sample());
  CHECK(second.report.baseline_selected);
  REQUIRE(second.report.cache_hit);
  CHECK(second.backend.describe() == "TorchEager()");
  CHECK(second.backend.calls() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("File digests are remembered while a file's identity is unchanged", "[cache]") {
  const auto dir = fresh_folder("digests");
  const auto model = dir / "model.bin";
  write_text(model, "abc");
  const TuningCache cache(dir / "cache.json");
  // The memo is a local file of its own beside the cache: never shared through a store.
  const std::filesystem::path memo = cache.path().string() + ".digests";
  REQUIRE(cache.digest_memo().path() == memo);
  CHECK(cache.digest_of(model) == sha256_hex("abc"));
  cache.store(key_a, report_a);
  // Just written: its next change could keep the same times, so it is not remembered yet.
  CHECK_FALSE(std::filesystem::exists(memo));

  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  CHECK(cache.digest_of(model) == sha256_hex("abc"));
  cache.store(key_a, report_a);
  CHECK_FALSE(nlohmann::json::parse(read_text(cache.path())).contains("file_digests"));
  auto document = nlohmann::json::parse(read_text(memo));
  auto& remembered = document["file_digests"][std::filesystem::absolute(model).string()];
  REQUIRE(remembered["sha256"] == sha256_hex("abc"));

  // A later run takes the remembered digest without reading the file: shown by planting one.
  remembered["sha256"] = "planted";
  write_json_file(memo, document);
  const TuningCache later(cache.path());
  CHECK(later.digest_of(model) == "planted");
  // Any rewrite of the file, even to the same size, changes its identity: it is read again.
  write_text(model, "abd");
  CHECK(later.digest_of(model) == sha256_hex("abd"));
  CHECK_FALSE(later.save_digests());  // just written: nothing to remember

  // A hit stores nothing else, but saves what it hashed.
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  CHECK(later.digest_of(model) == sha256_hex("abd"));
  CHECK(later.save_digests());
  CHECK_FALSE(later.save_digests());  // once
  CHECK(nlohmann::json::parse(
            read_text(memo))["file_digests"][std::filesystem::absolute(model).string()]["sha256"] ==
        sha256_hex("abd"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("A stop requested while a store waits for the lock ends the wait at once",
          "[cache][trust]") {
  using namespace std::chrono_literals;
  const auto dir = fresh_folder("lock_stop");
  const auto path = dir / "cache.json";
  std::stop_source stop;
  TuningCache cache(path);
  cache.set_lock_timeout(60s).set_stop_token(stop.get_token());
  const int held = ::open((path.string() + ".lock").c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);
  std::jthread ctrl_c([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(cache.store(key_a, report_a, nullptr, Logger(null_sink())),
                    Catch::Contains("the wait for the lock") && Catch::Contains("was interrupted"));
  CHECK(std::chrono::steady_clock::now() - start < 5s);  // not the 60 s timeout
  ::close(held);
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache keeps at most its entry cap, dropping the oldest entries", "[cache]") {
  const auto dir = fresh_folder("cap");
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  TuningCache cache(dir / "cache.json");
  CHECK_THROWS_AS(cache.set_max_entries(0), ConfigError);
  CHECK(TuningCache(dir / "other.json").max_entries() == default_max_cache_entries);
  cache.set_max_entries(3);
  for (int i = 0; i < 5; ++i) {
    // `created` decides the age: stored out of order, the oldest still go first.
    const int day = (i * 3) % 5;  // 0 3 1 4 2
    cache.store({{"model", i}}, report_a, nullptr, log,
                fmt::format("2026-11-0{}T00:00:00Z", day + 1));
  }
  const auto entries = nlohmann::json::parse(read_text(cache.path())).at("entries");
  CHECK(entries.size() == 3);
  CHECK_FALSE(cache.find({{"model", 0}}, log));  // day 1
  CHECK_FALSE(cache.find({{"model", 2}}, log));  // day 2
  CHECK(cache.find({{"model", 1}}, log));        // day 4
  CHECK(cache.find({{"model", 3}}, log));        // day 5
  CHECK(cache.find({{"model", 4}}, log));        // day 3, the last stored
  CHECK(recorder.contains("dropped the 1 oldest entry (it keeps 3)"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("A cache file is parsed once while it is unchanged, and read again once it changes",
          "[cache]") {
  const auto dir = fresh_folder("parse_once");
  const auto path = dir / "cache.json";
  const Logger log(null_sink());
  const TuningCache reader(path);
  const TuningCache writer(path);
  writer.store(key_a, report_a, nullptr, log);
  REQUIRE(reader.find(key_a, log));
  CHECK_FALSE(reader.find(key_b, log));
  writer.store(key_b, {{"selected", "B"}}, nullptr, log);  // a new file, renamed in
  REQUIRE(reader.find(key_b, log));
  CHECK(reader.find(key_b, log)->report["selected"] == "B");
  // Edited in place (same inode): its size and times change, and it is read again.
  auto document = nlohmann::json::parse(read_text(path));
  document["entries"].erase(TuningCache::entry_id(key_b));
  write_text(path, document.dump());
  CHECK_FALSE(reader.find(key_b, log));
  REQUIRE(reader.find(key_a, log));
  std::filesystem::remove_all(dir);
}

TEST_CASE("A store removes the temporary files of writers killed an hour ago, and no others",
          "[cache]") {
  const auto dir = fresh_folder("stale_tmp");
  const auto path = dir / "cache.json";
  const auto stale = dir / "cache.json.1234abcd.tmp";
  const auto fresh = dir / "cache.json.5678ef.tmp";
  const auto other = dir / "report.json.1234abcd.tmp";
  for (const auto& file : {stale, fresh, other}) {
    write_text(file, "{");
    std::filesystem::last_write_time(file, std::filesystem::file_time_type::clock::now() -
                                               std::chrono::hours(2));
  }
  std::filesystem::last_write_time(fresh, std::filesystem::file_time_type::clock::now());
  TuningCache(path).store(key_a, report_a, nullptr, Logger(null_sink()));
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(fresh));  // perhaps a writer at work
  CHECK(std::filesystem::exists(other));  // not the cache's
  std::filesystem::remove_all(dir);
}

TEST_CASE("A file name that is not valid UTF-8 is stored and written, with U+FFFD for the bad "
          "byte, never a failed write",
          "[cache]") {
  const auto dir = fresh_folder("utf8");
  const TuningCache cache(dir / "cache.json");
  const nlohmann::json key{{"model", "bad\xff.pt"}};
  const nlohmann::json report{{"selected", "A"}, {"module", "bad\xff"}};
  CHECK_NOTHROW(cache.store(key, report, nullptr, Logger(null_sink())));
  CHECK(cache.find(key, Logger(null_sink())));
  CHECK_NOTHROW(write_json_file(dir / "report.json", report));
  CHECK_THAT(read_text(dir / "report.json"), Catch::Contains("bad\xef\xbf\xbd"));
  for (const auto& file : files_in(dir))
    CHECK(file.extension() != ".tmp");
  std::filesystem::remove_all(dir);
}

TEST_CASE("The machine's reduced-precision instruction sets tell apart CPUs of one model name",
          "[cache][key]") {
  // /proc/cpuinfo's flags of two 2-core machines that both call themselves "AMD EPYC".
  const std::string zen2 = "fpu vme de pse tsc msr sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 "
                           "bmi1 bmi2 sha_ni clzero";
  const std::string zen4 = "fpu vme sse sse2 avx f16c avx2 avx512f avx512dq avx512cd avx512bw "
                           "avx512vl avx512_bf16 avx512vbmi avx512_vnni avx512_bitalg gfni";
  CHECK(cpu_features_of(zen2) == std::vector<std::string>{"avx2"});
  CHECK(cpu_features_of(zen4) ==
        std::vector<std::string>{"avx2", "avx512f", "avx512_vnni", "avx512_bf16"});
  const std::string sapphire_rapids = "avx2 avx_vnni avx512f avx512_vnni avx512_bf16 avx512_fp16 "
                                      "amx_bf16 amx_tile amx_int8";
  CHECK(cpu_features_of(sapphire_rapids).size() == 8);
  // A name that only starts like a feature is not that feature.
  CHECK(cpu_features_of("avx2x avx512 amx").empty());
  CHECK(cpu_features_of("").empty());
  // This machine's, as every key and report environment names them.
  const std::vector<std::string>& here = cpu_features();
  CHECK(std::is_sorted(here.begin(), here.end(), [](const std::string& a, const std::string& b) {
    const auto at = [](const std::string& f) {
      return std::find(precision_cpu_features.begin(), precision_cpu_features.end(), f);
    };
    return at(a) < at(b);
  }));
  CHECK_THAT(describe_cpu(), Catch::StartsWith(cpu_model_name() + " ("));
}

TEST_CASE("A file lease is held by one store object at a time, until it is released", "[cache]") {
  using namespace std::chrono_literals;
  const auto dir = fresh_folder("file_lease");
  const Logger log(null_sink());
  const FileStore first(dir / "cache.json");
  const FileStore second(dir / "cache.json");
  const std::string id = TuningCache::entry_id(key_a);
  const auto lease = first.try_lease(id, 1s, log);
  REQUIRE(lease);
  CHECK_FALSE(second.try_lease(id, 1s, log));
  CHECK(second.try_lease(TuningCache::entry_id(key_b), 1s, log));  // another id is free
  CHECK(first.renew(*lease, 1s, log));
  first.release(*lease, log);
  CHECK_FALSE(first.renew(*lease, 1s, log));
  CHECK(second.try_lease(id, 1s, log));
  std::filesystem::remove_all(dir);
}

namespace {

/// The report of a tuning of key_a on the fake backends, as its leader would store it.
nlohmann::json leaders_report(const std::filesystem::path& dir) {
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("Fast", 2.0), FakeBackend("Slow", 20.0)});
  const TuningCache scratch(dir / "leader_scratch.json");
  (void)tune_with_cache(strategy, scratch, key_a, model, one_sample(), "net");
  return scratch.find(key_a)->report;
}

/// A follower's tuning of key_a through `cache`, on a thread of its own: its result, how long
/// it took, and what it said.
struct FollowerRun {
  TuningCache cache;
  std::optional<TuneResult<FakeBackend>> result;
  std::chrono::steady_clock::duration took{};
  SinkRecorder said;
  std::thread thread;

  /// A process of its own, tuning key_a through the cache file `path`, waiting up to `wait` for
  /// another process that holds the key's lease.
  FollowerRun(const std::filesystem::path& path, std::chrono::milliseconds wait) : cache(path) {
    cache.set_leader_wait(wait);
    thread = std::thread([this] {
      FakeModel model;
      auto strategy =
          make_strategy(model, {FakeBackend("Fast", 2.0), FakeBackend("Slow", 20.0)}, {}, &said);
      const auto start = std::chrono::steady_clock::now();
      result.emplace(tune_with_cache(strategy, cache, key_a, model, one_sample(), "net"));
      took = std::chrono::steady_clock::now() - start;
    });
  }
  void join() { thread.join(); }
};

}  // namespace

TEST_CASE("A miss while another process tunes the key waits for its decision, and reuses it",
          "[cache][single-flight]") {
  using namespace std::chrono_literals;
  const auto dir = fresh_folder("single_flight");
  const nlohmann::json report = leaders_report(dir);
  const FileStore leader(dir / "cache.json");  // another process's: an open file of its own
  const std::string id = TuningCache::entry_id(key_a);
  // The leader's lease, as another process holds it.
  const auto take_lease = [&] {
    std::optional<CacheLease> lease = leader.try_lease(id, 30s, Logger(null_sink()));
    REQUIRE(lease);
    return lease;
  };

  SECTION("its decision arrives: reused, nothing measured") {
    const auto lease = take_lease();
    FollowerRun run(dir / "cache.json", 5s);
    std::this_thread::sleep_for(300ms);
    TuningCache(dir / "cache.json").store(key_a, report);
    leader.release(*lease, Logger(null_sink()));
    run.join();
    REQUIRE(run.result->report.cache_hit);
    CHECK(run.result->report.selected == "Fast()");
    CHECK(run.took >= 250ms);
    CHECK(run.said.contains("another process is tuning this key: waiting up to 5 s"));
  }
  SECTION("its holder stops without one: the lease is taken over, and the key tuned here") {
    const auto lease = take_lease();
    FollowerRun run(dir / "cache.json", 10s);
    std::this_thread::sleep_for(300ms);
    leader.release(*lease, Logger(null_sink()));
    run.join();
    CHECK_FALSE(run.result->report.cache_hit);
    CHECK(run.took < 5s);
    CHECK(run.said.contains("stopped without a decision: tuning here"));
    CHECK(TuningCache(dir / "cache.json").find(key_a));  // stored by the new leader
    // whose lease was released on its way out
    CHECK(leader.try_lease(id, 30s, Logger(null_sink())));
  }
  SECTION("no decision within the wait: it tunes too, saying so") {
    const auto lease = take_lease();
    FollowerRun run(dir / "cache.json", 400ms);
    run.join();
    CHECK_FALSE(run.result->report.cache_hit);
    CHECK(run.took >= 400ms);
    CHECK(run.took < 5s);
    CHECK(run.said.contains("no decision from the process tuning this key within"));
  }
  SECTION("a wait of zero never waits") {
    const auto lease = take_lease();
    FollowerRun run(dir / "cache.json", 0ms);
    run.join();
    CHECK_FALSE(run.said.contains("waiting up to"));
    CHECK(run.took < 1s);
  }
  SECTION("the lease is released after a tuning, whichever way it ends") {
    FollowerRun run(dir / "cache.json", default_leader_wait);
    run.join();
    CHECK(leader.try_lease(id, 30s, Logger(null_sink())));
    CHECK_THROWS_AS(run.cache.set_lease_ttl(100ms), ConfigError);
    CHECK_THROWS_AS(run.cache.set_leader_wait(-1ms), ConfigError);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("The caller's check before a tuning runs once on a miss, never on a hit, and its "
          "exception ends the tuning",
          "[cache][strategy]") {
  const auto dir = fresh_folder("before_tuning");
  TuningCache cache(dir / "cache.json");
  FakeModel model;
  const std::vector<FakeBackend> candidates{FakeBackend("Slow", 12.0), FakeBackend("Fast", 2.0)};
  int checks = 0;
  const auto counted = StrategyConfig{}.set_before_tuning([&checks] { ++checks; });

  auto miss = make_strategy(model, candidates, counted);
  CHECK_FALSE(tune_with_cache(miss, cache, key_a, model, one_sample(), "net").report.cache_hit);
  CHECK(checks == 1);
  auto hit = make_strategy(model, candidates, counted);
  CHECK(tune_with_cache(hit, cache, key_a, model, one_sample(), "net").report.cache_hit);
  CHECK(checks == 1);  // a hit is checked by rebuilding its choice, not by the caller's check

  // Its exception is the tuning's, before the baseline is built; nothing is stored, and the
  // key's lease is given back (the next process tunes without waiting).
  const double before = model.clock->now_ms();
  auto refused = make_strategy(model, candidates, StrategyConfig{}.set_before_tuning([] {
    throw Error("the inputs do not fit the model");
  }));
  CHECK_THROWS_WITH(tune_with_cache(refused, cache, key_b, model, one_sample(), "net"),
                    "the inputs do not fit the model");
  CHECK(model.clock->now_ms() == before);
  CHECK_FALSE(cache.find(key_b));
  CHECK(cache.store().try_lease(TuningCache::entry_id(key_b), std::chrono::seconds(1),
                                Logger(null_sink())));
  std::filesystem::remove_all(dir);
}
