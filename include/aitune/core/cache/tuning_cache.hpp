// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning cache: past decisions, each with the report that measured it, filed under a key
/// that covers everything that can change the answer (the caller builds the key: for LibTorch,
/// aitune::lt::tuning_key). A server that restarts, or a fleet of identical machines sharing the
/// cache, tunes once and afterwards only rebuilds and checks the choice.
///
/// TuningCache decides what an entry holds, signs it, checks what comes back and how many are
/// kept; where entries are kept is its CacheStore (cache_store.hpp): a file (FileStore, the
/// default), Redis (aitune/redis.hpp), or a local file in front of Redis (TieredStore). An entry:
///
///     {"key": {...}, "report": {...}, "created": "...", "reference": {...}, "signature": "..."}
///
/// filed under the SHA-256 of its key's JSON text. What a store hands back is untrusted input:
/// whoever can write it could otherwise choose what a server runs. A hit's choice is checked
/// against the baseline, built again and run on the samples, unless the entry is signed: with a
/// key (TuningCache::set_key, or the file named by the environment variable
/// AITUNE_CACHE_KEY_FILE), each entry stored carries `signature`, an HMAC-SHA256 under that key
/// of the rest of the entry, and only a signed entry keeps `reference`: the baseline's outputs
/// on the samples the decision was checked on, with a digest of those samples (see
/// tune_with_cache), against which a hit on the same samples checks its choice instead of
/// building the baseline. Without a key, a writer of the store can still pick among the correct
/// candidates (a slower one); the key is the only way to stop that. An entry whose stored key
/// is not the key asked for (another machine's, another version's, filed under this id by a
/// forger) is a miss.
///
/// The model files' digests that keys hold are remembered on local disk (file_digest_memo.hpp).

#include "aitune/core/cache/cache_store.hpp"
#include "aitune/core/cache/file_digest_memo.hpp"
#include "aitune/core/cache/file_store.hpp"
#include "aitune/core/cache/hmac.hpp"
#include "aitune/core/cache/sha256.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/message_sink.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>

namespace aitune {

/// The shortest key TuningCache::set_key and a key file take: an HMAC key much shorter than
/// its 32-byte output can be guessed.
inline constexpr std::size_t min_cache_key_bytes = 16;

/// How long a process that misses while another tunes the same key waits for that decision by
/// default, before it tunes too (TuningCache::set_leader_wait).
inline constexpr std::chrono::milliseconds default_leader_wait{std::chrono::minutes(5)};

/// How long a tuner's lease on a key lives without a renewal by default: a process killed
/// mid-tuning blocks the others that long at most (TuningCache::set_lease_ttl).
inline constexpr std::chrono::milliseconds default_lease_ttl{std::chrono::seconds(30)};

/// A decision the cache holds: what it was tuned for, the report (to_json) and when.
struct CachedTuning {
  nlohmann::json key;
  nlohmann::json report;
  std::string created;         ///< UTC, ISO 8601
  nlohmann::json reference{};  ///< the baseline's stored outputs; null when none were stored
  /// Signed with the cache's key: its stored outputs can be trusted as the baseline's.
  bool authenticated = false;
};

/// How much text of baseline outputs an entry may hold by default: every start-up reads the
/// whole file, so large outputs (a segmentation map) are not stored, and their hits build the
/// baseline. 256 KiB holds a 1000-class output (6.7 KiB as text) for 38 samples.
inline constexpr std::size_t default_max_stored_output_bytes = std::size_t{256} << 10;

/// A secret in `file`, refused (aitune::ConfigError naming `what`) unless only its owner may
/// read or write it, and unless it holds `min_bytes` at least (a trailing newline is dropped).
[[nodiscard]] inline std::string read_secret_file(const std::filesystem::path& file,
                                                  std::string_view what, std::size_t min_bytes) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) {
    throw ConfigError(fmt::format("the {} file '{}' cannot be read: {}", what, file.string(),
                                  std::strerror(errno)));
  }
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    throw ConfigError(fmt::format("the {} file '{}' may be read by others (mode {:o}): make it "
                                  "readable by its owner only (chmod 600)",
                                  what, file.string(), info.st_mode & 0777));
  }
  std::ifstream in(file, std::ios::binary);
  std::string secret((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r'))
    secret.pop_back();  // a secret written by echo keeps working
  if (!in || secret.size() < min_bytes) {
    throw ConfigError(fmt::format("the {} file '{}' holds no usable {} (at least {} byte{})", what,
                                  file.string(), what, min_bytes, min_bytes == 1 ? "" : "s"));
  }
  return secret;
}

class TuningCache {
 public:
  /// A cache in the file `path` (a FileStore), its digest memo beside it (`path` + ".digests").
  /// An entry keeps the baseline's outputs when their text takes at most
  /// `max_stored_output_bytes` (0: never).
  /// The cache has no sink of its own: each call that may warn (a store that cannot be read)
  /// writes to the Logger it is given, which tune_with_cache and lt::tune take from the
  /// StrategyConfig, so that a program sets where messages go once.
  /// The key that signs entries is read from the file named by AITUNE_CACHE_KEY_FILE when that
  /// is set: a file only its owner can read (else aitune::ConfigError, as for one that cannot be
  /// read or is empty).
  explicit TuningCache(std::filesystem::path path,
                       std::size_t max_stored_output_bytes = default_max_stored_output_bytes)
      : TuningCache(std::make_unique<FileStore>(std::move(path)), max_stored_output_bytes) {}

  /// A cache whose entries `store` keeps; its digest memo beside the store's local file, or in
  /// default_digest_memo_path() when it has none.
  explicit TuningCache(std::unique_ptr<CacheStore> store,
                       std::size_t max_stored_output_bytes = default_max_stored_output_bytes)
      : store_(checked(std::move(store))),
        memo_(store_->local_file()
                  ? std::optional<std::filesystem::path>(*store_->local_file() + ".digests")
                  : default_digest_memo_path()),
        max_stored_output_bytes_(max_stored_output_bytes), key_(key_from_environment()) {}

  /// A cache of the same store with the same settings (key, limits, lock timeout, stop token),
  /// a store object of its own (a connection serves one thread) and what `other` has read so
  /// far: for a holder that must not depend on `other`'s lifetime (lt::BackgroundTunedModule's
  /// worker thread).
  TuningCache(const TuningCache& other)
      : store_(other.store_->clone()), memo_(other.memo_),
        max_stored_output_bytes_(other.max_stored_output_bytes_), key_(other.key_),
        lock_timeout_(other.lock_timeout_), max_entries_(other.max_entries_),
        leader_wait_(other.leader_wait_), lease_ttl_(other.lease_ttl_),
        warned_(other.warned_.load()) {}
  TuningCache& operator=(const TuningCache&) = delete;

  /// Signs the entries stored from now on with `key` (its bytes, min_cache_key_bytes at least),
  /// and trusts the stored outputs only of entries signed with it. Never logged. Set it before
  /// the cache is shared with other threads.
  TuningCache& set_key(std::string key) {
    if (key.size() < min_cache_key_bytes) {
      throw ConfigError(
          fmt::format("a tuning cache key needs at least {} bytes (32 random bytes are best)",
                      min_cache_key_bytes));
    }
    key_ = std::move(key);
    return *this;
  }

  /// How long a store waits for another process's file lock (default_cache_lock_timeout), after
  /// which the decision is not stored: a warning, the tuning stands. Set it before the cache is
  /// shared with other threads.
  TuningCache& set_lock_timeout(std::chrono::milliseconds timeout) {
    if (timeout.count() < 0) throw ConfigError("a tuning cache lock timeout cannot be negative");
    lock_timeout_ = timeout;
    store_->set_lock_timeout(timeout);
    return *this;
  }
  [[nodiscard]] std::chrono::milliseconds lock_timeout() const noexcept { return lock_timeout_; }

  /// A stop requested on `stop` (the program's Ctrl-C) ends a store's wait for the lock at once:
  /// the decision is not stored, with a warning. Set it before the cache is shared.
  TuningCache& set_stop_token(std::stop_token stop) {
    store_->set_stop_token(std::move(stop));
    return *this;
  }

  /// How many entries the store keeps (default_max_cache_entries, at least 1): a store beyond
  /// it drops the oldest. Set it before the cache is shared with other threads.
  TuningCache& set_max_entries(std::size_t entries) {
    if (entries == 0) throw ConfigError("a tuning cache must keep at least one entry");
    max_entries_ = entries;
    store_->set_max_entries(entries);
    return *this;
  }
  [[nodiscard]] std::size_t max_entries() const noexcept { return max_entries_; }

  /// How long a process that misses while another holds the key's lease (tunes it) waits for
  /// that decision, before it tunes too (default_leader_wait; 0: it never waits). A
  /// BackgroundTunedModule serves the baseline meanwhile. Set it before the cache is shared.
  TuningCache& set_leader_wait(std::chrono::milliseconds wait) {
    if (wait.count() < 0) throw ConfigError("a tuning cache's leader wait cannot be negative");
    leader_wait_ = wait;
    return *this;
  }
  [[nodiscard]] std::chrono::milliseconds leader_wait() const noexcept { return leader_wait_; }

  /// How long a tuner's lease lives without a renewal (default_lease_ttl, 300 ms at least): the
  /// tuner renews it every third of that, and a process killed mid-tuning holds the others up
  /// that long at most. Set it before the cache is shared.
  TuningCache& set_lease_ttl(std::chrono::milliseconds ttl) {
    if (ttl < std::chrono::milliseconds(300)) {
      throw ConfigError("a tuning cache's lease needs 300 ms at least to be renewed in time");
    }
    lease_ttl_ = ttl;
    return *this;
  }
  [[nodiscard]] std::chrono::milliseconds lease_ttl() const noexcept { return lease_ttl_; }

  /// Whether entries are signed (a key is set).
  [[nodiscard]] bool signs() const noexcept { return !key_.empty(); }

  /// The key in the file `file` names: refused unless only its owner may read or write it.
  [[nodiscard]] static std::string read_key_file(const std::filesystem::path& file) {
    return read_secret_file(file, "tuning cache key", min_cache_key_bytes);
  }

  [[nodiscard]] std::size_t max_stored_output_bytes() const noexcept {
    return max_stored_output_bytes_;
  }

  /// Where the entries are, for messages and reports: a path, or redis://host:port/db.
  [[nodiscard]] std::string name() const { return store_->name(); }

  /// The store's local file (empty when it has none: Redis alone).
  [[nodiscard]] std::filesystem::path path() const {
    return store_->local_file().value_or(std::string());
  }

  [[nodiscard]] const CacheStore& store() const noexcept { return *store_; }
  [[nodiscard]] const FileDigestMemo& digest_memo() const noexcept { return memo_; }

  /// The name an entry is filed under: the SHA-256 of the key's JSON text (nlohmann orders an
  /// object's members by name, so equal keys give equal text).
  [[nodiscard]] static std::string entry_id(const nlohmann::json& key) {
    return sha256_hex(json_text(key));
  }

  /// The decision stored for `key`, if the store holds one. A store that cannot be read, or an
  /// entry that is damaged or filed under the wrong key, is a warning to `log` (once per
  /// TuningCache) and a miss.
  [[nodiscard]] std::optional<CachedTuning> find(const nlohmann::json& key,
                                                 const Logger& log = Logger()) const {
    // As it reads back from a store: infinities become null, integers may change kind.
    const nlohmann::json wanted = nlohmann::json::parse(json_text(key));
    const std::optional<nlohmann::json> entry = store_->get(entry_id(wanted), log);
    if (!entry) return std::nullopt;
    if (!entry->is_object() || !entry->contains("key") || !entry->contains("report") ||
        !entry->at("report").is_object() || entry->at("key") != wanted) {
      warn_once(log, fmt::format("tuning cache '{}': the entry for this key is damaged (or filed "
                                 "under another key): ignored, and replaced once this tuning is "
                                 "stored",
                                 name()));
      return std::nullopt;
    }
    const auto created = entry->find("created");
    const bool authenticated = signed_by_key(*entry);
    return CachedTuning{
        entry->at("key"), entry->at("report"),
        created != entry->end() && created->is_string() ? created->get<std::string>()
                                                        : std::string(),
        authenticated ? entry->value("reference", nlohmann::json()) : nullptr, authenticated};
  }

  /// The SHA-256 of `file`'s content, from the digest memo when the file is unchanged. Throws
  /// aitune::Error when the file cannot be read.
  [[nodiscard]] std::string digest_of(const std::filesystem::path& file,
                                      const Logger& /*log*/ = Logger()) const {
    return memo_.digest_of(file);
  }

  /// Writes the digests computed since the last save to the memo, so that the next run need not
  /// read those files (after a hit, which stores nothing else). Returns whether it wrote; it
  /// never waits for a lock.
  bool save_digests(const Logger& /*log*/ = Logger()) const noexcept { return memo_.save(); }

  /// Stores `report` (to_json of a TuneReport) under `key`, with `reference` (the baseline's
  /// outputs, as tune_with_cache writes them; null: none; kept only when the cache signs),
  /// replacing an entry for the same key and keeping every other (up to max_entries).
  /// `created`: when the report was measured (default: now). Throws aitune::Error when it is
  /// not stored; a store that is not ours to change is left as it is, with a warning to `log`
  /// (CacheStore::put). The digests computed since the last save go to the memo too.
  void store(const nlohmann::json& key, nlohmann::json report, nlohmann::json reference = nullptr,
             const Logger& log = Logger(), std::string created = {}) const {
    nlohmann::json entry = {{"key", key},
                            {"report", std::move(report)},
                            {"created", created.empty() ? utc_now_iso8601() : std::move(created)}};
    if (signs()) {
      if (!reference.is_null()) entry["reference"] = std::move(reference);
      entry["signature"] = signature_of(entry);
    }
    (void)memo_.save();
    (void)store_->put(entry_id(key), entry, max_entries_, log);
  }

 private:
  static std::unique_ptr<CacheStore> checked(std::unique_ptr<CacheStore> store) {
    if (!store) throw ConfigError("a tuning cache needs a store");
    return store;
  }

  static std::string key_from_environment() {
    const char* file = std::getenv("AITUNE_CACHE_KEY_FILE");
    return file != nullptr && *file != '\0' ? read_key_file(file) : std::string();
  }

  /// The HMAC of `entry` without its signature: over its JSON text, which nlohmann writes with
  /// members in name order, the same before it is stored and after it is read.
  [[nodiscard]] std::string signature_of(const nlohmann::json& entry) const {
    nlohmann::json unsigned_entry = entry;
    unsigned_entry.erase("signature");
    return hmac_sha256_hex(key_, json_text(unsigned_entry));
  }

  [[nodiscard]] bool signed_by_key(const nlohmann::json& entry) const {
    if (!signs()) return false;
    const auto signature = entry.find("signature");
    return signature != entry.end() && signature->is_string() &&
           equal_in_constant_time(signature->get_ref<const std::string&>(), signature_of(entry));
  }

  void warn_once(const Logger& log, const std::string& text) const {
    if (!warned_.exchange(true)) log.warn(0, text);
  }

  std::unique_ptr<CacheStore> store_;
  FileDigestMemo memo_;
  std::size_t max_stored_output_bytes_;
  std::string key_;  ///< signs entries; empty: none. Never logged.
  std::chrono::milliseconds lock_timeout_ = default_cache_lock_timeout;
  std::size_t max_entries_ = default_max_cache_entries;
  std::chrono::milliseconds leader_wait_ = default_leader_wait;
  std::chrono::milliseconds lease_ttl_ = default_lease_ttl;
  mutable std::atomic<bool> warned_{false};
};

}  // namespace aitune
