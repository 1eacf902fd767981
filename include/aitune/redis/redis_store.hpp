// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// RedisStore: the tuning cache's entries in Redis, shared by every machine of a kind (target
/// aitune::redis, which links Debian's hiredis 0.14; not part of aitune.hpp).
///
/// Keys (`<prefix>` is "aitune:" by default; the schema version is in the name, so another
/// version's entries are misses, never errors):
///
///     <prefix>v2:entry:<id>   an entry's JSON text (TuningCache's format, the file's too)
///     <prefix>v2:entries      a sorted set of ids by the time they were stored (to drop the
///     oldest) <prefix>v2:lease:<id>   a lease's token, with a time to live (SET NX PX)
///
/// A fault is never an exception on a look-up and never a wait beyond the bound: every request
/// (connect, AUTH, SELECT and the command) shares one deadline, `RedisOptions::timeout` from its
/// start; hiredis bounds each socket call with the time left (redisSetTimeout; a server that
/// answers a byte at a time can stretch it by one call). A fault (refused, reset, timed out, a
/// wrong password) is one warning; the connection is dropped and no request is made for
/// `RedisOptions::retry_after`, so a dead server costs a tuning one timeout, not one per request.
/// SIGPIPE is blocked on the calling thread around each request (a host that does not ignore it
/// would die writing to a closed socket). Host names are not resolved (getaddrinfo has no time
/// bound): give an address, or localhost. The client has no TLS: see docs/cache.md.

#include "aitune/core/cache/cache_store.hpp"
#include "aitune/core/cache/file_store.hpp"
#include "aitune/core/cache/tiered_store.hpp"
#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/message_sink.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace aitune::redis {

/// Where a Redis is: from `redis://[user@]host[:port][/db]`.
struct RedisAddress {
  std::string host;  ///< an IPv4 or IPv6 address, or localhost
  int port = 6379;
  int db = 0;
  std::string user;  ///< a Redis 7 ACL user; empty: the default user
};

/// Whether `spec` names a Redis (else it is a file).
[[nodiscard]] inline bool is_redis_url(std::string_view spec) {
  return spec.starts_with("redis://");
}

namespace detail {

[[nodiscard]] inline int url_number(std::string_view text, int low, int high, std::string_view what,
                                    std::string_view url) {
  int value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < low ||
      value > high) {
    throw ConfigError(
        fmt::format("'{}': the {} must be a number from {} to {}", url, what, low, high));
  }
  return value;
}

}  // namespace detail

/// Parses `redis://[user@]host[:port][/db]`: aitune::ConfigError naming what is wrong. A
/// password in the URL is refused (it would show in `ps`): it comes from the environment
/// (redis_password_from_environment). A host name is refused (resolving it has no time bound).
[[nodiscard]] inline RedisAddress parse_redis_url(std::string_view url) {
  if (!is_redis_url(url)) {
    throw ConfigError(fmt::format("'{}' is not a Redis URL (redis://host:port/db)", url));
  }
  std::string_view rest = url.substr(8);
  RedisAddress address;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view user = rest.substr(0, at);
    if (user.find(':') != std::string_view::npos) {
      throw ConfigError(fmt::format(
          "'redis://{}:***@...' holds a password, which would show in `ps` and in logs: give it "
          "in the file named by AITUNE_REDIS_PASSWORD_FILE, or in AITUNE_REDIS_PASSWORD",
          user.substr(0, user.find(':'))));
    }
    address.user = std::string(user);
    rest = rest.substr(at + 1);
  }
  std::string_view host_port = rest;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    host_port = rest.substr(0, slash);
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) address.db = detail::url_number(db, 0, 65535, "database number", url);
  }
  std::string_view port;
  if (host_port.starts_with('[')) {  // [IPv6]:port
    const auto close = host_port.find(']');
    if (close == std::string_view::npos) {
      throw ConfigError(fmt::format("'{}': an IPv6 address needs its closing ']'", url));
    }
    address.host = std::string(host_port.substr(1, close - 1));
    const std::string_view after = host_port.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) {
      throw ConfigError(fmt::format("'{}': a port follows ']' as ':port'", url));
    }
    port = after.empty() ? after : after.substr(1);
  } else {
    const auto colon = host_port.find(':');
    address.host = std::string(host_port.substr(0, colon));
    if (colon != std::string_view::npos) port = host_port.substr(colon + 1);
  }
  if (!port.empty()) address.port = detail::url_number(port, 1, 65535, "port", url);
  if (address.host.empty()) throw ConfigError(fmt::format("'{}' names no host", url));
  in6_addr ignored{};
  const bool numeric = ::inet_pton(AF_INET, address.host.c_str(), &ignored) == 1 ||
                       ::inet_pton(AF_INET6, address.host.c_str(), &ignored) == 1;
  if (!numeric && address.host != "localhost") {
    throw ConfigError(fmt::format("'{}': give the server's address, not a host name (resolving "
                                  "'{}' has no time bound, and a slow DNS would hold up every "
                                  "start-up)",
                                  url, address.host));
  }
  return address;
}

/// The Redis password: the file named by AITUNE_REDIS_PASSWORD_FILE (its owner's only, as a
/// cache key file), else AITUNE_REDIS_PASSWORD; empty when neither is set.
[[nodiscard]] inline std::string redis_password_from_environment() {
  const char* file = std::getenv("AITUNE_REDIS_PASSWORD_FILE");
  if (file != nullptr && *file != '\0') return read_secret_file(file, "Redis password", 1);
  const char* password = std::getenv("AITUNE_REDIS_PASSWORD");
  return password != nullptr ? std::string(password) : std::string();
}

/// The bound on one request by default: a start-up never waits longer than this on a store that
/// is down or hung, and a local Redis answers in well under a millisecond.
inline constexpr std::chrono::milliseconds default_redis_timeout{500};

/// How long after a fault no request is made by default (each is a miss, or a put refused).
inline constexpr std::chrono::milliseconds default_redis_retry_after{30'000};

struct RedisOptions {
  RedisAddress address;
  std::string password;  ///< empty: none. Never logged.
  std::chrono::milliseconds timeout = default_redis_timeout;
  std::chrono::milliseconds retry_after = default_redis_retry_after;
  std::string prefix = "aitune:";

  /// Options for `url`, with the password from the environment.
  [[nodiscard]] static RedisOptions from_url(std::string_view url) {
    RedisOptions options;
    options.address = parse_redis_url(url);
    options.password = redis_password_from_environment();
    return options;
  }
};

class RedisStore final : public CacheStore {
 public:
  explicit RedisStore(RedisOptions options) : options_(std::move(options)) {
    if (options_.timeout.count() <= 0) throw ConfigError("a Redis timeout must be positive");
    if (options_.retry_after.count() < 0) {
      throw ConfigError("a Redis retry delay cannot be negative");
    }
  }
  ~RedisStore() override = default;

  [[nodiscard]] std::string name() const override {
    const RedisAddress& at = options_.address;
    const bool v6 = at.host.find(':') != std::string::npos;
    return fmt::format("redis://{}{}{}{}:{}/{}", at.user.empty() ? "" : at.user + "@",
                       v6 ? "[" : "", at.host, v6 ? "]" : "", at.port, at.db);
  }

  [[nodiscard]] const RedisOptions& options() const noexcept { return options_; }

  /// Whether its last request was answered, and it takes leases.
  [[nodiscard]] bool reachable() const override { return !down() && !leases_refused_.load(); }

  [[nodiscard]] std::optional<nlohmann::json> get(const std::string& id,
                                                  const Logger& log) const override {
    // GETRANGE bounds what an honest server sends: one byte over the limit says "too large".
    const Reply reply =
        request({"GETRANGE", entry_key(id), "0", std::to_string(max_stored_entry_bytes)}, log);
    if (reply && reply->type == REDIS_REPLY_ERROR && !warned_.exchange(true)) {
      // Not a fault of the connection (WRONGTYPE: someone's key of another type; NOPERM: the
      // ACL user may not read it): a miss, said once.
      log.warn(0, fmt::format("tuning cache '{}' refused a look-up: {}", name(),
                              std::string_view(reply->str, reply->len).substr(0, 200)));
    }
    if (!reply || reply->type != REDIS_REPLY_STRING || reply->len == 0) return std::nullopt;
    std::string why;
    std::optional<nlohmann::json> entry =
        entry_from_text(std::string_view(reply->str, reply->len), &why);
    if (!entry) {
      log.warn(0, fmt::format("tuning cache '{}': the entry for this key is refused ({}): a miss",
                              name(), why));
    }
    return entry;
  }

  [[nodiscard]] bool has(const std::string& id, const Logger& log) const override {
    const Reply reply = request({"EXISTS", entry_key(id)}, log);
    return reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
  }

  bool put(const std::string& id, const nlohmann::json& entry, std::size_t max_entries,
           const Logger& log) const override {
    const std::string text = json_text(entry);
    if (text.size() > max_stored_entry_bytes) {
      throw Error(fmt::format("the entry takes {} KiB, over the {} MiB an entry may take",
                              text.size() >> 10, max_stored_entry_bytes >> 20));
    }
    const Reply stored = request({"SET", entry_key(id), text}, log);
    if (!stored) return false;  // down: said once by request, not again for each put
    checked_reply(stored, "SET");
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    checked_reply(request({"ZADD", index_key(), std::to_string(now_ms), id}, log), "ZADD");
    drop_oldest(id, max_entries, log);
    return true;
  }

  [[nodiscard]] std::optional<CacheLease> try_lease(const std::string& id,
                                                    std::chrono::milliseconds ttl,
                                                    const Logger& log) const override {
    CacheLease lease{id, random_token()};
    const Reply reply = request({"SET", lease_key(id), lease.token, "NX", "PX",
                                 std::to_string(std::max<std::int64_t>(ttl.count(), 1))},
                                log);
    if (reply && reply->type == REDIS_REPLY_ERROR) {
      // A full Redis (OOM) or an ACL user without SET: no one can lease; a miss tunes at once.
      leases_refused_ = true;
      if (!warned_.exchange(true)) {
        log.warn(0, fmt::format("tuning cache '{}' refused a lease: {}", name(),
                                std::string_view(reply->str, reply->len).substr(0, 200)));
      }
    }
    if (!reply || reply->type != REDIS_REPLY_STATUS) return std::nullopt;  // nil: held
    return lease;
  }

  bool renew(const CacheLease& lease, std::chrono::milliseconds ttl,
             const Logger& log) const override {
    static constexpr const char* script =
        "if redis.call('GET', KEYS[1]) == ARGV[1] then "
        "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
    const Reply reply = request({"EVAL", script, "1", lease_key(lease.id), lease.token,
                                 std::to_string(std::max<std::int64_t>(ttl.count(), 1))},
                                log);
    return reply && reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
  }

  void release(const CacheLease& lease, const Logger& log) const override {
    static constexpr const char* script = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
                                          "return redis.call('DEL', KEYS[1]) else return 0 end";
    (void)request({"EVAL", script, "1", lease_key(lease.id), lease.token}, log);
  }

  [[nodiscard]] std::unique_ptr<CacheStore> clone() const override {
    return std::make_unique<RedisStore>(options_);
  }

 private:
  struct FreeReply {
    void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
  };
  struct FreeContext {
    void operator()(redisContext* context) const noexcept { redisFree(context); }
  };
  using Reply = std::unique_ptr<redisReply, FreeReply>;
  using Clock = std::chrono::steady_clock;

  /// SIGPIPE blocked on this thread while it lives; one raised meanwhile is taken off the queue.
  class SigpipeBlocked {
   public:
    SigpipeBlocked() {
      sigemptyset(&pipe_);
      sigaddset(&pipe_, SIGPIPE);
      sigset_t pending;
      sigpending(&pending);
      was_pending_ = sigismember(&pending, SIGPIPE) == 1;
      pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    SigpipeBlocked(const SigpipeBlocked&) = delete;
    SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;
    ~SigpipeBlocked() {
      sigset_t pending;
      sigpending(&pending);
      if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
        const timespec now{0, 0};
        (void)sigtimedwait(&pipe_, nullptr, &now);
      }
      pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }

   private:
    sigset_t pipe_{};
    sigset_t old_{};
    bool was_pending_ = false;
  };

  [[nodiscard]] std::string versioned() const {
    return options_.prefix + "v" + std::to_string(tuning_cache_schema_version) + ":";
  }
  [[nodiscard]] std::string entry_key(const std::string& id) const {
    return versioned() + "entry:" + id;
  }
  [[nodiscard]] std::string index_key() const { return versioned() + "entries"; }
  [[nodiscard]] std::string lease_key(const std::string& id) const {
    return versioned() + "lease:" + id;
  }

  static std::string random_token() {
    std::random_device device;
    return fmt::format("{:08x}{:08x}{:08x}{:08x}", device(), device(), device(), device());
  }

  [[nodiscard]] bool down() const {
    return Clock::now().time_since_epoch().count() < down_until_.load();
  }

  /// An error reply (OOM: the store is full; READONLY: a replica) is the store's refusal.
  void checked_reply(const Reply& reply, std::string_view command) const {
    if (!reply) throw Error(fmt::format("'{}' is unreachable", name()));
    if (reply->type == REDIS_REPLY_ERROR) {
      throw Error(fmt::format("'{}' refused {}: {}", name(), command,
                              std::string_view(reply->str, reply->len).substr(0, 200)));
    }
  }

  /// Keeps the newest `max_entries` ids of the index (and `kept`), deleting the others' entries.
  void drop_oldest(const std::string& kept, std::size_t max_entries, const Logger& log) const {
    const Reply count = request({"ZCARD", index_key()}, log);
    if (!count || count->type != REDIS_REPLY_INTEGER ||
        static_cast<std::size_t>(count->integer) <= max_entries) {
      return;
    }
    const std::size_t excess = static_cast<std::size_t>(count->integer) - max_entries;
    const Reply oldest = request({"ZRANGE", index_key(), "0", std::to_string(excess)}, log);
    if (!oldest || oldest->type != REDIS_REPLY_ARRAY) return;
    std::size_t dropped = 0;
    for (std::size_t i = 0; i < oldest->elements && dropped < excess; ++i) {
      const redisReply* item = oldest->element[i];
      if (item->type != REDIS_REPLY_STRING) continue;
      const std::string id(item->str, item->len);
      if (id == kept) continue;
      (void)request({"DEL", entry_key(id)}, log);
      (void)request({"ZREM", index_key(), id}, log);
      ++dropped;
    }
    log.info(0, fmt::format("tuning cache '{}': dropped the {} oldest entr{} (it keeps {})", name(),
                            dropped, dropped == 1 ? "y" : "ies", max_entries));
  }

  /// One command, its arguments binary-safe: the reply (an error reply too), or none on a
  /// fault (warned once; the connection dropped; no request for retry_after).
  Reply request(const std::vector<std::string>& args, const Logger& log) const {
    const std::lock_guard lock(mutex_);
    if (down()) return nullptr;
    const SigpipeBlocked blocked;
    const Clock::time_point deadline = Clock::now() + options_.timeout;
    std::string fault;
    if (!context_) fault = connect(deadline);
    if (fault.empty()) {
      Reply reply = command(args, deadline, &fault);
      if (reply) return reply;
    }
    context_.reset();
    down_until_ = (Clock::now() + options_.retry_after).time_since_epoch().count();
    if (!warned_.exchange(true)) {
      log.warn(0, fmt::format("tuning cache '{}' cannot be used ({}): this process goes on "
                              "without it for {:.0f} s (its decisions are tuned or read here)",
                              name(), fault, options_.retry_after.count() / 1e3));
    }
    return nullptr;
  }

  /// What a socket call may wait before `deadline`: the time left, less a fifth of it (at most
  /// 50 ms), since the kernel rounds a socket's timeout up to its timer's tick and wakes the
  /// thread late (a 300 ms bound took 316 to 323 ms here without the margin, and up to 305 ms
  /// with a tenth); at least 1 ms (0 would be no timeout).
  static timeval socket_limit(Clock::time_point deadline) {
    const std::int64_t left =
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
    const std::int64_t limit =
        std::max<std::int64_t>(left - std::min<std::int64_t>(left / 5, 50'000), 1000);
    return timeval{static_cast<time_t>(limit / 1'000'000),
                   static_cast<suseconds_t>(limit % 1'000'000)};
  }

  /// Bounds the socket's calls by the time left before `deadline`.
  bool bound_by(Clock::time_point deadline) const {
    return redisSetTimeout(context_.get(), socket_limit(deadline)) == REDIS_OK;
  }

  Reply command(const std::vector<std::string>& args, Clock::time_point deadline,
                std::string* fault) const {
    if (Clock::now() >= deadline) {
      *fault = fmt::format("no answer within {} ms", options_.timeout.count());
      return nullptr;
    }
    if (!bound_by(deadline)) {
      *fault = "its socket's timeout cannot be set";
      return nullptr;
    }
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const std::string& arg : args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    Reply reply(static_cast<redisReply*>(redisCommandArgv(
        context_.get(), static_cast<int>(argv.size()), argv.data(), lengths.data())));
    if (!reply) {
      // A socket call that ran out of its time fails with EAGAIN, whose text hiredis keeps.
      const bool timed_out = context_->err == REDIS_ERR_IO &&
                             std::string_view(context_->errstr) == std::strerror(EAGAIN);
      *fault = timed_out ? fmt::format("no answer within {} ms", options_.timeout.count())
                         : std::string(context_->errstr[0] != '\0' ? context_->errstr
                                                                   : "the connection failed");
    }
    return reply;
  }

  /// Connects, authenticates and selects the database before `deadline`: "" or what failed.
  std::string connect(Clock::time_point deadline) const {
    const timeval limit = socket_limit(deadline);
    const std::string host =
        options_.address.host == "localhost" ? "127.0.0.1" : options_.address.host;
    context_.reset(redisConnectWithTimeout(host.c_str(), options_.address.port, limit));
    if (!context_) return "out of memory";
    if (context_->err != 0) return context_->errstr;
    std::string fault;
    if (!options_.password.empty()) {
      std::vector<std::string> auth{"AUTH"};
      if (!options_.address.user.empty()) auth.push_back(options_.address.user);
      auth.push_back(options_.password);
      const Reply reply = command(auth, deadline, &fault);
      if (!reply) return fault;
      if (reply->type == REDIS_REPLY_ERROR) {
        return "it refused the password: " + std::string(reply->str, reply->len).substr(0, 200);
      }
    } else if (!options_.address.user.empty()) {
      return fmt::format("the user '{}' needs a password (AITUNE_REDIS_PASSWORD_FILE)",
                         options_.address.user);
    }
    const Reply selected =
        command({"SELECT", std::to_string(options_.address.db)}, deadline, &fault);
    if (!selected) return fault;
    if (selected->type == REDIS_REPLY_ERROR) {
      return std::string(selected->str, selected->len).substr(0, 200);  // NOAUTH, a bad db
    }
    return {};
  }

  RedisOptions options_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<redisContext, FreeContext> context_;
  mutable std::atomic<Clock::rep> down_until_{0};
  mutable std::atomic<bool> warned_{false};
  mutable std::atomic<bool> leases_refused_{false};
};

/// The store a `--cache` argument names: a RedisStore for `redis://...` (the password from the
/// environment), with a FileStore in front of it when `local` is given (TieredStore); else a
/// FileStore of the path (`local` must then be empty: aitune::ConfigError).
[[nodiscard]] inline std::unique_ptr<CacheStore>
open_cache_store(const std::string& spec, const std::filesystem::path& local = {},
                 std::chrono::milliseconds timeout = default_redis_timeout) {
  if (!is_redis_url(spec)) {
    if (!local.empty()) {
      throw ConfigError("a local first level goes in front of a Redis cache only (redis://...)");
    }
    return std::make_unique<FileStore>(spec);
  }
  RedisOptions options = RedisOptions::from_url(spec);
  options.timeout = timeout;
  auto shared = std::make_unique<RedisStore>(std::move(options));
  if (local.empty()) return shared;
  return std::make_unique<TieredStore>(std::make_unique<FileStore>(local), std::move(shared));
}

}  // namespace aitune::redis
