// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What changes when a file's content may have, to tell without reading it that it has not.

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>

namespace aitune::detail {

/// A file's device and inode, size, and modification and change times (ns); `settled` when it
/// last changed over two seconds ago (a later change could keep the same times, as git's "racy"
/// index entries). None when it cannot be stat'ed (the read that follows says why).
[[nodiscard]] inline std::optional<nlohmann::json>
file_identity(const std::filesystem::path& file) {
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

}  // namespace aitune::detail
