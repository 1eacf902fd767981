// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning cache: a JSON file of past decisions, each with the report that measured it,
/// filed under a key that covers everything that can change the answer (the caller builds the
/// key: for LibTorch, aitune::lt::tuning_key). A server that restarts, or a fleet of identical
/// machines sharing the file, tunes once and afterwards only rebuilds and checks the choice.
///
/// The file:
///
///     {"kind": "aitune-tuning-cache", "schema_version": 2,
///      "entries": {"<sha256 of the key>": {"key": {...}, "report": {...}, "created": "...",
///                                          "reference": {...}}}}
///
/// The file is untrusted input: whoever can write it could otherwise choose what a server runs.
/// A hit's choice is checked against the baseline, built again and run on the samples, unless
/// the entry is signed: with a key (TuningCache::set_key, or the file named by the environment
/// variable AITUNE_CACHE_KEY_FILE), each entry stored carries `signature`, an HMAC-SHA256 under
/// that key of the rest of the entry, and only a signed entry keeps `reference`: the baseline's
/// outputs on the samples the decision was checked on, with a digest of those samples (see
/// tune_with_cache), against which a hit on the same samples checks its choice instead of
/// building the baseline. Without a key, a writer of the file can still pick among the correct
/// candidates (a slower one); the key is the only way to stop that.
///
/// Reading needs no lock: writes are atomic renames (write_json_file), so a reader sees an old
/// or a new file, never half of one. Storing reads, merges and writes under an exclusive flock(2)
/// on `<file>.lock`, so entries for other models survive two processes storing at once. That
/// holds on local file systems and on NFS (Linux maps flock to NFS byte-range locks); not on
/// file systems without locks (some FUSE mounts), where the last writer wins. A file this
/// version cannot read is a warning, never an error: one that is not valid JSON is ignored and,
/// when a new entry is stored, kept as `<file>.corrupt-<time>` first; one that is not ours to
/// change (not a regular file, unreadable, read-only, JSON without the `kind` marker, or written
/// by a newer schema) is ignored and left as it is (nothing is stored in it). Entries of an older
/// schema (schema 1: keys made from the settings' text, which left some settings out) are never
/// hits: one warning, and the next store drops them, keeping the file digests.
///
/// Hashing a model file costs about 5 s per GB here, on every start-up. So the file also keeps
/// each hashed file's digest with its identity (device, inode, size, modification and change
/// times in ns): a file whose identity is unchanged is not read again. A file changed in the
/// last two seconds is not remembered (its next change could keep the same times, as git's
/// "racy" index entries), and a file replaced, rewritten or touched gets new times.

#include "aitune/core/detail/cache/hmac.hpp"
#include "aitune/core/detail/cache/sha256.hpp"
#include "aitune/core/detail/text/json_parse.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/message_sink.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace aitune {

/// The version of the cache file's layout this library reads and writes. 2: keys hold the
/// settings by value (settings_key.hpp).
inline constexpr int tuning_cache_schema_version = 2;

/// The marker of a tuning cache file (`"kind"`): valid JSON without it is someone else's file.
inline constexpr std::string_view tuning_cache_kind = "aitune-tuning-cache";

/// How long a store waits for another writer's lock before it gives up (one warning; the
/// tuning stands, its decision not stored).
inline constexpr std::chrono::milliseconds default_cache_lock_timeout{10'000};

/// The shortest key TuningCache::set_key and a key file take: an HMAC key much shorter than
/// its 32-byte output can be guessed.
inline constexpr std::size_t min_cache_key_bytes = 16;

/// How many entries a cache keeps by default: a store beyond it drops the oldest (by `created`),
/// so that a cache shared for years does not grow without end (each start-up reads it whole).
inline constexpr std::size_t default_max_cache_entries = 1000;

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

/// The current time as `2026-11-30T18:54:06Z`: when a cache entry or a report was made.
inline std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

namespace detail {

/// An exclusive flock(2) on a file, released when it goes out of scope, waited for at most
/// `timeout` (a writer stopped with Ctrl-Z, or a stuck NFS lock, must not stall every start-up):
/// then aitune::Error. The file is made with the permissions the umask leaves (0666 before it),
/// so that the accounts of a group can share it; one that may not write it still locks it.
/// A stop requested on `stop` (Ctrl-C) ends the wait at once, with aitune::Error too.
class FileLock {
 public:
  FileLock(const std::filesystem::path& path, std::chrono::milliseconds timeout,
           const std::stop_token& stop = {})
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666)) {
    if (fd_ < 0 && errno == EACCES) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      throw Error(fmt::format("cannot lock '{}': {}", path.string(), std::strerror(errno)));
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int code = errno;
      if (code == EINTR) continue;
      if (code == EWOULDBLOCK && stop.stop_requested()) {
        ::close(fd_);
        throw Error(fmt::format("the wait for the lock '{}' was interrupted", path.string()));
      }
      if (code != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) {
        ::close(fd_);
        throw Error(code == EWOULDBLOCK
                        ? fmt::format("the lock '{}' is held by another process (waited {:.1f} s)",
                                      path.string(), static_cast<double>(timeout.count()) / 1e3)
                        : fmt::format("cannot lock '{}': {}", path.string(), std::strerror(code)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { ::close(fd_); }  // closing releases the lock

 private:
  int fd_;
};

}  // namespace detail

class TuningCache {
 public:
  /// A cache in `path`, created on the first store together with any folder missing above it
  /// (as `mkdir -p` would; a lock file `path` + ".lock" goes beside it).
  /// An entry keeps the baseline's outputs when their text takes at most
  /// `max_stored_output_bytes` (0: never).
  /// The cache has no sink of its own: each call that may warn (a file that cannot be read)
  /// writes to the Logger it is given, which tune_with_cache and lt::tune take from the
  /// StrategyConfig, so that a program sets where messages go once.
  /// The key that signs entries is read from the file named by AITUNE_CACHE_KEY_FILE when that
  /// is set: a file only its owner can read (else aitune::ConfigError, as for one that cannot be
  /// read or is empty).
  explicit TuningCache(std::filesystem::path path,
                       std::size_t max_stored_output_bytes = default_max_stored_output_bytes)
      : path_(std::move(path)), max_stored_output_bytes_(max_stored_output_bytes),
        key_(key_from_environment()) {}

  /// A cache of the same file with the same settings (key, limits, lock timeout, stop token),
  /// and what `other` has read so far: for a holder that must not depend on `other`'s lifetime
  /// (lt::BackgroundTunedModule's worker thread).
  TuningCache(const TuningCache& other)
      : path_(other.path_), max_stored_output_bytes_(other.max_stored_output_bytes_),
        key_(other.key_), lock_timeout_(other.lock_timeout_), stop_(other.stop_),
        max_entries_(other.max_entries_), warned_(other.warned_.load()) {
    {
      const std::lock_guard lock(other.pending_mutex_);
      pending_digests_ = other.pending_digests_;
      computed_digests_ = other.computed_digests_;
    }
    const std::lock_guard lock(other.loaded_mutex_);
    loaded_ = other.loaded_;
    loaded_stamp_ = other.loaded_stamp_;
  }
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

  /// How long a store waits for another process's lock (default_cache_lock_timeout), after
  /// which the decision is not stored: a warning, the tuning stands. Set it before the cache is
  /// shared with other threads.
  TuningCache& set_lock_timeout(std::chrono::milliseconds timeout) {
    if (timeout.count() < 0) throw ConfigError("a tuning cache lock timeout cannot be negative");
    lock_timeout_ = timeout;
    return *this;
  }
  [[nodiscard]] std::chrono::milliseconds lock_timeout() const noexcept { return lock_timeout_; }

  /// A stop requested on `stop` (the program's Ctrl-C) ends a store's wait for the lock at once:
  /// the decision is not stored, with a warning. Set it before the cache is shared.
  TuningCache& set_stop_token(std::stop_token stop) {
    stop_ = std::move(stop);
    return *this;
  }

  /// How many entries the file keeps (default_max_cache_entries, at least 1): a store beyond it
  /// drops the oldest. Set it before the cache is shared with other threads.
  TuningCache& set_max_entries(std::size_t entries) {
    if (entries == 0) throw ConfigError("a tuning cache must keep at least one entry");
    max_entries_ = entries;
    return *this;
  }
  [[nodiscard]] std::size_t max_entries() const noexcept { return max_entries_; }

  /// Whether entries are signed (a key is set).
  [[nodiscard]] bool signs() const noexcept { return !key_.empty(); }

  /// The key in the file `file` names: refused unless only its owner may read or write it.
  [[nodiscard]] static std::string read_key_file(const std::filesystem::path& file) {
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0) {
      throw ConfigError(fmt::format("the tuning cache key file '{}' cannot be read: {}",
                                    file.string(), std::strerror(errno)));
    }
    if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
      throw ConfigError(fmt::format("the tuning cache key file '{}' may be read by others "
                                    "(mode {:o}): make it readable by its owner only (chmod 600)",
                                    file.string(), info.st_mode & 0777));
    }
    std::ifstream in(file, std::ios::binary);
    std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r'))
      key.pop_back();  // a key written by echo keeps working
    if (!in || key.size() < min_cache_key_bytes) {
      throw ConfigError(fmt::format("the tuning cache key file '{}' holds no usable key (at "
                                    "least {} bytes)",
                                    file.string(), min_cache_key_bytes));
    }
    return key;
  }

  [[nodiscard]] std::size_t max_stored_output_bytes() const noexcept {
    return max_stored_output_bytes_;
  }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// The name an entry is filed under: the SHA-256 of the key's JSON text (nlohmann orders an
  /// object's members by name, so equal keys give equal text).
  [[nodiscard]] static std::string entry_id(const nlohmann::json& key) {
    return sha256_hex(json_text(key));
  }

  /// The decision stored for `key`, if the file holds one. A file that cannot be read is a
  /// warning to `log` (once per TuningCache) and a miss.
  [[nodiscard]] std::optional<CachedTuning> find(const nlohmann::json& key,
                                                 const Logger& log = Logger()) const {
    const std::shared_ptr<const Loaded> loaded = load(log);
    if (loaded->state != State::usable) return std::nullopt;
    // As it reads back from the file: infinities become null, integers may change kind.
    const nlohmann::json wanted = nlohmann::json::parse(json_text(key));
    const nlohmann::json& entries = loaded->document.at("entries");
    const auto found = entries.find(entry_id(wanted));
    if (found == entries.end()) return std::nullopt;
    const nlohmann::json& entry = *found;
    if (!entry.is_object() || !entry.contains("key") || !entry.contains("report") ||
        !entry.at("report").is_object() || entry.at("key") != wanted) {
      warn_once(log, fmt::format("tuning cache '{}': the entry for this key is damaged: ignored, "
                                 "and replaced once this tuning is stored",
                                 path_.string()));
      return std::nullopt;
    }
    const auto created = entry.find("created");
    const bool authenticated = signed_by_key(entry);
    return CachedTuning{entry.at("key"), entry.at("report"),
                        created != entry.end() && created->is_string() ? created->get<std::string>()
                                                                       : std::string(),
                        authenticated ? entry.value("reference", nlohmann::json()) : nullptr,
                        authenticated};
  }

  /// The SHA-256 of `file`'s content: remembered from an earlier run when the file's identity
  /// is unchanged, else read (and remembered at the next store). Throws aitune::Error when the
  /// file cannot be read. An unreadable cache is a warning to `log`, as for find.
  [[nodiscard]] std::string digest_of(const std::filesystem::path& file,
                                      const Logger& log = Logger()) const {
    const std::filesystem::path absolute = std::filesystem::absolute(file);
    const std::optional<nlohmann::json> identity = identity_of(absolute);
    if (identity) {
      {
        const std::lock_guard lock(pending_mutex_);
        const auto known = computed_digests_.find(absolute.string());
        if (known != computed_digests_.end() && known->second.at("identity") == *identity) {
          return known->second.at("sha256").get<std::string>();  // read by this object already
        }
      }
      const std::shared_ptr<const Loaded> loaded = load(log);
      if (loaded->has_digests() && loaded->document.contains("file_digests")) {
        const nlohmann::json& digests = loaded->document.at("file_digests");
        const auto found = digests.is_object() ? digests.find(absolute.string()) : digests.end();
        if (found != digests.end() && found->is_object() && found->contains("sha256") &&
            found->at("sha256").is_string() &&
            found->value("identity", nlohmann::json()) == *identity) {
          return found->at("sha256").get<std::string>();
        }
      }
    }
    std::string digest = sha256_file(absolute);
    if (identity) {
      const std::lock_guard lock(pending_mutex_);
      const nlohmann::json entry{{"identity", *identity}, {"sha256", digest}};
      computed_digests_[absolute.string()] = entry;
      if (identity->at("settled").get<bool>()) pending_digests_[absolute.string()] = entry;
    }
    return digest;
  }

  /// Writes the digests computed since the last store, if any, so that the next run need not
  /// read those files (after a hit, which stores nothing else). Returns whether it wrote; a
  /// cache that cannot be written (a read-only shared file) is left as it is. It never waits
  /// for a lock: a hit is not held up by a writer (the digests are saved another time).
  bool save_digests(const Logger& log = Logger()) const noexcept {
    try {
      {
        const std::lock_guard lock(pending_mutex_);
        if (pending_digests_.empty()) return false;
      }
      const detail::FileLock lock(lock_path(), std::chrono::milliseconds(0));
      const std::shared_ptr<const Loaded> loaded = load(log, /*fresh=*/true);
      if (loaded->state != State::usable || read_only(log)) return false;
      nlohmann::json document = loaded->document;
      merge_pending_digests(document);
      write_json_file(target(), document);
      return true;
    } catch (...) {
      return false;
    }
  }

  /// Stores `report` (to_json of a TuneReport) under `key`, with `reference` (the baseline's
  /// outputs, as tune_with_cache writes them; null: none; kept only when the cache signs),
  /// replacing an entry for the same key and keeping every other. `created`: when the report
  /// was measured (default: now). Creates the file, and the folders above it, when missing; a
  /// symbolic link is written through, to its target. Throws aitune::Error when the file cannot
  /// be written. Leaves as it is, with a warning to `log`, a file that is not ours to change:
  /// not a regular file, not readable, read-only (no write permission bit), not a tuning cache
  /// (valid JSON of another kind, a report say), or of a newer schema. What it drops or moves
  /// aside (a file that is not valid JSON) is told to `log`.
  void store(const nlohmann::json& key, nlohmann::json report, nlohmann::json reference = nullptr,
             const Logger& log = Logger(), std::string created = {}) const {
    if (path_.has_parent_path()) {
      std::error_code ignored;
      std::filesystem::create_directories(path_.parent_path(), ignored);
    }
    const detail::FileLock lock(lock_path(), lock_timeout_, stop_);
    Loaded loaded = *load(log, /*fresh=*/true);  // a copy, to change
    // Warned: left for the version that wrote it, or for its owner.
    if (loaded.state == State::newer || loaded.state == State::foreign) return;
    if (loaded.state != State::missing && read_only(log)) return;
    if (loaded.state == State::older) {
      const std::size_t dropped = loaded.document.at("entries").size();
      loaded.document["entries"] = nlohmann::json::object();
      loaded.document["schema_version"] = tuning_cache_schema_version;
      loaded.state = State::usable;
      log.info(0, fmt::format("tuning cache: dropped {} entr{} of the older schema", dropped,
                              dropped == 1 ? "y" : "ies"));
    }
    if (loaded.state == State::unreadable) {
      const std::filesystem::path kept = target().string() + ".corrupt-" + utc_now_iso8601();
      std::error_code moved;
      std::filesystem::rename(target(), kept, moved);
      if (moved) {
        throw Error(fmt::format("tuning cache '{}' cannot be read and cannot be moved aside: {}",
                                path_.string(), moved.message()));
      }
      log.info(0, fmt::format("tuning cache: the unreadable file was kept as '{}'", kept.string()));
    }
    if (loaded.state != State::usable) {
      loaded.document = {{"kind", tuning_cache_kind},
                         {"schema_version", tuning_cache_schema_version},
                         {"entries", nlohmann::json::object()}};
    }
    loaded.document["kind"] = tuning_cache_kind;  // a file of schema 2 written before it had one
    const std::string id = entry_id(key);
    nlohmann::json& entry = loaded.document["entries"][id];
    entry = {{"key", key},
             {"report", std::move(report)},
             {"created", created.empty() ? utc_now_iso8601() : std::move(created)}};
    if (signs()) {
      if (!reference.is_null()) entry["reference"] = std::move(reference);
      entry["signature"] = signature_of(entry);
    }
    drop_oldest_entries(loaded.document["entries"], id, log);
    merge_pending_digests(loaded.document);
    remove_stale_temporaries();
    write_json_file(target(), loaded.document);
  }

 private:
  /// unreadable: not JSON (damaged, and moved aside at a store); foreign: not ours to change.
  enum class State { missing, usable, unreadable, newer, older, foreign };

  struct Loaded {
    State state = State::missing;
    nlohmann::json document{};

    /// Whether its file digests can be used: an older schema's are content hashes too.
    [[nodiscard]] bool has_digests() const noexcept {
      return state == State::usable || state == State::older;
    }
  };

  /// The file written: the path, or the file a symbolic link there points to, followed link by
  /// link (writing the path would replace the link, and a cache shared through links would
  /// silently stop being shared). A link to a file that does not exist yet is written through:
  /// the file is made where it points. Throws when the links go round in a loop (more than 40
  /// of them): the cache is then not written, and the links stay as they are.
  [[nodiscard]] std::filesystem::path target() const {
    std::filesystem::path current = path_;
    for (int links = 0; links <= 40; ++links) {
      std::error_code error;
      if (!std::filesystem::is_symlink(current, error)) return current;
      const std::filesystem::path next = std::filesystem::read_symlink(current, error);
      if (error) {
        throw Error(fmt::format("tuning cache '{}': the link '{}' cannot be read: {}",
                                path_.string(), current.string(), error.message()));
      }
      current = next.is_absolute() ? next : current.parent_path() / next;
    }
    throw Error(fmt::format("tuning cache '{}' is a symbolic link that leads round in a loop "
                            "(or through more than 40 links): nothing is written through it",
                            path_.string()));
  }

  /// Beside the file written, so that every link to one cache takes the same lock.
  [[nodiscard]] std::filesystem::path lock_path() const { return target().string() + ".lock"; }

  /// Whether the existing file has no write permission bit: its owner made it read-only, and it
  /// is left as it is (root could write it, and rename(2) could replace it, regardless).
  [[nodiscard]] bool read_only(const Logger& log) const {
    struct stat info {};
    if (::stat(target().c_str(), &info) != 0 || (info.st_mode & 0222) != 0) return false;
    warn_once(log, fmt::format("tuning cache '{}' is read-only: its decisions are used, and "
                               "nothing is stored in it",
                               path_.string()));
    return true;
  }

  static std::string key_from_environment() {
    const char* file = std::getenv("AITUNE_CACHE_KEY_FILE");
    return file != nullptr && *file != '\0' ? read_key_file(file) : std::string();
  }

  /// The HMAC of `entry` without its signature: over its JSON text, which nlohmann writes with
  /// members in name order, the same before the file is written and after it is read.
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

  void merge_pending_digests(nlohmann::json& document) const {
    const std::lock_guard lock(pending_mutex_);
    if (!document.contains("file_digests") || !document["file_digests"].is_object()) {
      document["file_digests"] = nlohmann::json::object();
    }
    for (const auto& [file, digest] : pending_digests_)
      document["file_digests"][file] = digest;
    pending_digests_.clear();
  }

  /// What changes when a file's content may have: its device and inode, size, and modification
  /// and change times (ns); `settled` when it last changed over two seconds ago. None when it
  /// cannot be stat'ed (the read that follows says why).
  static std::optional<nlohmann::json> identity_of(const std::filesystem::path& file) {
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0) return std::nullopt;
    const auto ns = [](const timespec& time) {
      return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
    };
    const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    const std::int64_t changed_ns = std::max(ns(info.st_mtim), ns(info.st_ctim));
    return nlohmann::json{{"device", static_cast<std::uint64_t>(info.st_dev)},
                          {"inode", static_cast<std::uint64_t>(info.st_ino)},
                          {"size", static_cast<std::int64_t>(info.st_size)},
                          {"mtime_ns", ns(info.st_mtim)},
                          {"ctime_ns", ns(info.st_ctim)},
                          {"settled", now_ns - changed_ns > 2'000'000'000}};
  }

  /// The file, parsed once for as long as it is unchanged (its device, inode, size and times):
  /// a start-up asks for it three times (the file digests, the CLI's look-up, the tuning's), and
  /// a large cache took seconds to parse each time. `fresh`: parsed now, whatever was kept; a
  /// writer under the lock must see the latest file, and times are only as fine as the kernel's
  /// clock tick (an inode freed by a rename can come back with the same size within one).
  std::shared_ptr<const Loaded> load(const Logger& log, bool fresh = false) const {
    std::optional<nlohmann::json> stamp = identity_of(path_);
    if (stamp) stamp->erase("settled");  // the time passing is not a change
    if (!fresh) {
      const std::lock_guard lock(loaded_mutex_);
      if (stamp && loaded_ && *stamp == loaded_stamp_) return loaded_;
    }
    auto loaded = std::make_shared<const Loaded>(parse_file(log));
    const std::lock_guard lock(loaded_mutex_);
    loaded_ = loaded;
    loaded_stamp_ = stamp ? std::move(*stamp) : nlohmann::json();
    return loaded;
  }

  Loaded parse_file(const Logger& log) const {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(path_, error);
    if (!std::filesystem::exists(status)) return {};
    // A FIFO would block the open, a folder or a device is no cache: checked before opening.
    if (!std::filesystem::is_regular_file(status)) {
      return left_alone(log, "it is not a regular file");
    }
    std::ifstream in(path_, std::ios::binary);
    if (!in.is_open())
      return left_alone(log, std::string("it cannot be read: ") + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return left_alone(log, "it cannot be read");
    std::string why;
    nlohmann::json document = parse_json_bounded(text.str(), &why);
    if (document.is_discarded()) return unreadable(log, why);
    // Valid JSON of another kind (a report written over it, say) is someone's file, not damage.
    const auto kind = document.is_object() ? document.find("kind") : document.end();
    const bool marked = kind != document.end() && kind->is_string() &&
                        kind->get_ref<const std::string&>() == tuning_cache_kind;
    const bool unmarked_cache = document.is_object() && !document.contains("kind") &&
                                document.contains("entries");  // schema 1 and 2 had no marker
    if (!marked && !unmarked_cache) return left_alone(log, "it is not a tuning cache");
    if (!document.contains("schema_version")) return unreadable(log, "it has no schema_version");
    if (!document["schema_version"].is_number_integer()) {
      return unreadable(log, "its schema_version is not an integer");
    }
    const auto version = document["schema_version"].get<long long>();
    if (version > tuning_cache_schema_version) {
      warn_once(log,
                fmt::format("tuning cache '{}' was written by a newer aitune (schema {}; this one "
                            "reads {}): ignored, and left as it is",
                            path_.string(), version, tuning_cache_schema_version));
      return {State::newer};
    }
    if (version < 1 || !document.contains("entries") || !document["entries"].is_object()) {
      return unreadable(log, "it has no entries object");
    }
    if (version < tuning_cache_schema_version) {
      warn_once(log,
                fmt::format("tuning cache '{}' holds entries of an older aitune (schema {}; this "
                            "one reads {}), whose keys leave out settings: they are not used, "
                            "and are dropped when this tuning is stored",
                            path_.string(), version, tuning_cache_schema_version));
      return {State::older, std::move(document)};
    }
    return {State::usable, std::move(document)};
  }

  Loaded left_alone(const Logger& log, std::string_view why) const {
    warn_once(log, fmt::format("tuning cache '{}' cannot be used ({}): ignored, and left as it is",
                               path_.string(), why));
    return {State::foreign};
  }

  Loaded unreadable(const Logger& log, std::string_view why) const {
    warn_once(log, fmt::format("tuning cache '{}' is unusable ({}): ignored; it is kept as "
                               "'{}.corrupt-<time>' when this tuning is stored",
                               path_.string(), why, path_.string()));
    return {State::unreadable};
  }

  /// Keeps the newest max_entries_ of `entries` (by `created`, ISO 8601 text that sorts as time),
  /// and always `kept` (the entry just stored).
  void drop_oldest_entries(nlohmann::json& entries, const std::string& kept,
                           const Logger& log) const {
    if (entries.size() <= max_entries_) return;
    std::vector<std::pair<std::string, std::string>> by_age;  // (created, id)
    for (const auto& [id, entry] : entries.items()) {
      if (id == kept) continue;
      const auto created = entry.is_object() ? entry.find("created") : entry.end();
      by_age.emplace_back(created != entry.end() && created->is_string()
                              ? created->get<std::string>()
                              : std::string(),
                          id);
    }
    std::sort(by_age.begin(), by_age.end());
    const std::size_t dropped = entries.size() - max_entries_;
    for (std::size_t i = 0; i < dropped; ++i)
      entries.erase(by_age[i].second);
    log.info(0, fmt::format("tuning cache: dropped the {} oldest entr{} (it keeps {})", dropped,
                            dropped == 1 ? "y" : "ies", max_entries_));
  }

  /// Removes the temporary files of writers of this cache that ended before renaming theirs
  /// (killed, or a crash): `<file>.<unique>.tmp`, unchanged for an hour (a live writer's is
  /// seconds old). Best effort. (POSIX calls: a program linked with the PyTorch wheel resolves
  /// some std::filesystem calls to libtorch.so's older copy, whose remove_all crashes.)
  void remove_stale_temporaries() const noexcept {
    try {
      const std::filesystem::path file = target();
      const std::string folder =
          file.has_parent_path() ? file.parent_path().string() : std::string(".");
      const std::string prefix = file.filename().string() + ".";
      const std::time_t old = std::time(nullptr) - 3600;
      const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), ::closedir);
      if (!dir) return;
      while (const dirent* item = ::readdir(dir.get())) {
        const std::string_view name = item->d_name;
        if (name.size() <= prefix.size() + 4 || !name.starts_with(prefix) ||
            !name.ends_with(".tmp")) {
          continue;
        }
        const std::string path = folder + "/" + std::string(name);
        struct stat info {};
        if (::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_mtime < old) {
          (void)::unlink(path.c_str());
        }
      }
    } catch (...) {
    }
  }

  void warn_once(const Logger& log, const std::string& text) const {
    if (!warned_.exchange(true)) log.warn(0, text);
  }

  std::filesystem::path path_;
  std::size_t max_stored_output_bytes_;
  std::string key_;  ///< signs entries; empty: none. Never logged.
  std::chrono::milliseconds lock_timeout_ = default_cache_lock_timeout;
  std::stop_token stop_{};
  std::size_t max_entries_ = default_max_cache_entries;
  mutable std::mutex loaded_mutex_;
  mutable std::shared_ptr<const Loaded> loaded_;  ///< the file as last parsed
  mutable nlohmann::json loaded_stamp_;           ///< its identity then
  mutable std::atomic<bool> warned_{false};
  mutable std::mutex pending_mutex_;
  mutable std::map<std::string, nlohmann::json> pending_digests_;   ///< for the next store
  mutable std::map<std::string, nlohmann::json> computed_digests_;  ///< read by this object
};

}  // namespace aitune
