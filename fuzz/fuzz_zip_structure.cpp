// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the zip structure check in front of LibTorch's loader
// (core/text/zip_structure.hpp). It must answer every input - an archive or what is wrong
// with it - without reading outside it.
#include <aitune/core/text/zip_structure.hpp>

#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)aitune::check_zip_structure(
      std::span<const char>(reinterpret_cast<const char*>(data), size));
  return 0;
}
