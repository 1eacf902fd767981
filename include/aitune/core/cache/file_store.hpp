// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// FileStore: the tuning cache's entries in one JSON file, for one machine or for machines that
/// share a file system.
///
///     {"kind": "aitune-tuning-cache", "schema_version": 2,
///      "entries": {"<sha256 of the key>": {"key": {...}, "report": {...}, "created": "...",
///                                          "reference": {...}, "signature": "..."}}}
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
/// hits: one warning, and the next store drops them.
///
/// A lease is a byte-range lock (an open file description lock, fcntl F_OFD_SETLK) on
/// `<file>.leases` at an offset taken from the id: the kernel drops it when its holder exits,
/// so it needs no time to live, and renew only checks that it is still held.

#include "aitune/core/cache/cache_store.hpp"
#include "aitune/core/cache/sha256.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/io/file_identity.hpp"
#include "aitune/core/io/file_lock.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/text/json_parse.hpp"

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
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
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

/// The current time as `2026-11-30T18:54:06Z`: when a cache entry or a report was made.
inline std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

class FileStore final : public CacheStore {
 public:
  /// Entries in `path`, created on the first put together with any folder missing above it
  /// (as `mkdir -p` would; a lock file `path` + ".lock" goes beside it).
  explicit FileStore(std::filesystem::path path) : path_(std::move(path)) {}

  /// How long a put waits for another process's lock (default_cache_lock_timeout).
  void set_lock_timeout(std::chrono::milliseconds timeout) override { lock_timeout_ = timeout; }
  /// A stop requested on `stop` (the program's Ctrl-C) ends a put's wait for the lock at once.
  void set_stop_token(std::stop_token stop) override { stop_ = std::move(stop); }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::string name() const override { return path_.string(); }
  [[nodiscard]] std::optional<std::string> local_file() const override { return path_.string(); }

  [[nodiscard]] std::optional<nlohmann::json> get(const std::string& id,
                                                  const Logger& log) const override {
    const std::shared_ptr<const Loaded> loaded = load(log);
    if (loaded->state != State::usable) return std::nullopt;
    const nlohmann::json& entries = loaded->document.at("entries");
    const auto found = entries.find(id);
    if (found == entries.end()) return std::nullopt;
    return *found;
  }

  /// Also: creates the file, and the folders above it, when missing; a symbolic link is written
  /// through, to its target. Leaves as it is (false, warned) a file that is not ours to change:
  /// not a regular file, not readable, read-only (no write permission bit), not a tuning cache
  /// (valid JSON of another kind, a report say), or of a newer schema. What it drops or moves
  /// aside (a file that is not valid JSON) is told to `log`.
  bool put(const std::string& id, const nlohmann::json& entry, std::size_t max_entries,
           const Logger& log) const override {
    if (path_.has_parent_path()) {
      std::error_code ignored;
      std::filesystem::create_directories(path_.parent_path(), ignored);
    }
    const detail::FileLock lock(lock_path(), lock_timeout_, stop_);
    Loaded loaded = *load(log, /*fresh=*/true);  // a copy, to change
    // Warned: left for the version that wrote it, or for its owner.
    if (loaded.state == State::newer || loaded.state == State::foreign) return false;
    if (loaded.state != State::missing && read_only(log)) return false;
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
    loaded.document["entries"][id] = entry;
    drop_oldest_entries(loaded.document["entries"], id, max_entries, log);
    remove_stale_temporaries();
    write_json_file(target(), loaded.document);
    return true;
  }

  [[nodiscard]] std::optional<CacheLease> try_lease(const std::string& id,
                                                    std::chrono::milliseconds /*ttl*/,
                                                    const Logger& log) const override {
    try {
      const int fd = ::open(leases_path().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
      if (fd < 0) throw Error(std::strerror(errno));
      struct flock range = lease_range(id, F_WRLCK);
      if (::fcntl(fd, F_OFD_SETLK, &range) != 0) {
        const int code = errno;
        ::close(fd);
        if (code == EAGAIN || code == EACCES) return std::nullopt;  // held by another
        throw Error(std::strerror(code));
      }
      CacheLease lease{id, fmt::format("fd{}-{}", fd, ++lease_count_)};
      const std::lock_guard lock(leases_mutex_);
      held_leases_[lease.token] = fd;
      return lease;
    } catch (const std::exception& error) {
      leases_fail_ = true;  // no one waits for a lease that nobody can take
      warn_once(log, fmt::format("tuning cache '{}': a lease cannot be taken ({})", path_.string(),
                                 error.what()));
      return std::nullopt;
    }
  }

  /// False once a lease could not be taken for a cause other than another holder (the folder
  /// is read-only): a miss then tunes at once rather than wait for a leader.
  [[nodiscard]] bool reachable() const override { return !leases_fail_.load(); }

  /// True while this store holds `lease`: a file lease lasts until it is released or its holder
  /// exits, whatever the time to live.
  bool renew(const CacheLease& lease, std::chrono::milliseconds /*ttl*/,
             const Logger& /*log*/) const override {
    const std::lock_guard lock(leases_mutex_);
    return held_leases_.contains(lease.token);
  }

  void release(const CacheLease& lease, const Logger& /*log*/) const override {
    const std::lock_guard lock(leases_mutex_);
    const auto held = held_leases_.find(lease.token);
    if (held == held_leases_.end()) return;
    ::close(held->second);  // closing the description drops its lock
    held_leases_.erase(held);
  }

  [[nodiscard]] std::unique_ptr<CacheStore> clone() const override {
    auto copy = std::make_unique<FileStore>(path_);
    copy->lock_timeout_ = lock_timeout_;
    copy->stop_ = stop_;
    const std::lock_guard lock(loaded_mutex_);
    copy->loaded_ = loaded_;
    copy->loaded_stamp_ = loaded_stamp_;
    copy->warned_ = warned_.load();
    return copy;
  }

  ~FileStore() override {
    for (const auto& [token, fd] : held_leases_)
      ::close(fd);
  }

 private:
  /// unreadable: not JSON (damaged, and moved aside at a store); foreign: not ours to change.
  enum class State { missing, usable, unreadable, newer, older, foreign };

  struct Loaded {
    State state = State::missing;
    nlohmann::json document{};
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

  /// The file, parsed once for as long as it is unchanged (its device, inode, size and times):
  /// a start-up asks for it three times (the file digests, the CLI's look-up, the tuning's), and
  /// a large cache took seconds to parse each time. `fresh`: parsed now, whatever was kept; a
  /// writer under the lock must see the latest file, and times are only as fine as the kernel's
  /// clock tick (an inode freed by a rename can come back with the same size within one).
  std::shared_ptr<const Loaded> load(const Logger& log, bool fresh = false) const {
    std::optional<nlohmann::json> stamp = detail::file_identity(path_);
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

  /// Keeps the newest max_entries of `entries` (by `created`, ISO 8601 text that sorts as time),
  /// and always `kept` (the entry just stored).
  static void drop_oldest_entries(nlohmann::json& entries, const std::string& kept,
                                  std::size_t max_entries, const Logger& log) {
    if (entries.size() <= max_entries) return;
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
    const std::size_t dropped = entries.size() - max_entries;
    for (std::size_t i = 0; i < dropped; ++i)
      entries.erase(by_age[i].second);
    log.info(0, fmt::format("tuning cache: dropped the {} oldest entr{} (it keeps {})", dropped,
                            dropped == 1 ? "y" : "ies", max_entries));
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

  [[nodiscard]] std::filesystem::path leases_path() const { return target().string() + ".leases"; }

  /// One byte of `<file>.leases` per id, at an offset taken from the id's first 48 bits (ids are
  /// SHA-256 digests; another text is hashed first).
  static struct flock lease_range(const std::string& id, short type) {
    const std::string digest =
        id.size() >= 12 && id.find_first_not_of("0123456789abcdef") == std::string::npos
            ? id
            : sha256_hex(id);
    struct flock range {};
    range.l_type = type;
    range.l_whence = SEEK_SET;
    range.l_start = static_cast<off_t>(std::stoull(digest.substr(0, 12), nullptr, 16));
    range.l_len = 1;
    return range;
  }

  void warn_once(const Logger& log, const std::string& text) const {
    if (!warned_.exchange(true)) log.warn(0, text);
  }

  std::filesystem::path path_;
  std::chrono::milliseconds lock_timeout_ = default_cache_lock_timeout;
  std::stop_token stop_{};
  mutable std::mutex loaded_mutex_;
  mutable std::shared_ptr<const Loaded> loaded_;  ///< the file as last parsed
  mutable nlohmann::json loaded_stamp_;           ///< its identity then
  mutable std::atomic<bool> warned_{false};
  mutable std::mutex leases_mutex_;
  mutable std::map<std::string, int> held_leases_;  ///< token -> the descriptor holding its lock
  mutable std::atomic<std::uint64_t> lease_count_{0};
  mutable std::atomic<bool> leases_fail_{false};
};

}  // namespace aitune
