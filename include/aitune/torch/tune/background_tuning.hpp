// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// BackgroundTunedModule: serve at once, tune meanwhile. A server that cannot wait for a
/// tuning at start-up builds the baseline (TorchEager, or the native runtime for a `.pt2`),
/// serves it from the first request, and switches every later request to the tuned backend
/// when a tuning on a thread of its own ends. With a TuningCache a hit switches within about
/// a second, and a miss's decision is stored for the next start-up.
///
/// The tuning measures while requests are served: on the same cores (or GPU) the traffic
/// slows the backends it times. The interleaved race times the baseline and the candidates in
/// turns, so the load weighs on each alike, but a heavy or bursty load widens the intervals,
/// and the decision may come later or fall back to the baseline; the rows' memory figures count
/// what the requests allocate meanwhile. Tune at a quiet moment (or with lt::tune before
/// serving) where the decision matters more than the start-up time.

#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/strategy/strategy_config.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/serve/tuned_module.hpp"
#include "aitune/torch/tune/tune.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class BackgroundTunedModule {
 public:
  enum class State {
    tuning,     ///< forward() runs the baseline; the tuning goes on
    tuned,      ///< forward() runs the tuning's choice (which may be the baseline)
    failed,     ///< the tuning threw: forward() keeps the baseline; failure() says why
    cancelled,  ///< cancel() (or the config's stop token) stopped it: the baseline stays
  };

  /// Builds the baseline on `samples` now (it throws as lt::tune would when the model cannot
  /// run them) and serves it; tunes with `options` (lt::tune's) on a thread of its own. With a
  /// cache, a hit switches once the cached choice is rebuilt and checked, and a miss is tuned
  /// and stored; the module works on its own copy of the TuningCache, so the caller's may go
  /// before the tuning ends. The config's stop token, if any, cancels the tuning as cancel()
  /// does.
  BackgroundTunedModule(Model model, std::vector<Sample> samples, TuneOptions options = {}) {
    if (!options.candidates) {
      options.candidates =
          default_candidates_for_callers(model, options.config.profiling().callers(),
                                         options.config.accuracy_budget().has_value());
    }
    if (options.cache != nullptr) {
      cache_ = std::make_unique<const TuningCache>(*options.cache);
      options.cache = cache_.get();
    }
    serving_ = std::make_shared<const TunedModule>(serve_baseline(
        model, samples, options.config.module_name(), shape_check_for(model, *options.candidates)));
    if (options.config.stop_token().stop_possible()) {
      user_stop_.emplace(options.config.stop_token(), [this] { stop_.request_stop(); });
    }
    options.config.set_stop_token(stop_.get_token());
    // Started last: everything the thread touches exists by now.
    worker_ = std::thread(
        [this, model = std::move(model), samples = std::move(samples),
         options = std::move(options)]() mutable { run(model, samples, std::move(options)); });
  }

  BackgroundTunedModule(const BackgroundTunedModule&) = delete;
  BackgroundTunedModule& operator=(const BackgroundTunedModule&) = delete;

  /// Cancels a tuning still running and waits for it: within one measured call, or once the
  /// backend being built is built (a build itself cannot be interrupted).
  ~BackgroundTunedModule() {
    stop_.request_stop();
    if (worker_.joinable()) worker_.join();
  }

  /// Runs the module now being served (TunedModule::forward): safe from several threads at
  /// once, also while the switch happens. A request already running finishes on the backend
  /// it started on.
  c10::IValue forward(const Sample& inputs) const { return current()->forward(inputs); }

  /// The module now being served: the baseline, then the tuned one. Holding it keeps it alive.
  [[nodiscard]] std::shared_ptr<const TunedModule> current() const {
    const std::lock_guard lock(mutex_);
    return serving_;
  }

  [[nodiscard]] State state() const noexcept { return state_.load(); }

  /// Asks the tuning to stop; the baseline goes on serving. Does not wait (wait() does).
  void cancel() noexcept { stop_.request_stop(); }

  /// Waits until the tuning has ended, however it ended; returns the state.
  State wait() const {
    std::unique_lock lock(mutex_);
    ended_.wait(lock, [this] { return state_.load() != State::tuning; });
    return state_.load();
  }

  /// As wait(), for at most `timeout`; State::tuning when it has not ended by then.
  template <class Rep, class Period>
  State wait_for(std::chrono::duration<Rep, Period> timeout) const {
    std::unique_lock lock(mutex_);
    ended_.wait_for(lock, timeout, [this] { return state_.load() != State::tuning; });
    return state_.load();
  }

  /// Why the tuning failed or was cancelled (empty otherwise).
  [[nodiscard]] std::string failure() const {
    const std::lock_guard lock(mutex_);
    return failure_;
  }

 private:
  /// The baseline, built and checked on the samples, as a TunedModule whose report says that
  /// it serves while the tuning runs. It holds inputs to the contract the tuned module will
  /// (`shapes`), so a request refused after the switch is refused before it too.
  static TunedModule serve_baseline(const Model& model, const std::vector<Sample>& samples,
                                    const std::string& module_name, ShapeContract shapes) {
    AnyBackend baseline = make_baseline(model);
    baseline.build(model, samples);
    TuneReport report;
    report.strategy = "Background tuning";
    report.module = module_name;
    report.selected = baseline.describe();
    report.selected_key = baseline.key();
    report.selected_identity = baseline.identity();
    report.baseline_selected = true;
    report.decision = "the baseline serves while the tuning runs";
    return TunedModule(TuneResult<AnyBackend>{std::move(baseline), std::move(report)}, samples,
                       std::move(shapes));
  }

  void run(const Model& model, const std::vector<Sample>& samples, TuneOptions options) {
    State end = State::failed;
    std::string why;
    std::shared_ptr<const TunedModule> tuned;
    try {
      tuned = std::make_shared<const TunedModule>(tune(model, samples, std::move(options)));
      end = State::tuned;
    } catch (const CancelledError& error) {
      end = State::cancelled;
      why = error.what();
    } catch (const std::exception& error) {
      why = summarize_error(error);
    } catch (...) {
      why = "the tuning threw something that is not a std::exception";
    }
    std::shared_ptr<const TunedModule> retired;  // freed outside the lock
    {
      const std::lock_guard lock(mutex_);
      if (tuned) {
        retired = std::exchange(serving_, std::move(tuned));
      }
      failure_ = std::move(why);
      state_.store(end);
    }
    ended_.notify_all();
  }

  mutable std::mutex mutex_;  ///< guards serving_ and failure_; with ended_, the end
  mutable std::condition_variable ended_;
  std::shared_ptr<const TunedModule> serving_{};
  std::string failure_{};
  std::atomic<State> state_{State::tuning};
  std::stop_source stop_{};
  std::optional<std::stop_callback<std::function<void()>>> user_stop_{};
  std::unique_ptr<const TuningCache> cache_{};  ///< the worker's own copy of the caller's cache
  std::thread worker_{};                        ///< last: joined before the members it uses go
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
