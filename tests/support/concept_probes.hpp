// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once
// Probes of the Backend concept: a minimal complete backend, and variants each missing one
// required member. The concept tests assert on them, and tests/compile_fail/ checks that a
// strategy over one of the incomplete ones does not compile.
#include <aitune/aitune.hpp>

#include <span>
#include <string>

namespace aitune::testing::probes {

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
struct MissingInfer {
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
struct MissingDescribe {
  using model_type = Model;
  using sample_type = int;
  using output_type = int;
  void build(const Model&, std::span<const int>) {}
  int infer(const int& x) { return x; }
  void activate() {}
  void deactivate() {}
  aitune::BackendState state() const { return aitune::BackendState::created; }
  std::string key() const { return ""; }
};
struct MissingBuild {
  using model_type = Model;
  using sample_type = int;
  using output_type = int;
  int infer(const int& x) { return x; }
  void activate() {}
  void deactivate() {}
  aitune::BackendState state() const { return aitune::BackendState::created; }
  std::string describe() const { return ""; }
  std::string key() const { return ""; }
};
struct InferReturnsAnotherType : Complete {
  double infer(const int& x) { return x; }
};

}  // namespace aitune::testing::probes
