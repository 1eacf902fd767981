// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Helpers of the benchmarks that tune real models (made by tools/make_models.py).

#include <aitune/torch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace aitune::bench {

/// The input specs of a model, one per line of its `.shape` file (`1x3x224x224`).
inline std::vector<lt::InputSpec> read_shapes(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("cannot read '{}'", file.string()));
  std::vector<lt::InputSpec> specs;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) specs.push_back(lt::parse_input_spec(line));
  }
  return specs;
}

}  // namespace aitune::bench
