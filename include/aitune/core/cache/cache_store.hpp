// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The seam under the tuning cache: where its entries are kept. TuningCache decides what an
/// entry holds, signs it, checks what comes back and how many are kept; a CacheStore only keeps
/// entries under their ids, and leases an id to one tuner at a time. FileStore (a local or
/// shared file, file_store.hpp) is the first; aitune::redis::RedisStore (aitune/redis.hpp, its
/// own target: it needs hiredis) shares decisions across a fleet; TieredStore puts a local file
/// in front of a remote one.
///
/// Whatever a store hands back is untrusted input: the caller checks every entry
/// (TuningCache::find). A store's fault is never an exception where a miss will do: `get` and
/// `try_lease` say nothing on a miss and warn once on a fault; `put` throws aitune::Error (the
/// caller warns: the tuning stands, its decision not kept there).

#include "aitune/core/message_sink.hpp"
#include "aitune/core/text/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

namespace aitune {

/// The most text one entry may take as a store hands it back (a larger one is refused, a miss):
/// a report (a few KiB) and the stored outputs (default_max_stored_output_bytes, 256 KiB) fit
/// many times over.
inline constexpr std::size_t max_stored_entry_bytes = std::size_t{4} << 20;

/// How many entries a cache keeps by default: a put beyond it drops the oldest (by `created`),
/// so that a cache shared for years does not grow without end (each start-up reads a file whole).
inline constexpr std::size_t default_max_cache_entries = 1000;

/// One tuner's claim on an id, from CacheStore::try_lease: others are refused the same id until
/// it is released, or until its time to live passes without a renew (a process that died
/// mid-tuning does not block the fleet).
struct CacheLease {
  std::string id;     ///< the entry id leased
  std::string token;  ///< unique to this lease: only its holder renews or releases it
};

class CacheStore {
 public:
  CacheStore() = default;
  CacheStore(const CacheStore&) = delete;
  CacheStore& operator=(const CacheStore&) = delete;
  virtual ~CacheStore() = default;

  /// Where the entries are, for messages and reports (a path, or redis://host:port/db).
  [[nodiscard]] virtual std::string name() const = 0;

  /// How long a put waits for another writer's lock, for a store that takes one (FileStore).
  virtual void set_lock_timeout(std::chrono::milliseconds /*timeout*/) {}
  /// A stop requested on `stop` (Ctrl-C) ends a wait of the store's at once.
  virtual void set_stop_token(std::stop_token /*stop*/) {}
  /// The entry limit for what a store writes of its own accord (a TieredStore's copy of a
  /// shared hit, its push at the next start); a put names its own.
  virtual void set_max_entries(std::size_t /*entries*/) {}

  /// The local file this store keeps entries in, if it has one (for a tool to show or remove).
  [[nodiscard]] virtual std::optional<std::string> local_file() const { return std::nullopt; }

  /// The entry filed under `id`, as the store holds it (untrusted): none on a miss, and on a
  /// fault (a warning to `log`, once per store).
  [[nodiscard]] virtual std::optional<nlohmann::json> get(const std::string& id,
                                                          const Logger& log) const = 0;

  /// Whether an entry is filed under `id` (false on a fault too: see reachable).
  [[nodiscard]] virtual bool has(const std::string& id, const Logger& log) const {
    return get(id, log).has_value();
  }

  /// Whether the store answered its last request (a file store always does).
  [[nodiscard]] virtual bool reachable() const { return true; }

  /// Files `entry` under `id`, replacing what was there; keeps at most `max_entries`, dropping
  /// the oldest by their `created` (ISO 8601 text) and never `id`. Throws aitune::Error when it
  /// is not stored; returns false, with a warning, when the store is not ours to change (a
  /// read-only file, one of a newer schema), and false when it is unreachable (said once, at
  /// the fault).
  virtual bool put(const std::string& id, const nlohmann::json& entry, std::size_t max_entries,
                   const Logger& log) const = 0;

  /// A lease on `id` for `ttl`, or none when another holds it (or the store cannot say: a
  /// fault is a warning, and none).
  [[nodiscard]] virtual std::optional<CacheLease>
  try_lease(const std::string& id, std::chrono::milliseconds ttl, const Logger& log) const = 0;
  /// Extends `lease` by `ttl` from now: false when it was lost (expired and taken by another).
  virtual bool renew(const CacheLease& lease, std::chrono::milliseconds ttl,
                     const Logger& log) const = 0;
  /// Gives `lease` up (nothing when it was lost already).
  virtual void release(const CacheLease& lease, const Logger& log) const = 0;

  /// The entry under `id`, waiting up to `timeout` for one to appear (another process's tuning
  /// ending): polls `get` every `poll`.
  [[nodiscard]] virtual std::optional<nlohmann::json>
  wait_for(const std::string& id, std::chrono::milliseconds timeout, const Logger& log,
           std::chrono::milliseconds poll = std::chrono::milliseconds(100)) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (std::optional<nlohmann::json> entry = get(id, log)) return entry;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return std::nullopt;
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(poll, deadline - now));
    }
  }

  /// A store of the same place with the same settings and no shared state, for another thread
  /// (a connection is used by one thread at a time).
  [[nodiscard]] virtual std::unique_ptr<CacheStore> clone() const = 0;
};

/// An entry as a store hands it back as text: refused (none, with `why` set) when it is over
/// max_stored_entry_bytes, not JSON (bounded in depth), or not an object.
[[nodiscard]] inline std::optional<nlohmann::json> entry_from_text(std::string_view text,
                                                                   std::string* why) {
  if (text.size() > max_stored_entry_bytes) {
    *why = "the entry is larger than " + std::to_string(max_stored_entry_bytes >> 20) + " MiB";
    return std::nullopt;
  }
  nlohmann::json entry = parse_json_bounded(text, why);
  if (entry.is_discarded()) return std::nullopt;
  if (!entry.is_object()) {
    *why = "the entry is not a JSON object";
    return std::nullopt;
  }
  return entry;
}

}  // namespace aitune
