// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// The models tests/support/make_exported_models.py exports (a ctest fixture), each with the
// inputs eager PyTorch ran at export and what it returned; and what the tests of them share.

#include "torch/test_models.hpp"
#include "torch/torch_catch.hpp"

#include <filesystem>
#include <string>
#include <vector>

#if AITUNE_TEST_EXPORTED
namespace aitune::testing {

using namespace aitune::lt;

struct Exported {
  Model model;
  std::vector<Sample> samples;  ///< the inputs eager PyTorch ran at export
  c10::IValue eager;            ///< and what it returned
};

inline Exported exported(const std::string& name) {
  const auto path = exported_dir() / (name + ".pt2");
  if (!std::filesystem::exists(path)) {
    FAIL("missing " << path << ": run tests/support/make_exported_models.py (ctest does it)");
  }
  const auto io = exported_dir() / (name + ".io");
  return {load_model(path),
          {load_sample_file(io / "inputs.pt", torch::kCPU)},
          load_outputs_file(io / "outputs.pt")};
}

inline StrategyConfig quick_config() {
  return StrategyConfig{}
      .set_profiling(
          ProfilingConfig{}.set_race(RaceConfig{}.set_looks(4, 1.5, 3).set_max_rounds(9)))
      .set_sink(null_sink());
}

/// `config` without the screening before the checks: a test of how a candidate is checked keeps
/// the candidates the screen would leave unchecked as clearly slower.
inline StrategyConfig unscreened(StrategyConfig config) {
  config.set_profiling(
      ProfilingConfig{config.profiling()}.set_screening(ScreeningConfig{}.set_rounds(0)));
  return config;
}

/// Checks `actual` against eager PyTorch's outputs: the same structure and dict key order,
/// every value within `policy`'s tolerance.
inline void check_equal_to_eager(const c10::IValue& actual, const Exported& model,
                                 const OutputPolicy& policy = {}) {
  const OutputCheck check = compare_outputs(&model.eager, actual, policy);
  INFO(check.reason);
  CHECK(check.passed);
}

inline std::vector<std::string> keys_of(const c10::IValue& dict) {
  std::vector<std::string> keys;
  for (const auto& entry : dict.toGenericDict())
    keys.push_back(entry.key().toStringRef());
  return keys;
}

}  // namespace aitune::testing
#endif
