// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a compiled model writes to standard error while a call runs, caught: an AOTInductor
/// package's code prints the cause of a refused input (`Error: input_handles[1]: unmatched
/// dtype ...`) to the process's standard error and returns a bare failure code, which LibTorch's
/// runner turns into `run_func_(...) API call failed at ...`. For the untimed calls of a build
/// only: the capture redirects file descriptor 2 for the whole process.

#include "aitune/core/text/format.hpp"
#include "aitune/torch/libtorch.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <utility>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {
namespace detail {

/// Runs `call` with the process's standard error going to a temporary file; what was written
/// there meanwhile goes to `captured` (also when `call` throws, which passes through). Nothing
/// is lost: the caller hands it on (to an error message, or back to standard error). One
/// capture at a time (another thread's waits); one may run inside another on the same thread.
/// Where no temporary file can be made, `call` runs without a capture.
template <class Call>
decltype(auto) with_stderr_captured(std::string& captured, Call&& call) {
  static std::recursive_mutex one_at_a_time;
  const std::lock_guard lock(one_at_a_time);
  std::fflush(stderr);
  std::cerr.flush();
  std::FILE* file = std::tmpfile();
  const int saved = file == nullptr ? -1 : ::dup(STDERR_FILENO);
  if (saved < 0 || ::dup2(::fileno(file), STDERR_FILENO) < 0) {
    if (saved >= 0) ::close(saved);
    if (file != nullptr) std::fclose(file);
    return std::forward<Call>(call)();
  }
  struct Restore {  // on the way out, normal or not
    std::FILE* file;
    int saved;
    std::string& captured;
    ~Restore() {
      std::fflush(stderr);
      std::cerr.flush();
      ::dup2(saved, STDERR_FILENO);
      ::close(saved);
      std::rewind(file);
      char buffer[4096];
      for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
        captured.append(buffer, n);
      std::fclose(file);
    }
  } restore{file, saved, captured};
  return std::forward<Call>(call)();
}

/// `captured` text as one line for a reason: its lines joined with "; ", the runtime's "Error: "
/// prefixes dropped, cleaned and cut (it is the package's text). Empty when nothing was written.
[[nodiscard]] inline std::string captured_cause(const std::string& captured) {
  std::string line;
  std::size_t start = 0;
  while (start < captured.size()) {
    std::size_t end = captured.find('\n', start);
    if (end == std::string::npos) end = captured.size();
    std::string part = captured.substr(start, end - start);
    if (part.starts_with("Error: ")) part.erase(0, 7);
    if (!part.empty()) line += (line.empty() ? "" : "; ") + part;
    start = end + 1;
  }
  return aitune::detail::printable_excerpt(line, 400);
}

}  // namespace detail
}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
