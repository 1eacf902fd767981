// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#include "support/concept_probes.hpp"
#include "support/fake_backend.hpp"

#include <catch2/catch.hpp>

#include <span>
#include <string>

using namespace aitune;
using namespace aitune::testing;
using namespace aitune::testing::probes;

TEST_CASE("Backend concept accepts a complete backend and rejects incomplete ones", "[concepts]") {
  static_assert(Backend<Complete>);
  static_assert(Backend<FakeBackend>);
  static_assert(!Backend<MissingInfer>);
  static_assert(!Backend<MissingDescribe>);
  static_assert(!Backend<MissingBuild>);
  static_assert(!Backend<InferReturnsAnotherType>);
  static_assert(!Backend<int>);
  SUCCEED("checked at compile time");
}

TEST_CASE("Timer concept accepts host and virtual timers", "[concepts]") {
  static_assert(Timer<HostTimer>);
  static_assert(Timer<VirtualTimer>);
  static_assert(!Timer<int>);
  static_assert(!Timer<VirtualClock>);
  SUCCEED("checked at compile time");
}

TEST_CASE("A backend is built once, infers while active and refuses while inactive", "[backend]") {
  FakeModel model;
  FakeBackend backend("Fast", 1.0);
  CHECK(backend.state() == BackendState::created);
  backend.build(model, one_sample());
  CHECK(backend.state() == BackendState::active);
  CHECK(backend.infer(2.0) == 4.0);

  backend.deactivate();
  CHECK(backend.state() == BackendState::inactive);
  CHECK(backend.deactivations() == 1);
  CHECK_THROWS_AS(backend.infer(2.0), BackendStateError);

  backend.activate();
  CHECK(backend.is_active());
  CHECK(backend.infer(1.0) == 2.0);
}

TEST_CASE("Illegal backend transitions throw, naming the backend, the step and the state",
          "[backend]") {
  FakeModel model;
  FakeBackend backend("Named", 1.0);
  CHECK_THROWS_WITH(backend.infer(1.0),
                    Catch::Contains("Named()") && Catch::Contains("cannot infer while created"));
  CHECK_THROWS_WITH(backend.activate(), Catch::Contains("cannot activate while created"));
  CHECK_THROWS_WITH(backend.deactivate(), Catch::Contains("cannot deactivate while created"));
  backend.build(model, one_sample());
  CHECK_THROWS_WITH(backend.build(model, one_sample()),
                    Catch::Contains("Named()") && Catch::Contains("cannot build while active"));
}

TEST_CASE("A backend whose build throws is failed and can only be deactivated", "[backend]") {
  FakeModel model;
  FakeBehaviour behaviour;
  behaviour.name = "Broken";
  behaviour.fail_build = true;
  FakeBackend backend(behaviour);
  CHECK_THROWS_WITH(backend.build(model, one_sample()), "scripted build failure");
  CHECK(backend.state() == BackendState::failed);
  CHECK_THROWS_WITH(backend.activate(), Catch::Contains("cannot activate while failed"));
  CHECK_THROWS_AS(backend.infer(1.0), BackendStateError);
  backend.deactivate();  // frees partial resources, stays failed
  CHECK(backend.state() == BackendState::failed);
  CHECK(backend.deactivations() == 1);
}
