// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Checked CUDA runtime calls: AITUNE_CUDA_CHECK(call) throws aitune::CudaError naming the file,
/// the line, the call and CUDA's own message; AITUNE_CUDA_CHECK_NOEXCEPT reports to standard
/// error instead, for destructors. Needs only the CUDA runtime headers (no LibTorch).

#include "aitune/core/error.hpp"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace aitune {

/// A CUDA runtime call failed.
class CudaError : public Error {
 public:
  CudaError(cudaError_t code, const std::string& message) : Error(message), code_(code) {}
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {
inline std::string cuda_failure(cudaError_t code, const char* call, const char* file, int line) {
  return fmt::format("{}:{}: {} failed: {} ({})", file, line, call, cudaGetErrorString(code),
                     cudaGetErrorName(code));
}

inline void cuda_check(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  (void)cudaGetLastError();  // clear the sticky-free error state, as the runtime expects
  throw CudaError(code, cuda_failure(code, call, file, line));
}

inline void cuda_check_noexcept(cudaError_t code, const char* call, const char* file,
                                int line) noexcept {
  if (code == cudaSuccess) return;
  (void)cudaGetLastError();
  std::fputs((cuda_failure(code, call, file, line) + "\n").c_str(), stderr);
}
}  // namespace detail

}  // namespace aitune

#define AITUNE_CUDA_CHECK(call) ::aitune::detail::cuda_check((call), #call, __FILE__, __LINE__)
#define AITUNE_CUDA_CHECK_NOEXCEPT(call)                                                           \
  ::aitune::detail::cuda_check_noexcept((call), #call, __FILE__, __LINE__)
