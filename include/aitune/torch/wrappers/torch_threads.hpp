// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// TorchThreads: a LibTorch backend run at its own intra-op thread count, so that a tuning can
/// measure the same candidate at other counts (`--tune-threads`, with_torch_threads).
///
/// at::set_num_threads(n) reaches past its backend: it sets the calling thread's OpenMP count and
/// LibTorch's default, which every thread takes at its first parallel op, and it re-creates
/// LibTorch's own pool and empties oneDNN's primitive cache for the whole process. That costs,
/// so the count is set in the first call of a run of calls - the call the race discards - and
/// put back, untimed, by aitune::after_calls once the run is over: the baseline and every other
/// candidate run at the count they would have alone. A TunedModule serves the inner backend at
/// the serving threads' own count unless told to apply the count (TuneOptions::torch_threads);
/// the report recommends it.

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/wrappers/wrapper.hpp"

#include <ATen/Parallel.h>

#include <fmt/format.h>

#include <concepts>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class TorchThreads : public WrapperBackend<TorchThreads> {
 public:
  /// `inner` run at `threads` LibTorch intra-op threads (1 or more).
  template <class Inner>
  requires(!std::same_as<std::remove_cvref_t<Inner>, TorchThreads> && TorchBackend<Inner>)
      TorchThreads(Inner inner, int threads)
      : WrapperBackend(AnyBackend(std::move(inner))), threads_(threads) {
    if (threads < 1) {
      throw ConfigError(fmt::format("TorchThreads: {} runs at 1 LibTorch thread or more, not {}",
                                    inner_.describe(), threads));
    }
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format("TorchThreads({}, threads={})", inner_.describe(), threads_);
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("torch_threads:{}:{}", threads_, inner_.key());
  }
  /// The inner backend's identity, at its LibTorch thread count.
  [[nodiscard]] BackendIdentity identity() const {
    BackendIdentity identity = inner_.identity();
    identity["torch_threads"] = threads_;
    return identity;
  }
  /// Calls on several threads would set the count at once: they are serialised.
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return false; }
  /// At its own count: with_torch_threads adds no other count of it.
  [[nodiscard]] static constexpr TorchThreadUse torch_thread_use() noexcept {
    return TorchThreadUse::own_count;
  }

  [[nodiscard]] int threads() const noexcept { return threads_; }
  /// The inner backend, built if this one was, for serving at the process's own count.
  [[nodiscard]] AnyBackend release_inner() && { return std::move(inner_); }

  /// Puts back the count the last run of calls found (aitune::after_calls), then the inner
  /// backend's own state.
  void after_calls() {
    if (found_threads_) {
      if (at::get_num_threads() != *found_threads_) at::set_num_threads(*found_threads_);
      found_threads_.reset();
    }
    inner_.after_calls();
  }

 private:
  friend class BackendLifecycle<TorchThreads>;

  c10::IValue do_infer(const Sample& sample) {
    // Set only when it differs: a set re-creates the pools, which only the first call of a
    // run of calls may pay.
    if (const int now = at::get_num_threads(); now != threads_) {
      if (!found_threads_) found_threads_ = now;
      at::set_num_threads(threads_);
      // A LibTorch on its own thread pool (not OpenMP) keeps the count its pool started with.
      if (const int set = at::get_num_threads(); set != threads_) {
        throw Error(fmt::format("LibTorch runs at {} threads after at::set_num_threads({}): "
                                "this build cannot change its count once its pool started",
                                set, threads_));
      }
    }
    return inner_.infer(sample);
  }

  int threads_;
  std::optional<int> found_threads_{};  ///< the count before this run of calls set its own
};

static_assert(TorchBackend<TorchThreads>);

/// What a TunedModule does when its tuning selected a TorchThreads: setting the count reaches
/// past the module (LibTorch's default, its pool, oneDNN's cache), so a module sets it only
/// when told to.
enum class TunedThreads {
  recommend,  ///< serve the inner backend at the serving threads' count; the decision names n
  apply,      ///< serve the TorchThreads: each serving thread's count becomes n at its first call
};

/// The backend a TunedModule serves for `selected` (a tuning's choice), with the sentence its
/// decision gains: the count that was measured, and whether the module applies it (nothing for
/// a backend that is not a TorchThreads).
[[nodiscard]] inline AnyBackend served_backend(AnyBackend selected, TunedThreads use,
                                               std::string& decision) {
  TorchThreads* pinned = selected.target<TorchThreads>();
  if (pinned == nullptr) return selected;
  const int threads = pinned->threads();
  if (use == TunedThreads::apply) {
    decision += fmt::format("; the module runs at {} LibTorch thread{} (TunedThreads::apply)",
                            threads, threads == 1 ? "" : "s");
    return selected;
  }
  decision += fmt::format(
      "; it was measured at {0} LibTorch thread{1}, a setting the module does not change: it "
      "serves {2} at the serving threads' count ({3} here) - for the measured speed call "
      "at::set_num_threads({0}) (torch.set_num_threads) at start-up, before the serving threads "
      "first run LibTorch, or tune with TunedThreads::apply",
      threads, threads == 1 ? "" : "s", pinned->inner().describe(), at::get_num_threads());
  return std::move(*pinned).release_inner();
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
