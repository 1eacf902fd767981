// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// Compile-must-fail cases for the Backend and Timer concepts: ctest compiles this file once per
// CASE and expects every case but 0 to be rejected with a diagnostic naming the concept
// (tests/cmake/check_compile_fails.cmake). Case 0 must compile, so a broken setup cannot pass.
#include <aitune/aitune.hpp>

#include <span>
#include <string>

namespace {

struct Model {};

struct Complete {
  using model_type = Model;
  using sample_type = int;
  using output_type = int;
  void build(const Model&, std::span<const int>) {}
  int infer(const int& x) { return x; }
  void activate() {}
  void deactivate() {}
  aitune::BackendState state() const { return aitune::BackendState::created; }
  std::string describe() const { return "Complete()"; }
  std::string key() const { return "complete"; }
};

// Each lacks one thing the concept asks for.
struct NoInfer {
  using model_type = Model;
  using sample_type = int;
  using output_type = int;
  void build(const Model&, std::span<const int>) {}
  void activate() {}
  void deactivate() {}
  aitune::BackendState state() const { return aitune::BackendState::created; }
  std::string describe() const { return ""; }
  std::string key() const { return ""; }
};

struct NoKey {
  using model_type = Model;
  using sample_type = int;
  using output_type = int;
  void build(const Model&, std::span<const int>) {}
  int infer(const int& x) { return x; }
  void activate() {}
  void deactivate() {}
  aitune::BackendState state() const { return aitune::BackendState::created; }
  std::string describe() const { return ""; }
};

struct InferReturnsAnotherType : Complete {
  double infer(const int& x) { return x; }
};

}  // namespace

int main() {
#if CASE == 0
  aitune::MinLatencyStrategy<Complete, aitune::HostTimer> strategy({Complete{}});
#elif CASE == 1
  aitune::MinLatencyStrategy<NoInfer, aitune::HostTimer> strategy({NoInfer{}});
#elif CASE == 2
  aitune::MinLatencyStrategy<NoKey, aitune::HostTimer> strategy({NoKey{}});
#elif CASE == 3
  aitune::MinLatencyStrategy<InferReturnsAnotherType, aitune::HostTimer> strategy(
      {InferReturnsAnotherType{}});
#elif CASE == 4
  aitune::MinLatencyStrategy<Complete, int> strategy({Complete{}});  // not a Timer
#endif
  (void)strategy;
  return 0;
}
