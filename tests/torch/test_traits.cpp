// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The LibTorch family's customisation points do not depend on which headers a translation unit
// includes. This file includes only what a server that holds a TunedModule and runs the
// strategy includes, with the backends it names (not measure/device_timer.hpp, nor
// aitune/torch.hpp): it must get the same timer, checker and codec as every other translation
// unit.
#include "aitune/core/strategy/min_latency_strategy.hpp"
#include "aitune/torch/backends/native_runtime.hpp"
#include "aitune/torch/backends/torchscript.hpp"
#include "aitune/torch/serve/tuned_module.hpp"

#ifdef CHECK
#undef CHECK  // glog's, from LibTorch; Catch's replaces it
#endif
#include <catch2/catch.hpp>

#include <stdexcept>
#include <type_traits>

using namespace aitune;
using namespace aitune::lt;

TEST_CASE("A strategy over LibTorch backends times with DeviceTimer whatever the includes",
          "[traits]") {
  CHECK_FALSE(std::is_same_v<default_timer_t<AnyBackend>, HostTimer>);  // kernel launches on a GPU
  CHECK(std::is_same_v<default_timer_t<AnyBackend>, DeviceTimer>);
  CHECK(
      std::is_same_v<MinLatencyStrategy<AnyBackend>, MinLatencyStrategy<AnyBackend, DeviceTimer>>);
  CHECK(std::is_same_v<default_timer_t<TorchScriptFrozen>, DeviceTimer>);
  CHECK(std::is_same_v<default_timer_t<NativeRuntime>, DeviceTimer>);
}

TEST_CASE("A concrete LibTorch backend gets every feature AnyBackend gets", "[traits]") {
  CHECK(reference_codec<AnyBackend>::available);
  CHECK(reference_codec<TorchScriptFrozen>::available);
  CHECK(reference_codec<NativeRuntime>::available);
  CHECK(device_memory<TorchScriptFrozen>::available);
  CHECK(device_memory<NativeRuntime>::available);

  // The checker reads the concrete backend's own tolerance, as it does through AnyBackend.
  TorchScriptFrozen strict;
  strict.set_tolerance(Tolerance{0.0, 0.0});
  const c10::IValue reference = torch::ones({3});
  const c10::IValue close = torch::ones({3}) + 1e-4;
  CHECK_FALSE(output_checker<TorchScriptFrozen>::check(strict, &reference, close).passed);
  CHECK_FALSE(output_checker<AnyBackend>::check(AnyBackend(strict), &reference, close).passed);
  CHECK(output_checker<TorchScriptFrozen>::check(TorchScriptFrozen(), &reference, close).passed);

  // A LibTorch error is one line, for concrete types too.
  const std::runtime_error error(
      "what went wrong\nException raised from f at x.cpp:12 (most recent call first):\nframe #0");
  CHECK(error_summary<NativeRuntime>::of(error) == "what went wrong");
}
