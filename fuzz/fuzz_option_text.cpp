// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the other option values the command reads, core/cli/option_text.hpp:
// --tolerance (`bf16:0.05,1e-3`), --accuracy (`cosine=0.999,top1=98%`) and the comma-separated
// --precision and --backends lists. The first byte picks the parser. A parse either keeps its
// promises or throws ConfigError.
#include <aitune/core/cli/option_text.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 3 == 2) {
      const aitune::AccuracyBudget budget = aitune::parse_accuracy_text(text);
      if (!budget.has_measure() || budget.min_samples() == 0) std::abort();
      if (const auto& cosine = budget.min_cosine(); cosine && !(*cosine >= -1.0 && *cosine <= 1.0))
        std::abort();
      if (const auto& top_k = budget.top_k();
          top_k && (top_k->k < 1 || !(top_k->min_share > 0.0 && top_k->min_share <= 1.0)))
        std::abort();
    } else if (data[0] % 3 == 0) {
      const aitune::ToleranceText tolerance = aitune::parse_tolerance_text(text);
      if (!(tolerance.rtol >= 0.0 && tolerance.rtol <= 1e6)) std::abort();
      if (!(tolerance.scale_atol >= 0.0 && tolerance.scale_atol <= 1e6)) std::abort();
      // A precision read back through its one name table is itself.
      if (tolerance.precision &&
          aitune::parse_precision(aitune::to_string(*tolerance.precision)) != tolerance.precision) {
        std::abort();
      }
    } else {
      std::size_t length = 0;
      for (const std::string_view part : aitune::comma_separated(text)) {
        if (part.find(',') != std::string_view::npos) std::abort();
        length += part.size() + 1;
        const aitune::Precision precision = aitune::parse_precision(part);
        if (aitune::to_string(precision) == "unknown") std::abort();
      }
      if (length > text.size() + 1) std::abort();
    }
  } catch (const aitune::ConfigError&) {
  }
  return 0;
}
