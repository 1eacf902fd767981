// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// AnyBackend: one type for every LibTorch backend, so a single MinLatencyStrategy can hold
/// different kinds (TorchScript variants, CUDA graphs, AOTInductor packages, your own).

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>

#include <concepts>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class AnyBackend {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  /// Wraps any LibTorch backend. Optional members it may have: `output_policy()` (default:
  /// float32 tolerances), `thread_safe()` (default: false, so TunedModule serialises calls),
  /// `after_calls()` (aitune::after_calls; default: nothing), `shape_specialised()` (default:
  /// false; true for a backend made for the samples' shapes only, which makes a tuning's
  /// TunedModule hold every input to those shapes), `takes_range()` (default: false; true for one
  /// made for the model's whole input ranges, InputRanges), `torch_thread_use()` (default:
  /// LibTorch's threads at the process's count), `graph()` (aitune::graph_of; default: a graph of
  /// its own) and `loaded_files()` (default: none).
  ///
  /// The constraint asks only for the three LibTorch types; the rest of TorchBackend is checked
  /// in the body. So a wrapper whose constructor takes an AnyBackend compiles (checking whether
  /// the wrapper is movable no longer asks whether it converts to AnyBackend, which asked the
  /// same question again), and a backend that misses a requirement is told which one by the
  /// static_assert below rather than by a failed overload deep in the standard library.
  template <class B>
  requires(!std::same_as<std::remove_cvref_t<B>, AnyBackend> && DeclaresTorchTypes<B>)
      AnyBackend(B backend)  // NOLINT(google-explicit-constructor): wrapping is the point
      : impl_(std::make_unique<Holder<B>>(std::move(backend))) {
    static_assert(TorchBackend<B>,
                  "AnyBackend wraps a backend that satisfies aitune::lt::TorchBackend: see the "
                  "unsatisfied requirement below, or add static_assert(aitune::lt::TorchBackend<"
                  "YourBackend>) after your class for a shorter message");
  }

  /// Copies an unbuilt backend (the strategy copies its candidates before each tune). Throws
  /// when the wrapped type cannot be copied.
  AnyBackend(const AnyBackend& other) : impl_(other.impl_->clone()), tolerance_(other.tolerance_) {}
  AnyBackend& operator=(const AnyBackend& other) {
    if (this != &other) {
      impl_ = other.impl_->clone();
      tolerance_ = other.tolerance_;
    }
    return *this;
  }
  AnyBackend(AnyBackend&&) noexcept = default;
  AnyBackend& operator=(AnyBackend&&) noexcept = default;
  ~AnyBackend() = default;

  void build(const Model& model, std::span<const Sample> samples) { impl_->build(model, samples); }
  c10::IValue infer(const Sample& sample) { return impl_->infer(sample); }
  void activate() { impl_->activate(); }
  void deactivate() { impl_->deactivate(); }
  /// The wrapped backend's `after_calls()` (aitune::after_calls), if it has one.
  void after_calls() { impl_->after_calls(); }
  [[nodiscard]] BackendState state() const { return impl_->state(); }
  [[nodiscard]] bool is_active() const { return state() == BackendState::active; }
  [[nodiscard]] std::string describe() const { return impl_->describe(); }
  [[nodiscard]] std::string key() const { return impl_->key(); }
  /// What the key says, as named fields (aitune::identity_of): "family" ("onnx", "aoti",
  /// "torchscript", ...), "variant", "precision", the thread counts, and what a wrapper adds.
  [[nodiscard]] BackendIdentity identity() const { return impl_->identity(); }
  /// The wrapped backend's policy, with the tolerance set by set_tolerance() if any.
  [[nodiscard]] OutputPolicy output_policy() const {
    OutputPolicy policy = impl_->output_policy();
    if (tolerance_) policy.tolerance = *tolerance_;
    return policy;
  }
  /// Overrides the tolerance of the correctness check for this candidate, whatever it wraps.
  AnyBackend& set_tolerance(Tolerance tolerance) {
    tolerance_ = tolerance.checked();
    return *this;
  }
  [[nodiscard]] bool thread_safe() const { return impl_->thread_safe(); }
  [[nodiscard]] bool shape_specialised() const { return impl_->shape_specialised(); }
  /// Whether a shape-specialised backend was made for its model's whole input ranges
  /// (InputRanges: a `.pt2` exported with --dynamic), not for the samples' shapes alone.
  [[nodiscard]] bool takes_range() const { return impl_->takes_range(); }
  /// The graph the wrapped backend runs, shared with its other-precision variants
  /// (aitune::graph_of).
  [[nodiscard]] std::string graph() const { return impl_->graph(); }
  /// How the wrapped backend's calls use LibTorch's threads (torch_thread_use_of).
  [[nodiscard]] TorchThreadUse torch_thread_use() const { return impl_->torch_thread_use(); }
  /// The files the backend loads at build (an AOTInductor package), for the tuning cache's key:
  /// `loaded_files()` of the wrapped backend when it has one, else none.
  [[nodiscard]] std::vector<std::filesystem::path> loaded_files() const {
    return impl_->loaded_files();
  }

  /// The wrapped backend, if it is a `B` (else null).
  template <class B>
  [[nodiscard]] const B* target() const noexcept {
    const auto* holder = dynamic_cast<const Holder<B>*>(impl_.get());
    return holder ? &holder->backend : nullptr;
  }
  template <class B>
  [[nodiscard]] B* target() noexcept {
    return const_cast<B*>(std::as_const(*this).template target<B>());
  }

 private:
  struct Interface {
    virtual ~Interface() = default;
    virtual std::unique_ptr<Interface> clone() const = 0;
    virtual void build(const Model& model, std::span<const Sample> samples) = 0;
    virtual c10::IValue infer(const Sample& sample) = 0;
    virtual void activate() = 0;
    virtual void deactivate() = 0;
    virtual void after_calls() = 0;
    virtual BackendState state() const = 0;
    virtual std::string describe() const = 0;
    virtual std::string key() const = 0;
    virtual BackendIdentity identity() const = 0;
    virtual OutputPolicy output_policy() const = 0;
    virtual bool thread_safe() const = 0;
    virtual bool shape_specialised() const = 0;
    virtual bool takes_range() const = 0;
    virtual TorchThreadUse torch_thread_use() const = 0;
    virtual std::string graph() const = 0;
    virtual std::vector<std::filesystem::path> loaded_files() const = 0;
  };

  template <class B>
  struct Holder final : Interface {
    explicit Holder(B value) : backend(std::move(value)) {}

    std::unique_ptr<Interface> clone() const override {
      if constexpr (std::copy_constructible<B>) {
        return std::make_unique<Holder>(backend);
      } else {
        throw Error(fmt::format("{} cannot be copied (its type is move-only)", backend.describe()));
      }
    }
    void build(const Model& model, std::span<const Sample> samples) override {
      backend.build(model, samples);
    }
    c10::IValue infer(const Sample& sample) override { return backend.infer(sample); }
    void activate() override { backend.activate(); }
    void deactivate() override { backend.deactivate(); }
    void after_calls() override { aitune::after_calls<B>::run(backend); }
    BackendState state() const override { return backend.state(); }
    std::string describe() const override { return backend.describe(); }
    std::string key() const override { return backend.key(); }
    BackendIdentity identity() const override { return aitune::identity_of<B>::of(backend); }
    OutputPolicy output_policy() const override { return output_policy_of(backend); }
    bool thread_safe() const override {
      if constexpr (requires { backend.thread_safe(); }) {
        return backend.thread_safe();
      } else {
        return false;
      }
    }
    bool shape_specialised() const override {
      if constexpr (requires { backend.shape_specialised(); }) {
        return backend.shape_specialised();
      } else {
        return false;
      }
    }
    bool takes_range() const override {
      if constexpr (requires { backend.takes_range(); }) {
        return backend.takes_range();
      } else {
        return false;
      }
    }
    TorchThreadUse torch_thread_use() const override { return torch_thread_use_of(backend); }
    std::string graph() const override { return aitune::graph_of<B>::of(backend); }
    std::vector<std::filesystem::path> loaded_files() const override {
      if constexpr (requires { backend.loaded_files(); }) {
        return backend.loaded_files();
      } else {
        return {};
      }
    }

    B backend;
  };

  std::unique_ptr<Interface> impl_;
  std::optional<Tolerance> tolerance_;
};

static_assert(Backend<AnyBackend>);
static_assert(reference_codec<AnyBackend>::available);

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt

/// AnyBackend's baseline: declared here, defined in aitune/torch/tune/baseline.hpp, which picks it
/// from the model (TorchEager, the native runtime or an AOTInductor model). A tuning that does not
/// include that header fails to compile (an incomplete type) rather than run without a baseline.
template <>
struct aitune::baseline_traits<aitune::lt::AnyBackend>;
