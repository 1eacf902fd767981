// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The model files' digests, remembered on local disk. Hashing a model file costs about 5 s per
/// GB here, on every start-up; so a memo keeps each hashed file's digest with its identity
/// (device, inode, size, modification and change times in ns, file_identity.hpp), and a file
/// whose identity is unchanged is not read again. A file changed in the last two seconds is not
/// remembered (its next change could keep the same times, as git's "racy" index entries), and a
/// file replaced, rewritten or touched gets new times.
///
/// The memo is a JSON file of its own, `{"kind": "aitune-file-digests", "file_digests": {...}}`,
/// beside a file cache (`<cache>.digests`) or, for a cache with no local file, in
/// `$XDG_CACHE_HOME/aitune/file-digests.json` (`~/.cache/...`): identities are one machine's,
/// so it is never shared through a remote store. A memo that cannot be read is a miss (the file
/// is hashed) and is replaced at the next save; valid JSON of another kind is left alone.

#include "aitune/core/cache/sha256.hpp"
#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/io/file_identity.hpp"
#include "aitune/core/io/file_lock.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/text/json_parse.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

namespace aitune {

/// The marker of a digest memo file (`"kind"`).
inline constexpr std::string_view file_digest_memo_kind = "aitune-file-digests";

/// Where a memo goes when its cache has no local file: `$XDG_CACHE_HOME/aitune/file-digests.json`,
/// else `$HOME/.cache/aitune/file-digests.json`; none when neither is set.
[[nodiscard]] inline std::optional<std::filesystem::path> default_digest_memo_path() {
  const char* cache_home = std::getenv("XDG_CACHE_HOME");
  if (cache_home != nullptr && *cache_home == '/') {
    return std::filesystem::path(cache_home) / "aitune" / "file-digests.json";
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home == '/') {
    return std::filesystem::path(home) / ".cache" / "aitune" / "file-digests.json";
  }
  return std::nullopt;
}

class FileDigestMemo {
 public:
  /// A memo in `path` (none: digests are computed each time, and nothing is saved).
  explicit FileDigestMemo(std::optional<std::filesystem::path> path) : path_(std::move(path)) {}

  FileDigestMemo(const FileDigestMemo& other) : path_(other.path_) {
    const std::lock_guard lock(other.mutex_);
    known_ = other.known_;
    computed_ = other.computed_;
    pending_ = other.pending_;
  }
  FileDigestMemo& operator=(const FileDigestMemo&) = delete;

  [[nodiscard]] const std::optional<std::filesystem::path>& path() const noexcept { return path_; }

  /// The SHA-256 of `file`'s content: remembered when the file's identity is unchanged, else
  /// read (and remembered at the next save). Throws aitune::Error when the file cannot be read.
  [[nodiscard]] std::string digest_of(const std::filesystem::path& file) const {
    const std::filesystem::path absolute = std::filesystem::absolute(file);
    const std::optional<nlohmann::json> identity = detail::file_identity(absolute);
    if (identity) {
      const std::lock_guard lock(mutex_);
      const Digests* const memos[] = {&computed_, &saved()};
      for (const Digests* memo : memos) {
        const auto known = memo->find(absolute.string());
        if (known != memo->end() && known->second.is_object() &&
            known->second.value("identity", nlohmann::json()) == *identity &&
            known->second.contains("sha256") && known->second.at("sha256").is_string()) {
          return known->second.at("sha256").get<std::string>();
        }
      }
    }
    std::string digest = sha256_file(absolute);
    if (identity) {
      const std::lock_guard lock(mutex_);
      const nlohmann::json entry{{"identity", *identity}, {"sha256", digest}};
      computed_[absolute.string()] = entry;
      if (identity->at("settled").get<bool>()) pending_[absolute.string()] = entry;
    }
    return digest;
  }

  /// Writes the digests computed since the last save, if any, merged into the memo file under
  /// its lock (never waited for: a start-up is not held up, the digests are saved another time).
  /// Returns whether it wrote.
  bool save() const noexcept {
    try {
      Digests pending;
      {
        const std::lock_guard lock(mutex_);
        if (!path_ || pending_.empty()) return false;
        pending = pending_;
      }
      std::error_code ignored;
      std::filesystem::create_directories(path_->parent_path(), ignored);
      const detail::FileLock lock(path_->string() + ".lock", std::chrono::milliseconds(0));
      bool ours = true;
      Digests digests = read_file(&ours);
      if (!ours) return false;
      for (auto& [file, entry] : pending)
        digests[file] = std::move(entry);
      write_json_file(*path_, nlohmann::json{{"kind", file_digest_memo_kind},
                                             {"file_digests", nlohmann::json(digests)}});
      const std::lock_guard lock_memo(mutex_);
      for (const auto& [file, entry] : pending)
        pending_.erase(file);
      return true;
    } catch (...) {
      return false;
    }
  }

 private:
  using Digests = std::map<std::string, nlohmann::json>;

  /// The memo file's digests, read once (under mutex_).
  const Digests& saved() const {
    if (!known_) known_ = read_file();
    return *known_;
  }

  /// The digests in the memo file; none when it is missing or cannot be read. `ours`: false
  /// when it is valid JSON of another kind (left alone).
  Digests read_file(bool* ours = nullptr) const {
    if (ours != nullptr) *ours = true;
    Digests digests;
    if (!path_) return digests;
    std::ifstream in(*path_, std::ios::binary);
    if (!in.is_open()) return digests;
    std::ostringstream text;
    text << in.rdbuf();
    const nlohmann::json document = parse_json_bounded(text.str());
    if (document.is_discarded()) return digests;
    const auto kind = document.is_object() ? document.find("kind") : document.end();
    if (kind == document.end() || !kind->is_string() ||
        kind->get_ref<const std::string&>() != file_digest_memo_kind) {
      if (ours != nullptr) *ours = false;
      return digests;
    }
    const auto found = document.find("file_digests");
    if (found == document.end() || !found->is_object()) return digests;
    for (const auto& [file, entry] : found->items())
      digests[file] = entry;
    return digests;
  }

  std::optional<std::filesystem::path> path_;
  mutable std::mutex mutex_;
  mutable std::optional<Digests> known_;  ///< the memo file as read first
  mutable Digests computed_;              ///< read by this object
  mutable Digests pending_;               ///< for the next save
};

}  // namespace aitune
