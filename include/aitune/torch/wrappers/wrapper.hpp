// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// WrapperBackend: the base of a backend that wraps another (CudaGraph, TorchThreads,
/// PerturbedOutputs, or your own). It holds the inner backend, any LibTorch backend, as an
/// AnyBackend, and forwards to it every hook a wrapper does not change: the output policy,
/// thread safety, the shape contract, the files it loads (the tuning cache's key digests them),
/// its use of LibTorch's threads, after_calls, and the build, activate and deactivate steps. A
/// hook added to AnyBackend later is added here once and reaches every wrapper.
///
/// A wrapper derives as `class W : public WrapperBackend<W>`, declares
/// `friend class BackendLifecycle<W>`, and defines describe(), key() and do_infer(); it declares
/// its own hook or step only where it differs (the wrapper's hides the base's).

#include "aitune/core/backend.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/model.hpp"

#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

template <class Derived>
class WrapperBackend : public BackendLifecycle<Derived> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  [[nodiscard]] OutputPolicy output_policy() const { return inner_.output_policy(); }
  [[nodiscard]] bool thread_safe() const { return inner_.thread_safe(); }
  [[nodiscard]] bool shape_specialised() const { return inner_.shape_specialised(); }
  [[nodiscard]] bool takes_range() const { return inner_.takes_range(); }
  [[nodiscard]] TorchThreadUse torch_thread_use() const { return inner_.torch_thread_use(); }
  [[nodiscard]] std::string graph() const { return inner_.graph(); }
  /// The inner backend's identity; a wrapper that changes what runs adds a field of its own.
  [[nodiscard]] BackendIdentity identity() const { return inner_.identity(); }
  [[nodiscard]] std::vector<std::filesystem::path> loaded_files() const {
    return inner_.loaded_files();
  }
  /// What the inner backend's calls changed for the process is put back (aitune::after_calls).
  void after_calls() { inner_.after_calls(); }

  [[nodiscard]] const AnyBackend& inner() const noexcept { return inner_; }

 protected:
  explicit WrapperBackend(AnyBackend inner) : inner_(std::move(inner)) {}
  /// Copies an unbuilt wrapper (the strategy copies its candidates before each tune).
  WrapperBackend(const WrapperBackend& other) : BackendLifecycle<Derived>(), inner_(other.inner_) {}
  WrapperBackend(WrapperBackend&&) noexcept = default;
  WrapperBackend& operator=(WrapperBackend&&) noexcept = default;
  WrapperBackend& operator=(const WrapperBackend&) = delete;
  ~WrapperBackend() = default;

  void do_build(const Model& model, std::span<const Sample> samples) {
    inner_.build(model, samples);
  }
  void do_activate() { inner_.activate(); }
  void do_deactivate() {
    if (inner_.state() != BackendState::created) inner_.deactivate();
  }

  AnyBackend inner_;

 private:
  friend class BackendLifecycle<Derived>;
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
