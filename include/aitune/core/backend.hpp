// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The Backend concept and the backend life cycle.
///
/// A backend is one way of executing a model (eager, frozen, bf16, CUDA graph, ...). It is
/// built once from the model and the batch-size-1 samples, then answers `infer`. The strategy
/// deactivates the backends it does not select, which frees what they hold.
///
///     created --build--> active <--activate/deactivate--> inactive
///        \--build throws--> failed   (only deactivate is allowed afterwards)

#include "aitune/core/error.hpp"

#include <fmt/format.h>

#include <concepts>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace aitune {

enum class BackendState { created, active, inactive, failed };

[[nodiscard]] constexpr std::string_view to_string(BackendState state) noexcept {
  switch (state) {
    case BackendState::created: return "created";
    case BackendState::active: return "active";
    case BackendState::inactive: return "inactive";
    case BackendState::failed: return "failed";
  }
  return "unknown";
}

/// What a strategy needs from an execution backend.
///
/// - `model_type`: what `build` reads (for LibTorch, the loaded module and its device);
/// - `sample_type`: one batch-size-1 input; `output_type`: what `infer` returns;
/// - `build(model, samples)`: prepare everything (may throw; the strategy records why);
/// - `infer(sample)`: run once; only legal while active;
/// - `activate()` / `deactivate()`: a deactivated backend frees what it can and refuses `infer`;
/// - `describe()`: text for people, e.g. `TorchScriptFrozen(dtype=bf16)`;
/// - `key()`: a stable identifier of the configuration, for caches and JSON.
///
/// What a strategy calls, and when (every call is user code: an exception of any type is caught,
/// recorded with the backend's report entry, and the tuning goes on):
/// - `describe()` and `key()`: when the strategy is made and when a tuning starts. If either
///   throws, the backend is named by its position ("candidate #2", or "baseline"), never built
///   and never selected;
/// - `build()`: once, on the tuning's own copy of the candidate;
/// - `infer()`: for the correctness check, then for the measurement;
/// - `deactivate()`: at most once per activation, on every backend that is not handed back
///   (failed, lost, or left the race), never on the one that is;
/// - `activate()`: only on the backend about to be handed back, if it had been deactivated
///   (the baseline under the sequential schedule); if it throws, the other choice (the best
///   candidate, or the baseline) is handed back instead.
template <class B>
concept Backend = std::move_constructible<B> &&
    requires(B& backend, const B& const_backend, const typename B::model_type& model,
             std::span<const typename B::sample_type> samples,
             const typename B::sample_type& sample) {
  backend.build(model, samples);
  { backend.infer(sample) } -> std::same_as<typename B::output_type>;
  backend.activate();
  backend.deactivate();
  { const_backend.state() } -> std::same_as<BackendState>;
  { const_backend.describe() } -> std::convertible_to<std::string>;
  { const_backend.key() } -> std::convertible_to<std::string>;
};

/// Carries the life-cycle state machine so that a backend only writes its steps.
///
/// `Derived` provides `do_build(model, samples)`, `do_infer(sample)`, `describe()`, `key()`
/// and optionally `do_activate()` / `do_deactivate()` (default: nothing to do). Illegal
/// transitions throw BackendStateError naming the backend, the step and the state.
template <class Derived>
class BackendLifecycle {
 public:
  [[nodiscard]] BackendState state() const noexcept { return state_; }
  [[nodiscard]] bool is_active() const noexcept { return state_ == BackendState::active; }

  template <class Model, class Samples>
  void build(const Model& model, const Samples& samples) {
    require(state_ == BackendState::created, "build", "a backend is built only once");
    try {
      self().do_build(model, samples);
    } catch (...) {
      state_ = BackendState::failed;
      throw;
    }
    state_ = BackendState::active;
  }

  template <class Sample>
  decltype(auto) infer(const Sample& sample) {
    // Said here, where a backend's author looks, not deep in the Backend concept's check.
    static_assert(std::same_as<decltype(self().do_infer(sample)), typename Derived::output_type>,
                  "do_infer(const sample_type&) must return output_type itself (for an "
                  "aitune::lt backend, c10::IValue), not a type that converts to it");
    require(state_ == BackendState::active, "infer", "only an active backend infers");
    return self().do_infer(sample);
  }

  void activate() {
    if (state_ == BackendState::active) return;
    require(state_ == BackendState::inactive, "activate", "only a built backend can be activated");
    self().do_activate();
    state_ = BackendState::active;
  }

  /// Frees what the backend holds. Legal on a built backend and on a failed one (so a failed
  /// build can release partial resources); a failed backend stays failed.
  /// A deactivate() that throws still leaves the backend inactive: it is not called twice.
  void deactivate() {
    require(state_ != BackendState::created, "deactivate", "the backend was never built");
    if (state_ == BackendState::inactive) return;
    if (state_ == BackendState::active) state_ = BackendState::inactive;
    self().do_deactivate();
  }

 protected:
  BackendLifecycle() = default;

  // Default steps: nothing to (re)load or free.
  void do_activate() {}
  void do_deactivate() {}

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }

  void require(bool legal, std::string_view step, std::string_view rule) const {
    if (!legal) {
      throw BackendStateError(fmt::format("{}: cannot {} while {} ({})", self().describe(), step,
                                          to_string(state_), rule));
    }
  }

  BackendState state_ = BackendState::created;
};

}  // namespace aitune
