// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// An exclusive lock on a file, waited for a bounded time.

#include "aitune/core/error.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stop_token>
#include <thread>

namespace aitune {

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

}  // namespace aitune
