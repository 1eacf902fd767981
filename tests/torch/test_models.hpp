// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Small TorchScript modules defined in C++ (no Python, no files): fast integration tests.

#include <aitune/torch.hpp>

#include <ATen/Parallel.h>

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>

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
/// The OpenMP thread count of a new thread (a server's own) after it ran `call`, with
/// LibTorch's intra-op count at 1 meanwhile: 1 where something on the way applied LibTorch's
/// count to that thread, OpenMP's default (every core) where nothing did. OpenMP keeps the count
/// per thread, and at::set_num_threads reaches only the thread that calls it. nullopt where this
/// LibTorch has no OpenMP or the machine one core: nothing to tell apart.
inline std::optional<int> openmp_threads_of_new_thread_after(const std::function<void()>& call) {
  using MaxThreads = int (*)();
  const auto omp_max_threads =
      reinterpret_cast<MaxThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  if (omp_max_threads == nullptr || std::thread::hardware_concurrency() < 2) return std::nullopt;
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  int in_thread = 0;
  std::thread server([&] {
    call();
    in_thread = omp_max_threads();
  });
  server.join();
  at::set_num_threads(before);
  return in_thread;
}

inline std::filesystem::path exported_dir() {
  const char* dir = std::getenv("AITUNE_EXPORTED_DIR");
  return dir ? std::filesystem::path(dir) : std::filesystem::path(AITUNE_TEST_EXPORTED_DIR);
}
#endif

}  // namespace aitune::testing
