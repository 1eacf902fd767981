// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: sample files (--sample), torch/model/sample_file.hpp. Our limits stand in front
// of LibTorch's loader (torch::jit::pickle_load) and our structure checks behind it. Any input is
// either a Sample or a ConfigError; a crash inside LibTorch's loader is LibTorch's finding, and
// is reported to it, not fixed here.
#include <aitune/torch/model/sample_file.hpp>

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<char> bytes(data, data + size);
  aitune::lt::SampleFileLimits limits;
  limits.max_bytes = 1 << 20;
  try {
    const aitune::lt::Sample sample =
        aitune::lt::load_sample_bytes(bytes, "fuzz.pt", c10::Device(c10::kCPU), limits);
    if (sample.empty()) std::abort();
  } catch (const aitune::ConfigError&) {
  }
  return 0;
}
