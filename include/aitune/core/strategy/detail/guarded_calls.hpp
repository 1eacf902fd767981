// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Every call the strategy makes into a backend is user code: an exception of any type is caught
/// and becomes that backend's reason on its report row, and the tuning goes on. This header holds
/// those guards (naming, releasing, activating a backend) and the vocabulary of a failure: the
/// step it happened in and the status it gives the row.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/detail/caller_pool.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/measure/sample_names.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/strategy/detail/graph_verdicts.hpp"
#include "aitune/core/text/enum_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <utility>

namespace aitune::detail {

/// The steps a backend goes through before its measurement; a failure names its step.
enum class PrepareStep { name, build, run_samples, check, budget };

[[nodiscard]] constexpr EnumText enum_text(PrepareStep step) noexcept {
  switch (step) {
    case PrepareStep::name: return {"name", "name"};
    case PrepareStep::build: return {"build", "build"};
    case PrepareStep::run_samples: return {"run_samples", "run the samples"};
    case PrepareStep::check: return {"check", "correctness check"};
    case PrepareStep::budget: return {"budget", "time budget"};
  }
  return {};
}

/// Records a failure at `step` on `row` (its status follows from the step); returns false (not
/// ready) for the caller to pass on.
inline bool fail(CandidateReport& row, PrepareStep step, std::string reason) {
  switch (step) {
    case PrepareStep::name:
    case PrepareStep::build: row.status = CandidateStatus::build_failed; break;
    case PrepareStep::check: row.status = CandidateStatus::incorrect; break;
    case PrepareStep::run_samples:
    case PrepareStep::budget: row.status = CandidateStatus::measure_failed; break;
  }
  row.reason = std::move(reason);
  return false;
}

/// The sample running, when none is. A plain index with a sentinel, not an optional: GCC 12 at -O1
/// takes an optional's payload for "maybe uninitialized".
inline constexpr std::size_t no_sample = std::numeric_limits<std::size_t>::max();

/// Why no candidate can be checked when the baseline of `row` failed before its outputs were all
/// there: Reference::missing. Only the check turned off tunes on without them.
[[nodiscard]] inline std::string reference_missing(const CandidateReport& row) {
  return fmt::format("the baseline {} failed before its outputs on the samples were there, so "
                     "there is nothing to check a candidate's outputs against, and none is "
                     "selected unchecked (fix the model or its samples, or turn the correctness "
                     "check off)",
                     row.backend);
}

/// The reason of a candidate whose build and check took `spent_ms`, over its own time budget.
[[nodiscard]] inline std::string over_budget(double spent_ms) {
  return fmt::format("over its time budget: building and checking it took {:.1f} s",
                     spent_ms / 1000.0);
}

/// What the report calls a backend. When `describe()` or `key()` throws, the backend is named by
/// its position and `failure` says why (it is never built).
struct Name {
  std::string description;
  std::string key;
  std::optional<std::string> failure{};
  std::string graph{};         ///< aitune::graph_of: empty where it has none, or naming it threw
  BackendIdentity identity{};  ///< aitune::identity_of: empty where it has none, or it threw

  /// A report row for the backend so named.
  [[nodiscard]] CandidateReport row() const {
    CandidateReport named{description, key};
    named.graph = graph;
    named.identity = identity;
    return named;
  }
};

/// The guards around the calls that are not timed: naming, releasing and activating a backend,
/// and the one line a failure is reported as.
template <Backend B>
class GuardedCalls {
 public:
  GuardedCalls(Logger log, bool full_errors, SampleNames names = {})
      : log_(std::move(log)), full_errors_(full_errors), names_(std::move(names)) {}

  /// What the reasons call each sample.
  [[nodiscard]] const SampleNames& sample_names() const noexcept { return names_; }

  /// The exception being handled as one line (error_summary<B>); with full errors on, its whole
  /// text is logged too.
  [[nodiscard]] std::string failure_text() const {
    return current_exception_message([this](const std::exception& error) {
      std::string line = error_summary<B>::of(error);
      if (full_errors_ && line != error.what()) {
        log_.info(3, fmt::format("the full error: {}", error.what()));
      }
      return line;
    });
  }

  [[nodiscard]] static std::string position_of(std::size_t index) {
    return fmt::format("candidate #{}", index + 1);
  }

  [[nodiscard]] Name name_of(const B& backend, const std::string& position) const {
    Name name;
    try {
      name.description = backend.describe();
    } catch (...) {
      name.description = position;
      name.failure = fmt::format("describe() threw: {}", failure_text());
      return name;
    }
    try {
      name.key = backend.key();
    } catch (...) {
      name.failure = fmt::format("key() threw: {}", failure_text());
    }
    try {
      name.graph = graph_of<B>::of(backend);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a graph of its own, then
    }
    try {
      name.identity = identity_of<B>::of(backend);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the key alone names it, then
    }
    return name;
  }

  /// The baseline (baseline_traits<B>) made for `model` and named on its row of `report`; none
  /// when the backend type defines none (a warning, and no row), or when making or naming it
  /// threw (its row says why).
  [[nodiscard]] std::optional<B> make_baseline(const typename B::model_type& model,
                                               TuneReport& report) const {
    if constexpr (!baseline_traits<B>::available) {
      log_.warn(1, "this backend type defines no baseline: performance validation and the "
                   "comparison of outputs are skipped");
      return std::nullopt;
    } else {
      std::optional<B> made;
      Name name{"baseline", ""};
      try {
        made.emplace(baseline_traits<B>::make(model));
        name = name_of(*made, "baseline");
      } catch (...) {
        name.failure = fmt::format("making the baseline threw: {}", failure_text());
      }
      CandidateReport& row = report.baseline.emplace(name.row());
      log_.info(1, fmt::format("baseline {}", row.backend));
      if (!name.failure) return made;
      fail(row, PrepareStep::name, *name.failure);
      if (made) release(*made);
      return std::nullopt;
    }
  }

  /// Runs `measure()` (the measurement of `entrants` backends): when it fails as a whole, not one
  /// backend, every lane is unmeasured with that cause. A cancellation passes through.
  template <class Measure>
  [[nodiscard]] Measurement measured(std::size_t entrants, Measure measure) const {
    if (entrants > 1) log_.info(1, fmt::format("measuring {} backend(s) together", entrants));
    try {
      return measure();
    } catch (const CancelledError&) {
      throw;
    } catch (...) {
      const std::string cause = fmt::format("the measurement failed: {}", failure_text());
      log_.warn(1, cause);
      Measurement failed;
      failed.lanes.assign(entrants, Lane{});
      for (Lane& lane : failed.lanes)
        lane.failure = cause;
      return failed;
    }
  }

  /// The description of candidate `index`, which must be unbuilt (ConfigError otherwise).
  [[nodiscard]] std::string describe_unbuilt(const B& candidate, std::size_t index) const {
    Name name = name_of(candidate, position_of(index));
    if (candidate.state() != BackendState::created) {
      throw ConfigError(fmt::format("candidate {} must be passed unbuilt, it is {}",
                                    name.description, to_string(candidate.state())));
    }
    return std::move(name.description);
  }

  /// Releases a backend that will not be handed back (deactivate()). Its failure must not end
  /// the tuning, but it is reported. (BackendLifecycle leaves a backend whose deactivate() threw
  /// inactive, so it is never deactivated twice.)
  void release(B& backend) const {
    if (backend.state() == BackendState::created) return;
    try {
      backend.deactivate();
    } catch (...) {
      const std::string cause = failure_text();
      std::string name = "a backend";
      try {
        name = backend.describe();
      } catch (...) {  // NOLINT(bugprone-empty-catch): the position-free name above serves
      }
      log_.warn(2, fmt::format("{}: deactivate failed: {}", name, cause));
    }
  }

  /// Activates the backend that is to be handed back. When its activate() throws, `row` says why,
  /// the backend is released, and the caller falls back to the other choice.
  bool try_activate(B& backend, CandidateReport& row) const {
    try {
      backend.activate();
      return true;
    } catch (...) {
      row.status = CandidateStatus::activate_failed;
      row.reason = fmt::format("activate() threw when it was to be selected: {}", failure_text());
      log_.warn(1, fmt::format("{}: {}", row.backend, row.reason));
      release(backend);
      return false;
    }
  }

  /// `after_calls<B>` once a call of `backend` has failed: the process is put back all the same,
  /// and the call's failure is the one reported.
  static void end_calls_after_failure(B& backend) noexcept {
    try {
      after_calls<B>::run(backend);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the first failure is the backend's verdict
    }
  }

  /// Runs `calls(at)` on `backend` as `step` (`at`: the sample running, if any, else no_sample):
  /// a failure of any type fails `row` at that step, the sample named (`sample_count`: how many
  /// there are; a SampleError names its own), the step too when `named`; the process is put back
  /// (aitune::after_calls). Returns whether the calls succeeded. A cancellation passes through.
  template <class Calls>
  bool run_step(B& backend, CandidateReport& row, PrepareStep step, bool named,
                std::size_t sample_count, Calls calls) const {
    std::size_t at = no_sample;
    try {
      calls(at);
      return true;
    } catch (const CancelledError&) {
      end_calls_after_failure(backend);
      throw;
    } catch (...) {
      std::string cause;
      try {
        throw;
      } catch (const SampleError& error) {  // about one sample: named as the reasons name them
        if (error.sample() < sample_count) at = error.sample();
        cause = at == no_sample ? error.what() : error.about_sample();
      } catch (...) {
        cause = failure_text();
      }
      end_calls_after_failure(backend);
      if (at != no_sample) cause = names_.at(at, sample_count, std::move(cause));
      return fail(row, step, named ? fmt::format("{}: {}", to_label(step), cause) : cause);
    }
  }

  /// `backend` as an entrant of a measurement: each call one inference on the sample `mix` gives
  /// the call's number (SampleMix::sample_of_call), its failure one line that names the sample.
  /// With `callers` (a server's load), each call is one inference per caller at once, caller k on
  /// the next sample of the call's shape; a backend that is not thread-safe takes them in turn. A
  /// stop requested through `stop` ends the measurement at the next call.
  [[nodiscard]] Entrant entrant(B& backend, std::span<const typename B::sample_type> samples,
                                const SampleMix& mix, std::string name, bool is_baseline,
                                double budget_ms, std::stop_token stop,
                                CallerPool* callers = nullptr) const {
    auto infer = [this, &backend, samples, mix](std::size_t call) {
      const std::size_t index = mix.sample_of_call(call) % samples.size();
      try {
        (void)backend.infer(samples[index]);
      } catch (...) {
        throw Error(names_.at(index, samples.size(), failure_text()));
      }
    };
    auto after = [&backend] { after_calls<B>::run(backend); };
    if (callers == nullptr) {
      return Entrant{std::move(name), is_baseline,
                     [infer, stop](std::size_t call) {
                       if (stop.stop_requested()) throw CancelledError("cancelled");
                       infer(call);
                     },
                     std::move(after), budget_ms};
    }
    auto in_turn = thread_safe(backend) ? nullptr : std::make_shared<std::mutex>();
    const std::size_t shapes = std::max<std::size_t>(mix.timed().size(), 1);
    return Entrant{std::move(name), is_baseline,
                   [infer, stop, callers, in_turn, mix, shapes](std::size_t call) {
                     if (stop.stop_requested()) throw CancelledError("cancelled");
                     const auto n = static_cast<std::size_t>(callers->callers());
                     callers->run([&](int k) {
                       const std::size_t mine =
                           mix.call_of(mix.shape_of_call(call),
                                       call / shapes * n + static_cast<std::size_t>(k));
                       if (!in_turn) return infer(mine);
                       const std::lock_guard lock(*in_turn);
                       infer(mine);
                     });
                   },
                   std::move(after), budget_ms};
  }

  /// Whether `backend` says its calls may run at once (`thread_safe()`; false without it, as
  /// TunedModule and AnyBackend take it).
  [[nodiscard]] static bool thread_safe(const B& backend) {
    if constexpr (requires { backend.thread_safe(); }) {
      return static_cast<bool>(backend.thread_safe());
    } else {
      return false;
    }
  }

  /// Whether `row`'s `backend` is refused for its graph (detail::refuse_for_graph: the
  /// full-precision run of its graph is incorrect): its row says so, and it is released.
  bool refused_for_graph(const TuneReport& report, CandidateReport& row, B& backend) const {
    if (!refuse_for_graph(report, row)) return false;
    log_.warn(2, fmt::format("{}: {}: {}", row.backend, to_label(row.status), row.reason));
    release(backend);
    return true;
  }

  void warn_baseline_failed(const CandidateReport& row) const {
    log_.warn(1, fmt::format("baseline {} failed ({}); the performance check is skipped and "
                             "tuning goes on with the candidates",
                             row.backend, row.reason));
  }

 private:
  Logger log_;
  bool full_errors_;
  SampleNames names_;
};

/// A point to stop at: once a stop was requested through `stop`, the tuning ends here (the strategy
/// adds the report so far).
inline void stop_point(const std::stop_token& stop) {
  if (stop.stop_requested()) throw CancelledError("cancelled");
}

/// The same between two samples of `row`'s preparation, which its row then says.
inline void stop_point(const std::stop_token& stop, CandidateReport& row) {
  if (!stop.stop_requested()) return;
  row.status = CandidateStatus::skipped;
  row.reason = "not finished: the tuning was cancelled while it was prepared";
  stop_point(stop);
}

}  // namespace aitune::detail
