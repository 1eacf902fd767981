// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Writing a JSON document to disk without ever leaving half a file: it goes to a temporary
/// file beside the target, which is renamed over the target once complete.

#include "aitune/core/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace aitune {

/// Writes `json` (indented by 2) to `path`; throws aitune::Error naming the file on failure and
/// removes the temporary file.
inline void write_json_file(const std::filesystem::path& path, const nlohmann::json& json) {
  const auto temporary = std::filesystem::path(path.string() + ".tmp");
  std::error_code error;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << json.dump(2) << "\n";
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary, error);
      throw Error(fmt::format("cannot write '{}'", path.string()));
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw Error(fmt::format("cannot write '{}': {}", path.string(), error.message()));
  }
}

}  // namespace aitune
