// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The CUDA runtime pieces without LibTorch: checked calls and events. They run on machines with
// the CUDA toolkit but no GPU too, where every call fails: then the failure must be clear.
#include <aitune/aitune.hpp>
#include <aitune/cuda.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace {
bool has_device() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return ok;
}
}  // namespace

TEST_CASE("A failing CUDA call names the file, the line, the call and the cause", "[cuda]") {
  try {
    AITUNE_CUDA_CHECK(cudaSetDevice(12345));
    FAIL("cudaSetDevice(12345) should fail on any machine");
  } catch (const aitune::CudaError& error) {
    const std::string message = error.what();
    CHECK_THAT(message, Catch::Contains("test_cuda_runtime.cpp:") &&
                            Catch::Contains("cudaSetDevice(12345) failed: "));
    CHECK(error.code() != cudaSuccess);
    CHECK_THAT(message, Catch::Contains(cudaGetErrorName(error.code())));
  }
  // The error is part of the aitune hierarchy.
  CHECK_THROWS_AS(AITUNE_CUDA_CHECK(cudaSetDevice(-7)), aitune::Error);
}

TEST_CASE("CUDA events time on a device, and fail clearly without one", "[cuda]") {
  static_assert(aitune::Timer<aitune::CudaEventTimer>);
  if (!has_device()) {
    CHECK_THROWS_WITH(aitune::CudaEvent(),
                      Catch::Contains("cudaEventCreateWithFlags(&event_, cudaEventDefault)"));
    // A timer touches the driver only when it first measures.
    aitune::CudaEventTimer timer([] { return cudaStream_t{}; });
    CHECK_THROWS_AS(timer.measure([] {}), aitune::CudaError);
    WARN("no CUDA device: only the failure paths were checked");
    return;
  }
  aitune::CudaEvent start;
  aitune::CudaEvent stop;
  start.record(nullptr);
  stop.record(nullptr);
  stop.synchronize();
  CHECK(aitune::CudaEvent::elapsed_ms(start, stop) >= 0.0F);
  aitune::CudaEvent moved = std::move(start);
  CHECK(moved.get() != nullptr);
  CHECK(start.get() == nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  aitune::CudaEventTimer timer([] { return cudaStream_t{}; });
  const aitune::Timing timing = timer.measure([] {});
  REQUIRE(timing.device_ms.has_value());
  CHECK(*timing.device_ms >= 0.0);
  CHECK(timing.host_ms >= 0.0);
}
