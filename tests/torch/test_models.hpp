// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Small TorchScript modules defined in C++ (no Python, no files): fast integration tests.

#include <aitune/torch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace aitune::testing {

/// conv -> batch-norm-like affine -> relu -> conv -> mean: a graph freezing and channels-last
/// change, with no `training` attribute (as every module built in C++).
inline torch::jit::Module make_conv_net(std::uint64_t seed = 7) {
  torch::manual_seed(seed);
  torch::jit::Module module("ConvNet");
  module.register_parameter("w1", torch::randn({8, 3, 3, 3}) * 0.3, false);
  module.register_parameter("b1", torch::randn({8}) * 0.1, false);
  module.register_buffer("scale", torch::rand({1, 8, 1, 1}) + 0.5);
  module.register_parameter("w2", torch::randn({4, 8, 3, 3}) * 0.3, false);
  module.define(R"(
    def forward(self, x):
        y = torch.conv2d(x, self.w1, self.b1, [1, 1], [1, 1]) * self.scale
        y = torch.relu(y)
        return torch.conv2d(y, self.w2, None, [1, 1], [1, 1])
  )");
  return module;
}

/// Returns a tuple and a dict, to exercise nested outputs.
inline torch::jit::Module make_nested_net() {
  torch::manual_seed(11);
  torch::jit::Module module("NestedNet");
  module.register_parameter("w", torch::randn({16, 16}) * 0.25, false);
  module.define(R"(
    def forward(self, x, n: int):
        y = torch.matmul(x, self.w)
        d = {"logits": y, "count": torch.ones([2]).long() * n}
        return (y.relu(), [y.sum(dim=1)], d)
  )");
  return module;
}

/// A `samples` list with one random sample of the given shape.
inline std::vector<lt::Sample> one_image(std::int64_t size = 16) {
  return {lt::Sample{torch::randn({1, 3, size, size})}};
}

/// Where the real traced models live (tools/make_models.py), from AITUNE_MODELS_DIR.
inline std::filesystem::path models_dir() {
  const char* dir = std::getenv("AITUNE_MODELS_DIR");
  return dir ? std::filesystem::path(dir) : std::filesystem::path("models");
}

#ifdef AITUNE_TEST_EXPORTED_DIR
/// Where the models exported with AOTInductor live (the fixtures write them once per version):
/// AITUNE_EXPORTED_DIR, else the folder the build configured.
inline std::filesystem::path exported_dir() {
  const char* dir = std::getenv("AITUNE_EXPORTED_DIR");
  return dir ? std::filesystem::path(dir) : std::filesystem::path(AITUNE_TEST_EXPORTED_DIR);
}
#endif

}  // namespace aitune::testing
