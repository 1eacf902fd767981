// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <initializer_list>

namespace aitune::testing {

/// Removes a cache file and what its store and digest memo keep beside it (the write lock, the
/// leases, the memo and its lock), so a test leaves nothing in the temporary folder.
inline void remove_cache_files(const std::filesystem::path& file) {
  for (const char* suffix : {"", ".lock", ".leases", ".digests", ".digests.lock"}) {
    std::filesystem::remove(file.string() + suffix);
  }
}

}  // namespace aitune::testing
