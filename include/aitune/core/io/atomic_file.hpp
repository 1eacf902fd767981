// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Writing a file (a JSON document, a report) to disk without ever leaving half of one: it goes to
/// a temporary file beside the target, with a name no other writer uses (process, thread, time and
/// a counter), which is renamed over the target once complete. Readers see the old file or the new
/// one, never a mix, however many processes write the same path at once (rename(2) is atomic on one
/// POSIX file system; NFS and some FUSE file systems do not promise that).

#include "aitune/core/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

namespace aitune {

namespace detail {

/// `<path>.<unique>.tmp`: unique across threads and processes.
inline std::filesystem::path temporary_beside(const std::filesystem::path& path) {
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t process_salt = std::random_device{}();
  const auto now =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::uint64_t thread = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return std::filesystem::path(fmt::format("{}.{:x}{:x}{:x}{:x}.tmp", path.string(), process_salt,
                                           thread & 0xffffff, now & 0xffffffff, counter++));
}

}  // namespace detail

/// Writes `text` to `path` whole or not at all: to a temporary file beside it, renamed over it
/// once written and flushed; throws aitune::Error naming the file and the cause on failure (a
/// full disk, a read-only folder), and removes its temporary file.
inline void write_text_file(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path temporary = detail::temporary_beside(path);
  std::error_code ignored;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      const std::string cause = std::strerror(errno);
      out.close();
      std::filesystem::remove(temporary, ignored);
      throw Error(fmt::format("cannot write '{}': {}", path.string(), cause));
    }
    out.close();
    if (out.fail()) {  // closing flushes what the stream still held
      const std::string cause = std::strerror(errno);
      std::filesystem::remove(temporary, ignored);
      throw Error(fmt::format("cannot write '{}': {}", path.string(), cause));
    }
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, path, renamed);
  if (renamed) {
    std::filesystem::remove(temporary, ignored);  // its own error code: the cause is kept
    throw Error(fmt::format("cannot write '{}': {}", path.string(), renamed.message()));
  }
}

/// `json` as text (indented by `indent` spaces; -1: on one line). A string that is not valid UTF-8
/// (a file name in another encoding) is written with U+FFFD in place of each bad byte rather than
/// failing the whole write: nlohmann's default throws, after a tuning that went well.
[[nodiscard]] inline std::string json_text(const nlohmann::json& json, int indent = -1) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Writes `json` (indented by 2) to `path`, as write_text_file.
inline void write_json_file(const std::filesystem::path& path, const nlohmann::json& json) {
  write_text_file(path, json_text(json, 2) + "\n");
}

/// Throws aitune::Error naming the cause when a file cannot be written at `path` (its folder is
/// missing or read-only, or it is a folder): check an output before a long tuning, not after.
inline void check_writable(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw Error(fmt::format("cannot write '{}': it is a directory", path.string()));
  }
  const std::filesystem::path probe = detail::temporary_beside(path);
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
    }
  }
  std::filesystem::remove(probe, error);
}

}  // namespace aitune
