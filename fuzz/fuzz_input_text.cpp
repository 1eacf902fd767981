// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the input syntax of --input (`1x64:int64[0,30522)`), core/cli/option_text.hpp.
// Any input either parses into a spec that keeps the documented promises or is refused with
// ConfigError; anything else (a crash, another exception, a broken promise) is a finding.
#include <aitune/core/cli/option_text.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const aitune::InputText input = aitune::parse_input_text(text);
    if (input.shape.empty()) std::abort();
    for (const std::int64_t dimension : input.shape) {
      if (dimension < 1 || dimension > aitune::max_input_dimension) std::abort();
    }
    if (input.range && !(std::isfinite(input.range->low) && std::isfinite(input.range->high) &&
                         input.range->low < input.range->high)) {
      std::abort();
    }
    if (input.dtype.find(':') != std::string_view::npos) std::abort();
  } catch (const aitune::ConfigError&) {
  }
  return 0;
}
