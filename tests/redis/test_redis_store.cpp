// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The tuning cache in Redis, against a real redis-server started per test on a free loopback
// port: hits and misses, forged and damaged entries, a dead, hung, restarted or full server, a
// wrong password, leases, and the local file in front.
#include "support/fake_backend.hpp"
#include "support/redis_server.hpp"
#include <aitune/core/cache/cached_tuning.hpp>
#include <aitune/redis.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

using namespace aitune;
using namespace aitune::testing;
using namespace std::chrono_literals;
using aitune::redis::RedisOptions;
using aitune::redis::RedisStore;

namespace {

const nlohmann::json key_a{{"model", "a"}, {"inputs", {"1x3"}}};
const nlohmann::json key_b{{"model", "b"}, {"inputs", {"1x3"}}};
const nlohmann::json report_a{{"selected", "A"}};

std::size_t count_warnings(const SinkRecorder& recorder) {
  std::size_t warnings = 0;
  for (const auto& line : *recorder.lines) {
    if (line.find("WARNING") != std::string::npos) ++warnings;
  }
  return warnings;
}

std::unique_ptr<RedisStore> store_at(const RedisServer& server,
                                     std::chrono::milliseconds timeout = 300ms,
                                     std::chrono::milliseconds retry_after = 30s,
                                     std::string password = {}, std::string user = {}) {
  RedisOptions options;
  options.address = aitune::redis::parse_redis_url(server.url());
  options.address.user = std::move(user);
  options.password = std::move(password);
  options.timeout = timeout;
  options.retry_after = retry_after;
  return std::make_unique<RedisStore>(options);
}

std::string entry_key(const nlohmann::json& key) {
  return "aitune:v2:entry:" + TuningCache::entry_id(key);
}

template <class F>
std::chrono::milliseconds time_of(F&& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

std::filesystem::path fresh_folder(std::string_view name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("aitune_redis_test_{}_{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("A Redis URL names an address, a port and a database, never a password", "[redis]") {
  const auto address = aitune::redis::parse_redis_url("redis://alice@10.0.0.7:6380/3");
  CHECK(address.host == "10.0.0.7");
  CHECK(address.port == 6380);
  CHECK(address.db == 3);
  CHECK(address.user == "alice");
  CHECK(aitune::redis::parse_redis_url("redis://[::1]:7000").host == "::1");
  CHECK(aitune::redis::parse_redis_url("redis://localhost").port == 6379);
  CHECK_THROWS_WITH(aitune::redis::parse_redis_url("redis://alice:secret@10.0.0.7"),
                    Catch::Contains("AITUNE_REDIS_PASSWORD_FILE") && !Catch::Contains("secret"));
  CHECK_THROWS_WITH(aitune::redis::parse_redis_url("redis://cache.internal:6379"),
                    Catch::Contains("not a host name"));
  CHECK_THROWS_WITH(aitune::redis::parse_redis_url("redis://127.0.0.1:99999"),
                    Catch::Contains("port must be a number from 1 to 65535"));
  CHECK_THROWS_WITH(aitune::redis::parse_redis_url("redis://127.0.0.1/x"),
                    Catch::Contains("database number"));
  CHECK_THROWS_AS(aitune::redis::open_cache_store("cache.json", "local.json"), ConfigError);
}

TEST_CASE("A decision stored in Redis is a hit for another cache object, and a miss elsewhere",
          "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server;
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  const TuningCache writer(store_at(server));
  CHECK_FALSE(writer.find(key_a, log));
  writer.store(key_a, report_a, nullptr, log);
  const TuningCache reader(store_at(server));  // another process's, as far as Redis can tell
  const auto hit = reader.find(key_a, log);
  REQUIRE(hit);
  CHECK(hit->report == report_a);
  CHECK(hit->key == key_a);
  CHECK_FALSE(reader.find(key_b, log));
  CHECK(reader.name() == fmt::format("redis://127.0.0.1:{}/0", server.port()));
  CHECK(reader.path().empty());
  // The entry is the file's format, under a versioned key; another database is another cache.
  CHECK(nlohmann::json::parse(server.command({"GET", entry_key(key_a)}))["key"] == key_a);
  RedisOptions other_db = store_at(server)->options();
  other_db.address.db = 1;
  CHECK_FALSE(TuningCache(std::make_unique<RedisStore>(other_db)).find(key_a, log));
  CHECK(count_warnings(recorder) == 0);
}

TEST_CASE("A tuning through a Redis cache stores its decision, and the next one rebuilds it",
          "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server;
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("Fast", 2.0), FakeBackend("Slow", 20.0)});
  const TuningCache cache(store_at(server));
  const auto first = tune_with_cache(strategy, cache, key_a, model, one_sample(), "net");
  CHECK(first.report.selected == "Fast()");
  CHECK_FALSE(first.report.cache_hit);
  const TuningCache again(store_at(server));
  const auto second = tune_with_cache(strategy, again, key_a, model, one_sample(), "net");
  REQUIRE(second.report.cache_hit);
  CHECK(second.report.cache_hit->file == again.name());
  CHECK(second.backend.describe() == "Fast()");
}

TEST_CASE("What Redis hands back is untrusted: forged, truncated and oversized entries are misses",
          "[redis][trust]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server;
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  TuningCache cache(store_at(server));
  cache.set_key("a test key, 32 bytes long, or so");
  cache.store(key_a, report_a, nullptr, log);
  REQUIRE(cache.find(key_a, log));
  CHECK(cache.find(key_a, log)->authenticated);

  // Filed under this machine's key, the entry of another machine (or version): a miss.
  nlohmann::json forged = nlohmann::json::parse(server.command({"GET", entry_key(key_a)}));
  forged["key"] = key_b;
  REQUIRE(server.command({"SET", entry_key(key_a), forged.dump()}) == "OK");
  CHECK_FALSE(cache.find(key_a, log));
  CHECK(recorder.contains("damaged (or filed under another key)"));

  // A signed entry whose report was changed: read, but not trusted (its choice is rebuilt and
  // checked against the baseline, as for an unsigned one).
  nlohmann::json edited = nlohmann::json::parse(json_text(forged));
  edited["key"] = key_a;
  edited["report"]["selected"] = "B";
  REQUIRE(server.command({"SET", entry_key(key_a), edited.dump()}) == "OK");
  const TuningCache fresh_reader = [&] {
    TuningCache reader(store_at(server));
    reader.set_key("a test key, 32 bytes long, or so");
    return reader;
  }();
  REQUIRE(fresh_reader.find(key_a, log));
  CHECK_FALSE(fresh_reader.find(key_a, log)->authenticated);

  // Someone's key of another type under the entry's name: a miss, said once.
  REQUIRE(server.command({"DEL", entry_key(key_a)}) == "1");
  REQUIRE(server.command({"LPUSH", entry_key(key_a), "x"}) == "1");
  SinkRecorder wrong_type;
  CHECK_FALSE(TuningCache(store_at(server)).find(key_a, Logger(wrong_type.sink())));
  CHECK(wrong_type.contains("refused a look-up: WRONGTYPE"));
  REQUIRE(server.command({"DEL", entry_key(key_a)}) == "1");

  // Truncated, not JSON, too deep, too large: refused, each a miss.
  const std::string text = edited.dump();
  for (const std::string& bad :
       {text.substr(0, text.size() / 2), std::string("\x01\x02garbage"), std::string(600, '['),
        std::string("[1, 2, 3]"), std::string(max_stored_entry_bytes + 10, ' ')}) {
    REQUIRE(server.command({"SET", entry_key(key_a), bad}) == "OK");
    SinkRecorder refused;
    CHECK_FALSE(fresh_reader.find(key_a, Logger(refused.sink())));
    CHECK(refused.contains("refused"));
  }
}

TEST_CASE("A Redis that is not there costs one warning and no wait, its puts none more",
          "[redis]") {
  // Nothing listens on a port just freed: the connect is refused at once.
  const int port = free_loopback_port();
  RedisOptions options;
  options.address = aitune::redis::parse_redis_url(fmt::format("redis://127.0.0.1:{}", port));
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  const TuningCache cache(std::make_unique<RedisStore>(options));
  const auto waited = time_of([&] {
    CHECK_FALSE(cache.find(key_a, log));
    CHECK_FALSE(cache.find(key_b, log));
  });
  CHECK(waited < 200ms);
  CHECK(count_warnings(recorder) == 1);
  CHECK(recorder.contains("cannot be used (Connection refused)"));
  // A put while it is down is not stored, and not said again (one warning in all).
  CHECK_FALSE(cache.store().put(TuningCache::entry_id(key_a), report_a, 10, log));
  CHECK_NOTHROW(cache.store(key_a, report_a, nullptr, log));
  CHECK(count_warnings(recorder) == 1);
}

TEST_CASE("A hung Redis (SIGSTOP) holds a look-up and a put no longer than the timeout",
          "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  RedisServer server;
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  const TuningCache cache(store_at(server, 300ms));
  cache.store(key_a, report_a, nullptr, log);  // connected
  server.pause();
  const auto hung = time_of([&] { CHECK_FALSE(cache.find(key_a, log)); });
  CHECK(hung >= 200ms);  // it waited for the answer (less its margin: socket_limit)
  CHECK(hung < 600ms);   // docs/cache.md has the figures of an idle machine
  CHECK(recorder.contains("no answer within 300 ms"));
  // Down for retry_after: no more waits, one warning.
  const auto after = time_of([&] {
    CHECK_FALSE(cache.find(key_a, log));
    CHECK_NOTHROW(cache.store(key_b, report_a, nullptr, log));
  });
  CHECK(after < 100ms);
  CHECK(count_warnings(recorder) == 1);
  // A fresh connection to the hung server: the connect succeeds (the kernel accepts), the
  // select does not answer; still bounded.
  const TuningCache fresh(store_at(server, 300ms));
  const auto connecting = time_of([&] { CHECK_FALSE(fresh.find(key_a, log)); });
  CHECK(connecting < 600ms);
  server.resume();
}

TEST_CASE("A Redis killed and restarted mid-run is a miss meanwhile, and used again after",
          "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  RedisServer server;
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  const TuningCache cache(store_at(server, 300ms, /*retry_after=*/200ms));
  cache.store(key_a, report_a, nullptr, log);
  REQUIRE(cache.find(key_a, log));
  server.kill_now();
  CHECK_FALSE(cache.find(key_a, log));
  CHECK(count_warnings(recorder) == 1);
  server.start();  // empty: it keeps nothing on disk
  std::this_thread::sleep_for(250ms);
  CHECK_FALSE(cache.find(key_a, log));
  cache.store(key_a, report_a, nullptr, log);  // reconnected
  CHECK(cache.find(key_a, log));
}

TEST_CASE("A wrong password is one warning and a miss, and an ACL user with its password works",
          "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server({"--requirepass", "right-password", "--user", "tuner", "on",
                            ">tuner-password", "~aitune:*", "+@all"});
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  const TuningCache wrong(store_at(server, 300ms, 30s, "wrong-password"));
  CHECK_FALSE(wrong.find(key_a, log));
  CHECK(recorder.contains("refused the password"));
  CHECK_FALSE(recorder.contains("wrong-password"));
  const TuningCache none(store_at(server, 300ms, 30s));
  SinkRecorder no_auth;
  CHECK_FALSE(none.find(key_a, Logger(no_auth.sink())));
  CHECK(no_auth.contains("NOAUTH"));
  const TuningCache user(store_at(server, 300ms, 30s, "tuner-password", "tuner"));
  user.store(key_a, report_a, nullptr, log);
  CHECK(user.find(key_a, log));
  CHECK(user.name().find("redis://tuner@127.0.0.1:") == 0);
}

TEST_CASE("A full Redis refuses a put with its own words, and look-ups go on", "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server({"--maxmemory", "1mb", "--maxmemory-policy", "noeviction"});
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  const TuningCache cache(store_at(server));
  cache.store(key_a, report_a, nullptr, log);
  // Fill it to its limit with someone else's data.
  const std::string junk(64 << 10, 'x');
  for (int i = 0; i < 64; ++i) {
    if (server.command({"SET", fmt::format("junk:{}", i), junk}).starts_with("(error) OOM")) break;
  }
  CHECK_THROWS_WITH(
      cache.store(key_b, nlohmann::json{{"selected", std::string(128 << 10, 'y')}}, nullptr, log),
      Catch::Contains("refused SET: OOM"));
  CHECK(cache.find(key_a, log));  // it still answers
  CHECK(count_warnings(recorder) == 0);
}

TEST_CASE("A Redis cache keeps its newest entries, dropping the oldest", "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server;
  TuningCache cache(store_at(server));
  cache.set_max_entries(2);
  const Logger log(null_sink());
  for (int i = 0; i < 4; ++i) {
    cache.store(nlohmann::json{{"model", i}}, report_a, nullptr, log);
    std::this_thread::sleep_for(5ms);  // distinct times in the index
  }
  CHECK(server.command({"ZCARD", "aitune:v2:entries"}) == "2");
  CHECK_FALSE(cache.find(nlohmann::json{{"model", 0}}, log));
  CHECK_FALSE(cache.find(nlohmann::json{{"model", 1}}, log));
  CHECK(cache.find(nlohmann::json{{"model", 2}}, log));
  CHECK(cache.find(nlohmann::json{{"model", 3}}, log));
}

TEST_CASE("A lease goes to one holder at a time, and lapses when its holder stops renewing",
          "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server;
  const Logger log(null_sink());
  const auto first = store_at(server);
  const auto second = store_at(server);
  const std::string id = TuningCache::entry_id(key_a);
  const auto lease = first->try_lease(id, 300ms, log);
  REQUIRE(lease);
  CHECK_FALSE(second->try_lease(id, 300ms, log));
  CHECK(first->renew(*lease, 300ms, log));
  first->release(*lease, log);
  const auto taken = second->try_lease(id, 200ms, log);
  REQUIRE(taken);
  std::this_thread::sleep_for(300ms);  // its holder died: the lease lapses
  const auto retaken = first->try_lease(id, 5s, log);
  REQUIRE(retaken);
  CHECK_FALSE(second->renew(*taken, 5s, log));  // lost: another holds it now
  second->release(*taken, log);                 // and cannot be released by the old holder
  CHECK_FALSE(second->try_lease(id, 300ms, log));
  // A bounded wait for an entry another process stores.
  std::thread storer([&] {
    std::this_thread::sleep_for(200ms);
    TuningCache(store_at(server)).store(key_a, report_a, nullptr, log);
  });
  CHECK(first->wait_for(id, 5s, log, 20ms));
  storer.join();
  CHECK_FALSE(first->wait_for(TuningCache::entry_id(key_b), 100ms, log, 20ms));
}

TEST_CASE("A local file in front of Redis keeps a decision while Redis is down, and pushes it",
          "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const auto dir = fresh_folder("tiered");
  RedisServer server;
  const auto tiered = [&] {
    return std::make_unique<TieredStore>(std::make_unique<FileStore>(dir / "local.json"),
                                         store_at(server, 300ms));
  };
  SinkRecorder recorder;
  const Logger log(recorder.sink());
  server.kill_now();
  {
    const TuningCache down(tiered());
    CHECK_FALSE(down.find(key_a, log));
    down.store(key_a, report_a, nullptr, log);  // kept locally, with a warning
    CHECK(recorder.contains("goes to the shared store at the next start"));
    CHECK(down.find(key_a, log));
  }
  server.start();
  {
    const TuningCache up(tiered());  // the next start: a local hit, pushed
    CHECK(up.find(key_a, log));
    CHECK(recorder.contains("was pushed to it"));
  }
  CHECK(nlohmann::json::parse(server.command({"GET", entry_key(key_a)}))["key"] == key_a);
  // A shared hit is copied to the local file of another machine, within the cache's entry
  // limit (set before any put of its own: the copy is the store's first write).
  std::filesystem::remove(dir / "local.json");
  TuningCache(dir / "local.json").store(key_b, report_a, nullptr, log);
  {
    TuningCache other(tiered());
    other.set_max_entries(1);
    CHECK(other.find(key_a, log));
  }
  CHECK(TuningCache(dir / "local.json").find(key_a, log));
  CHECK_FALSE(TuningCache(dir / "local.json").find(key_b, log));  // beyond the limit
  std::filesystem::remove_all(dir);
}

TEST_CASE("A copy of a Redis cache has a connection of its own, for another thread", "[redis]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server;
  const Logger log(null_sink());
  const TuningCache cache(store_at(server));
  cache.store(key_a, report_a, nullptr, log);
  const TuningCache copy(cache);
  CHECK(&copy.store() != &cache.store());
  std::thread worker([&] {
    for (int i = 0; i < 50; ++i)
      CHECK(copy.find(key_a, log));
  });
  for (int i = 0; i < 50; ++i)
    CHECK(cache.find(key_a, log));
  worker.join();
  const std::string clients = server.command({"CLIENT", "LIST"});
  CHECK(std::count(clients.begin(), clients.end(), '\n') ==
        3);  // the cache's, the copy's, and this command's own
}

TEST_CASE("A tuner's lease is renewed while it tunes, and a killed tuner's lapses for another",
          "[redis][single-flight]") {
  AITUNE_REQUIRE_REDIS_SERVER();
  const RedisServer server;
  const Logger log(null_sink());
  const auto tuner = store_at(server);
  const auto other = store_at(server);
  const std::string id = TuningCache::entry_id(key_a);
  {
    const detail::HeldLease held(*tuner, tuner->try_lease(id, 300ms, log), 300ms, log);
    REQUIRE(held.held());
    std::this_thread::sleep_for(1s);  // three times its time to live: renewed meanwhile
    CHECK_FALSE(other->try_lease(id, 300ms, log));
  }
  // Released on the way out; now a tuner that is killed (never renews, never releases).
  REQUIRE(other->try_lease(id, 300ms, log));
  TuningCache follower(store_at(server));
  follower.set_leader_wait(10s).set_lease_ttl(300ms);
  SinkRecorder said;
  FakeModel model;
  auto strategy = make_strategy(model, {FakeBackend("Fast", 2.0)}, {}, &said);
  const auto took = time_of([&] {
    CHECK(tune_with_cache(strategy, follower, key_a, model, one_sample(), "net").report.selected ==
          "Fast()");
  });
  CHECK(took < 2s);  // the lease's lapse, not the wait's 10 s
  CHECK(said.contains("stopped without a decision: tuning here"));
  CHECK(TuningCache(store_at(server)).find(key_a, log));
}
