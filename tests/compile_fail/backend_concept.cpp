// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Compile-must-fail cases for the Backend and Timer concepts: ctest compiles this file once per
// CASE and expects every case but 0 to be rejected with a diagnostic naming the concept
// (tests/cmake/check_compile_fails.cmake). Case 0 must compile, so a broken setup cannot pass.
#include "support/concept_probes.hpp"

using namespace aitune::testing::probes;

int main() {
#if CASE == 0
  aitune::MinLatencyStrategy<Complete, aitune::HostTimer> strategy({Complete{}});
#elif CASE == 1
  aitune::MinLatencyStrategy<MissingInfer, aitune::HostTimer> strategy({MissingInfer{}});
#elif CASE == 2
  aitune::MinLatencyStrategy<MissingDescribe, aitune::HostTimer> strategy({MissingDescribe{}});
#elif CASE == 3
  aitune::MinLatencyStrategy<InferReturnsAnotherType, aitune::HostTimer> strategy(
      {InferReturnsAnotherType{}});
#elif CASE == 4
  aitune::MinLatencyStrategy<Complete, int> strategy({Complete{}});  // not a Timer
#endif
  (void)strategy;
  return 0;
}
