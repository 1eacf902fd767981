// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// MinLatencyStrategy: selects the backend with the lowest latency at batch size 1.
///
/// One tuning, in the order it runs; each step is a member function below, in this order:
///
///   tune       checks the inputs, then runs the steps;
///   pre_tune   makes the baseline (TorchEager for LibTorch, from aitune::baseline_traits) and
///              prepares it: its outputs become the reference of the correctness check;
///   prepare    the same for the baseline and each candidate: name it, build it, run the samples
///              through it (a candidate's outputs are checked against the reference). A failure
///              is recorded with its step and cause, the backend is freed, the tuning goes on;
///   measure    the prepared backends, by the schedule (detail/measure/measure.hpp): the
///   interleaved
///              race measures all of them together once every candidate is prepared; the
///              sequential schedule measures each one as soon as it is prepared, so that losers
///              are freed as it goes;
///   settle     turns each measured lane into a result and a report row, and keeps the best
///              candidate so far by is_better (detail/decision/decider.hpp); the others are freed;
///   resolve    the best candidate if it displaces the baseline, else the baseline; activated
///              and handed back (the other choice when its activate() throws);
///   post_tune  the summary line.
///
/// With performance validation off the baseline is not measured and the best candidate wins;
/// tuning throws NoCorrectBackendError when nothing can be handed back.
///
/// Every call into a backend is user code: an exception of any type is caught and recorded on
/// that backend's report row (see the Backend concept for the calls the strategy makes).

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/decision/results.hpp"
#include "aitune/core/detail/decision/decider.hpp"
#include "aitune/core/detail/measure/measure.hpp"
#include "aitune/core/detail/measure/measurement.hpp"
#include "aitune/core/detail/strategy/busy_machine.hpp"
#include "aitune/core/detail/text/format.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/memory_use.hpp"
#include "aitune/core/measure/profiling_config.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/strategy/progress.hpp"
#include "aitune/core/strategy/strategy_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune {

/// What tuning returns: the selected backend, active and ready for `infer`, and the report.
template <Backend B>
struct TuneResult {
  B backend;
  TuneReport report;

  [[nodiscard]] bool baseline_selected() const noexcept { return report.baseline_selected; }
};

/// The steps a backend goes through before its measurement; a failure names its step.
enum class PrepareStep { name, build, run_samples, check, budget };

[[nodiscard]] constexpr std::string_view to_string(PrepareStep step) noexcept {
  switch (step) {
    case PrepareStep::name: return "name";
    case PrepareStep::build: return "build";
    case PrepareStep::run_samples: return "run the samples";
    case PrepareStep::check: return "correctness check";
    case PrepareStep::budget: return "time budget";
  }
  return "unknown";
}

template <Backend B, Timer T = default_timer_t<B>>
class MinLatencyStrategy {
 public:
  using backend_type = B;
  using model_type = typename B::model_type;
  using sample_type = typename B::sample_type;
  using output_type = typename B::output_type;
  using result_type = MinLatencyProfilingResult;
  using timer_type = T;

  static constexpr std::string_view title = "Min Latency Strategy";
  static constexpr std::string_view metric_label = "latency";
  static constexpr std::string_view metric_unit = "ms";

  explicit MinLatencyStrategy(std::vector<B> candidates,
                              StrategyConfig config = {}) requires std::default_initializable<T>
      : MinLatencyStrategy(std::move(candidates), std::move(config), T{}) {}

  /// Candidates must be unbuilt; they are tried in list order (a near tie goes to the earlier).
  MinLatencyStrategy(std::vector<B> candidates, StrategyConfig config, T timer)
      : candidates_(std::move(candidates)), config_(std::move(config)), timer_(std::move(timer)),
        log_(config_.logger()) {
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      const Name name = name_of(candidates_[i], position_of(i));
      if (candidates_[i].state() != BackendState::created) {
        throw ConfigError(fmt::format("candidate {} must be passed unbuilt, it is {}",
                                      name.description, to_string(candidates_[i].state())));
      }
      descriptions_.push_back(name.description);
    }
  }

  /// Tunes `model` on the batch-size-1 `samples`; the report names it StrategyConfig's
  /// module_name. Throws NoCorrectBackendError when no backend can be handed back, ConfigError
  /// for no samples.
  [[nodiscard]] TuneResult<B> tune(const model_type& model, std::span<const sample_type> samples) {
    return tune(model, samples, config_.module_name());
  }

  /// As above, the report naming the module `module_name`.
  [[nodiscard]] TuneResult<B> tune(const model_type& model, std::span<const sample_type> samples,
                                   std::string module_name) {
    if (samples.empty()) throw ConfigError("tune needs at least one batch-size-1 sample");
    if (consumed_) {
      throw Error(
          "the candidates of this strategy were consumed by an earlier tune() (the backend type "
          "is not copyable); construct a new strategy to tune again");
    }
    // A timer may depend on the model (LibTorch's DeviceTimer uses CUDA events on a GPU).
    if constexpr (requires { timer_.prepare(model); }) timer_.prepare(model);
    Run run = start(model, samples, std::move(module_name));
    // Move-only candidates are taken from here on: even a tuning that throws has used them up.
    if constexpr (!std::copy_constructible<B>) consumed_ = true;

    pre_tune(run);
    if (measures_as_it_goes()) measure(run);
    for (std::size_t index = 0; index < candidates_.size(); ++index) {
      stop_if_cancelled(run);
      prepare_candidate(run, index);
      if (measures_as_it_goes()) measure(run);
    }
    stop_if_cancelled(run);
    measure(run);  // the interleaved race: everything prepared, together
    run.report.measurement.calls = calls_made(run.report);
    stop_if_cancelled(run);
    TuneResult<B> result = resolve(run);
    if (keep_reference_outputs_) reference_outputs_ = std::move(run.reference_outputs);
    result.report.tuning_time_ms = timer_.now_ms() - run.start_ms;
    post_tune(result.report, result.report.baseline_selected ? nullptr : &run.best->result);
    run.leader = result.report.selected;
    tell(run, Progress{.stage = ProgressStage::finished});
    return result;
  }

  /// Hands back the backend an earlier tuning selected, without measuring anything: `earlier`
  /// is that tuning's report (e.g. from a TuningCache). The selected candidate, found by its key
  /// among this strategy's candidates, is built and checked once against the reference, then
  /// activated. The reference is `stored_reference` (the baseline's outputs on these samples,
  /// kept with the decision: one per sample) when given, so the baseline is not built; else the
  /// baseline is prepared and its outputs are the reference. The report is `earlier`, with the
  /// check's accuracy on the selected row and cache_hit's `check_time_ms` and
  /// `stored_reference` set (the caller fills in the rest). Throws NoCorrectBackendError,
  /// saying why, when the selected backend is not among the candidates, fails its build or
  /// check, or cannot be activated: the caller then tunes afresh.
  [[nodiscard]] TuneResult<B> reuse(const model_type& model, std::span<const sample_type> samples,
                                    TuneReport earlier,
                                    std::vector<output_type> stored_reference = {}) {
    if (samples.empty()) throw ConfigError("reuse needs at least one batch-size-1 sample");
    if (!stored_reference.empty() && stored_reference.size() != samples.size()) {
      throw ConfigError(fmt::format("reuse: {} stored reference outputs for {} samples",
                                    stored_reference.size(), samples.size()));
    }
    if constexpr (requires { timer_.prepare(model); }) timer_.prepare(model);
    Run run = start(model, samples, earlier.module, "reusing the earlier choice for");
    if (earlier.baseline_selected) {
      if constexpr (baseline_traits<B>::available) {
        B baseline = baseline_traits<B>::make(run.model);
        CandidateReport entry{earlier.selected, earlier.selected_key};
        if (!prepare(run, baseline, entry, /*is_baseline=*/true) ||
            !try_activate(baseline, entry)) {
          release(baseline);
          refuse_reuse(run, earlier, entry.reason);
        }
        return reused(run, std::move(baseline), std::move(earlier));
      } else {
        refuse_reuse(run, earlier, "this backend type defines no baseline");
      }
    }
    std::optional<std::size_t> index;
    for (std::size_t i = 0; i < candidates_.size() && !index; ++i) {
      if (name_of(candidates_[i], position_of(i)).key == earlier.selected_key) index = i;
    }
    CandidateReport* row = earlier.selected_candidate();
    if (!index || row == nullptr) {
      refuse_reuse(run, earlier, "it is not among the candidates");
    }
    if constexpr (!std::copy_constructible<B>) consumed_ = true;
    const bool stored = !stored_reference.empty() && config_.correctness_check();
    if (stored) {
      run.reference_outputs = std::move(stored_reference);
    } else {
      pre_tune(run);  // the reference outputs
      if (run.baseline) release(*run.baseline);
    }
    B candidate = take_candidate(*index);
    CandidateReport entry{row->backend, row->key};
    log_.info(1, fmt::format("{}: rebuilding and checking the earlier choice{}", entry.backend,
                             stored ? " against the baseline's outputs stored with it" : ""));
    if (!prepare(run, candidate, entry, /*is_baseline=*/false) || !try_activate(candidate, entry)) {
      release(candidate);
      refuse_reuse(run, earlier, fmt::format("{}: {}", to_label(entry.status), entry.reason));
    }
    row->accuracy = entry.accuracy;
    TuneResult<B> result = reused(run, std::move(candidate), std::move(earlier));
    result.report.cache_hit->stored_reference = stored;
    return result;
  }

  /// Does `result` (listed later) rank above `other`? See LatencyDecider::is_better.
  [[nodiscard]] bool is_better(const result_type& result, const result_type& other) const {
    return LatencyDecider(config_.decision(), config_.decision().alpha()).is_better(result, other);
  }

  /// How many times faster `result` is than `baseline` (medians).
  [[nodiscard]] static double speedup(const result_type& result,
                                      const result_type& baseline) noexcept {
    return baseline.latency / result.latency;
  }

  [[nodiscard]] static std::string format_metric(double latency_ms) {
    return format_ms(latency_ms);
  }

  /// One entry per successfully profiled candidate, compared with the baseline (never the
  /// baseline itself). Empty when the baseline was not profiled.
  [[nodiscard]] const std::vector<PerfValidationResult>& perf_validation_results() const noexcept {
    return perf_validation_results_;
  }
  /// The baseline's result of the last tune(), if it was profiled.
  [[nodiscard]] const std::optional<result_type>& baseline_result() const noexcept {
    return baseline_result_;
  }
  /// Asks tune() to keep the baseline's outputs for reference_outputs() (tune_with_cache stores
  /// them); off by default, since they may be large and on a device. Off drops any kept.
  void keep_reference_outputs(bool keep) noexcept {
    keep_reference_outputs_ = keep;
    if (!keep) reference_outputs_.clear();
  }
  /// With keep_reference_outputs(true): the baseline's outputs on the samples of the last
  /// tune() that handed a backend back, the reference its candidates were checked against.
  /// Empty when the correctness check was off or the baseline failed.
  [[nodiscard]] const std::vector<output_type>& reference_outputs() const noexcept {
    return reference_outputs_;
  }

  [[nodiscard]] const StrategyConfig& config() const noexcept { return config_; }

  [[nodiscard]] std::string describe() const {
    const auto on_off = [](bool on) { return on ? "on" : "off"; };
    const ProfilingConfig& profiling = config_.profiling();
    std::string text = fmt::format("name: {}\n", title);
    text += fmt::format("metric: {} ({}) at batch size 1\n", metric_label, metric_unit);
    text += fmt::format("performance validation: {}\n", on_off(config_.performance_validation()));
    text += fmt::format("correctness check: {}\n", on_off(config_.correctness_check()));
    text += fmt::format("decision: {}\n", config_.decision().describe());
    text += fmt::format("schedule: {}\n", to_string(profiling.schedule()));
    if (profiling.schedule() == Schedule::interleaved) {
      text += fmt::format("race: {}\n", profiling.race().describe());
    } else {
      text += fmt::format("stop rule: {}\n", profiling.stop_rule().describe());
    }
    text += fmt::format("candidates ({}):\n", descriptions_.size());
    for (std::size_t i = 0; i < descriptions_.size(); ++i) {
      text += fmt::format("  {}. {}\n", i + 1, descriptions_[i]);
    }
    return text;
  }

 private:
  using Result = result_type;
  /// `at_sample` when no sample is running.
  static constexpr std::size_t no_sample = std::numeric_limits<std::size_t>::max();

  /// What the report calls a backend. Backends are user code: when `describe()` or `key()`
  /// throws, the backend is named by its position and `failure` says why (it is never built).
  struct Name {
    std::string description;
    std::string key;
    std::optional<std::string> failure{};
  };

  /// A prepared candidate waiting for its measurement.
  struct Prepared {
    std::size_t index;
    B backend;
    double spent_ms;  ///< on its build and check
  };

  struct Best {
    std::size_t index;
    B backend;
    Result result;
  };

  /// The state of one tune() call.
  struct Run {
    const model_type& model;
    std::span<const sample_type> samples;
    const ProfilingConfig& profiling;
    double start_ms;
    double deadline_ms;
    /// The first samples outputs are checked on: all of them, unless the baseline's pass over
    /// them would not fit half the time budget (bound_reference_pass).
    std::size_t checked_samples = samples.size();
    TuneReport report{};
    std::vector<output_type> reference_outputs{};
    std::optional<B> baseline{};  ///< prepared (and measured, once settled): the fallback
    bool baseline_waiting = false;
    std::vector<Prepared> waiting{};  ///< prepared candidates not measured yet
    std::optional<Best> best{};
    /// The level of comparisons with the baseline, from the measurement that produced them.
    double baseline_tail_alpha = 0.0;
    /// Whether the race's looks answered the switch question (the confident rule, raced), and
    /// the candidates (their indices) they judged to displace the baseline, if any.
    bool switch_judged_by_looks = false;
    std::vector<std::size_t> switch_by_looks{};
    /// For the progress callback: when it was last told, and the measurement so far.
    double last_progress_ms = 0.0;
    std::size_t rounds_so_far = 0;
    std::size_t calls_so_far = 0;
    std::string leader{};
    std::optional<double> leader_ratio{};
  };

  // ---- the steps, in the order they run ------------------------------------------------------

  Run start(const model_type& model, std::span<const sample_type> samples, std::string module_name,
            std::string_view action = "tuning") {
    perf_validation_results_.clear();
    baseline_result_.reset();
    reference_outputs_.clear();
    const ProfilingConfig& profiling = config_.profiling();
    const double start_ms = timer_.now_ms();
    Run run{model, samples, profiling, start_ms, start_ms + profiling.time_budget_ms()};
    run.report.strategy = std::string(title);
    run.report.module = std::move(module_name);
    run.report.measurement.schedule = profiling.schedule();
    run.report.measurement.decision_rule = config_.decision().rule();
    run.report.measurement.stop_detail = "nothing was measured";
    run.baseline_tail_alpha = config_.decision().baseline_tail(1.0, candidates_.size());
    log_.info(0, fmt::format("{}: {} module '{}' over {} candidate(s)", title, action,
                             run.report.module, candidates_.size()));
    return run;
  }

  /// The baseline: made, prepared, its outputs kept as the reference. With performance
  /// validation on it waits for its measurement; otherwise it is freed.
  void pre_tune(Run& run) {
    const bool validate = config_.performance_validation();
    if (!validate && !config_.correctness_check()) return;
    if constexpr (!baseline_traits<B>::available) {
      log_.warn(1, "this backend type defines no baseline: performance validation and the "
                   "comparison of outputs are skipped");
    } else {
      std::optional<B> made;
      Name name{"baseline", ""};
      try {
        made.emplace(baseline_traits<B>::make(run.model));
        name = name_of(*made, "baseline");
      } catch (...) {
        name.failure = fmt::format("making the baseline threw: {}", failure_text());
      }
      CandidateReport& entry =
          run.report.baseline.emplace(CandidateReport{name.description, name.key});
      log_.info(1, fmt::format("baseline {}", entry.backend));
      tell(run, Progress{.stage = ProgressStage::preparing, .index = 0, .backend = entry.backend});
      const double start_ms = timer_.now_ms();
      const bool ready = name.failure ? fail(entry, PrepareStep::name, *name.failure)
                                      : prepare(run, *made, entry, /*is_baseline=*/true);
      entry.tuning_time_ms = timer_.now_ms() - start_ms;
      if (!ready) {
        run.reference_outputs.clear();
        warn_baseline_failed(entry);
      }
      if (ready && validate) {
        run.baseline.emplace(std::move(*made));
        run.baseline_waiting = true;
      } else if (made) {
        release(*made);
      }
    }
  }

  /// Candidate `index`: named, then (unless the tuning's budget is spent) prepared. A prepared
  /// candidate waits for its measurement; any other is freed.
  void prepare_candidate(Run& run, std::size_t index) {
    B candidate = take_candidate(index);
    const Name name = name_of(candidate, position_of(index));
    CandidateReport& entry =
        run.report.candidates.emplace_back(CandidateReport{name.description, name.key});
    log_.info(1, fmt::format("[{}/{}] {}", index + 1, candidates_.size(), entry.backend));
    tell(run,
         Progress{.stage = ProgressStage::preparing, .index = index + 1, .backend = entry.backend});
    const double start_ms = timer_.now_ms();
    bool ready = false;
    if (name.failure) {
      ready = fail(entry, PrepareStep::name, *name.failure);  // never built, never selected
    } else if (timer_.now_ms() > run.deadline_ms) {
      entry.status = CandidateStatus::skipped;
      entry.reason = "not tried: the tuning's time budget was spent";
    } else {
      ready = prepare(run, candidate, entry, /*is_baseline=*/false);
      if (ready && timer_.now_ms() - start_ms > run.profiling.candidate_time_budget_ms()) {
        ready = fail(entry, PrepareStep::budget,
                     fmt::format("over its time budget: building and checking it took {:.1f} s",
                                 (timer_.now_ms() - start_ms) / 1000.0));
      }
    }
    entry.tuning_time_ms = timer_.now_ms() - start_ms;
    if (ready) {
      run.waiting.push_back(Prepared{index, std::move(candidate), entry.tuning_time_ms});
    } else {
      log_.warn(2, fmt::format("{}: {}", to_label(entry.status), entry.reason));
      release(candidate);
    }
  }

  /// Builds `backend` and runs the samples through it: the baseline's outputs become the
  /// reference, a candidate's are checked against it. Returns whether it is ready to measure.
  /// The memory it took meanwhile goes on its row (StrategyConfig::enable_memory_watch).
  bool prepare(Run& run, B& backend, CandidateReport& entry, bool is_baseline) {
    if (!config_.memory_watch()) return build_and_check(run, backend, entry, is_baseline);
    const MemoryWatch<B> watch(run.model, config_.peak_reset());
    const bool ready = build_and_check(run, backend, entry, is_baseline);
    if (MemoryUse use = watch.finish(); !use.empty()) entry.memory = use;
    return ready;
  }

  bool build_and_check(Run& run, B& backend, CandidateReport& entry, bool is_baseline) {
    PrepareStep step = PrepareStep::build;
    // The sample running when a step threw. A plain index with a sentinel, not an optional:
    // GCC 12 at -O1 takes an optional's payload here for "maybe uninitialized".
    std::size_t at_sample = no_sample;
    try {
      backend.build(run.model, run.samples);
      if (is_baseline) {
        // The budget counts from here: the baseline's build is the model's cost, not the
        // tuning's (its row shows the time).
        run.deadline_ms = timer_.now_ms() + run.profiling.time_budget_ms();
        step = PrepareStep::run_samples;
        if (config_.correctness_check()) {
          const double pass_start_ms = timer_.now_ms();
          for (at_sample = 0; at_sample < run.checked_samples; ++at_sample) {
            stop_if_cancelled_during(run, entry);
            const double call_start_ms = timer_.now_ms();
            run.reference_outputs.push_back(backend.infer(run.samples[at_sample]));
            bound_reference_pass(run, at_sample + 1, timer_.now_ms() - pass_start_ms,
                                 timer_.now_ms() - call_start_ms);
          }
          at_sample = no_sample;
          after_calls<B>::run(backend);
          if (run.checked_samples < run.samples.size()) note_bounded_pass(run, entry);
          note_reference_warnings(run, entry);
        }
      } else if (config_.correctness_check()) {
        step = PrepareStep::check;
        OutputCheck verdict = check_outputs(backend, run, entry, at_sample);
        after_calls<B>::run(backend);
        entry.precision = verdict.precision;
        entry.reduced_precision = verdict.reduced_precision;
        entry.accuracy = std::move(verdict.accuracy);
        if (!verdict.passed) return fail(entry, step, std::move(verdict.reason));
      }
    } catch (const CancelledError&) {
      detail::end_calls_after_failure([&] { after_calls<B>::run(backend); });
      throw;  // with the report so far (stop_if_cancelled_during)
    } catch (...) {
      std::string cause = failure_text();
      detail::end_calls_after_failure([&] { after_calls<B>::run(backend); });
      if (at_sample != no_sample && run.samples.size() > 1) {
        cause = fmt::format("sample {} of {}: {}", at_sample, run.samples.size(), cause);
      }
      // The baseline's reasons name their step; a candidate's failed build is its cause alone.
      const bool named = is_baseline || step != PrepareStep::build;
      return fail(entry, step, named ? fmt::format("{}: {}", to_string(step), cause) : cause);
    }
    return true;
  }

  /// After `done` samples of the baseline's reference pass (`spent_ms` so far, the last call
  /// `last_call_ms`): outputs are checked only on the samples that fit half the tuning's time
  /// budget at the last call's pace (at least those done), so that the other half is left for
  /// the candidates' builds, checks and the measurement.
  void bound_reference_pass(Run& run, std::size_t done, double spent_ms, double last_call_ms) {
    const double half_budget_ms = run.profiling.time_budget_ms() / 2.0;
    if (done >= run.checked_samples || !std::isfinite(half_budget_ms)) return;
    const double room_ms = std::max(0.0, half_budget_ms - spent_ms);
    const double more = last_call_ms > 0.0 ? std::floor(room_ms / last_call_ms)
                                           : std::numeric_limits<double>::infinity();
    if (more < static_cast<double>(run.checked_samples - done)) {
      run.checked_samples = done + static_cast<std::size_t>(more);
    }
  }

  /// The warning, the baseline's note and the report's checked_samples of a bounded pass.
  void note_bounded_pass(Run& run, CandidateReport& baseline) {
    run.report.checked_samples = run.checked_samples;
    baseline.note = fmt::format(
        "outputs checked on the first {} of {} samples: the baseline's pass over all of them "
        "would not fit half the {:.1f} s time budget",
        run.checked_samples, run.samples.size(), run.profiling.time_budget_ms() / 1000.0);
    log_.warn(1, baseline.note);
  }

  /// Ends the tuning between two samples of `entry`'s preparation once a stop was requested:
  /// its row says so, in the report the CancelledError carries.
  void stop_if_cancelled_during(Run& run, CandidateReport& entry) {
    if (!config_.stop_token().stop_requested()) return;
    entry.status = CandidateStatus::skipped;
    entry.reason = "not finished: the tuning was cancelled while it was prepared";
    stop_if_cancelled(run);
  }

  /// A reference the check cannot fully use (NaN, Inf) is a warning on the baseline's row: a
  /// candidate is then checked only where the baseline's outputs are usable.
  void note_reference_warnings(const Run& run, CandidateReport& baseline) {
    for (std::size_t i = 0; i < run.reference_outputs.size(); ++i) {
      const std::string warning = output_checker<B>::reference_warning(run.reference_outputs[i]);
      if (warning.empty()) continue;
      const std::string note = run.samples.size() > 1 ? fmt::format("sample {} of {}: {}", i,
                                                                    run.samples.size(), warning)
                                                      : warning;
      baseline.note = baseline.note.empty() ? note : fmt::format("{}; {}", baseline.note, note);
      log_.warn(2, note);
      return;  // the first is enough to say the check is weakened
    }
  }

  /// Every sample through `candidate`, each output compared with the reference. The verdict's
  /// accuracy is, per output, the worst over the samples. `at_sample` follows the sample being
  /// run, for the reason when a call throws.
  OutputCheck check_outputs(B& candidate, Run& run, CandidateReport& entry,
                            std::size_t& at_sample) {
    OutputCheck merged;
    for (std::size_t i = 0; i < run.checked_samples; ++i) {
      stop_if_cancelled_during(run, entry);
      at_sample = i;
      const output_type actual = candidate.infer(run.samples[i]);
      const output_type* reference =
          run.reference_outputs.empty() ? nullptr : &run.reference_outputs[i];
      OutputCheck verdict = output_checker<B>::check(candidate, reference, actual);
      merged.precision = verdict.precision;
      merged.reduced_precision = verdict.reduced_precision;
      for (OutputAccuracy& output : verdict.accuracy) {
        const auto same = std::find_if(
            merged.accuracy.begin(), merged.accuracy.end(),
            [&](const OutputAccuracy& known) { return known.output == output.output; });
        if (same == merged.accuracy.end()) {
          merged.accuracy.push_back(std::move(output));
        } else {
          same->worst_error_ratio = std::max(same->worst_error_ratio, output.worst_error_ratio);
        }
      }
      if (!verdict.passed) {
        merged.passed = false;
        merged.reason = run.samples.size() > 1 ? fmt::format("sample {} of {}: {}", i,
                                                             run.samples.size(), verdict.reason)
                                               : std::move(verdict.reason);
        return merged;
      }
    }
    return merged;
  }

  /// Ends the tuning, with its report so far, once a stop was requested.
  void stop_if_cancelled(Run& run) {
    if (!config_.stop_token().stop_requested()) return;
    run.report.measurement.calls = calls_made(run.report);
    run.report.decision = "the tuning was cancelled";
    run.report.tuning_time_ms = timer_.now_ms() - run.start_ms;
    throw CancelledError(fmt::format("module '{}': the tuning was cancelled", run.report.module),
                         std::make_shared<const TuneReport>(run.report));
  }

  /// The schedule decides when to measure: the sequential one right after each prepare.
  [[nodiscard]] bool measures_as_it_goes() const noexcept {
    return config_.profiling().schedule() == Schedule::sequential;
  }

  /// Measures whatever is prepared and waiting (the baseline first), then settles each lane.
  void measure(Run& run) {
    std::vector<detail::Entrant> entrants;
    if (run.baseline_waiting) {
      entrants.push_back(entrant(run, *run.baseline, run.report.baseline->backend, true,
                                 std::numeric_limits<double>::infinity()));
    }
    for (Prepared& prepared : run.waiting) {
      entrants.push_back(entrant(run, prepared.backend,
                                 run.report.candidates[prepared.index].backend, false,
                                 run.profiling.candidate_time_budget_ms() - prepared.spent_ms));
    }
    if (entrants.empty()) return;
    if (entrants.size() > 1) {
      log_.info(1, fmt::format("measuring {} backend(s) together", entrants.size()));
    }
    detail::Measurement measured;
    try {
      measured = detail::measure_backends(
          entrants, run.profiling, config_.decision(), timer_, log_, run.deadline_ms,
          candidates_.size(),
          [&](std::size_t rounds, std::optional<std::size_t> leader, std::optional<double> ratio) {
            run.rounds_so_far = rounds;
            std::string name = leader ? entrants[*leader].name : std::string();
            // A new leader at once; otherwise a heartbeat about twice a second.
            if (name != run.leader || timer_.now_ms() - run.last_progress_ms >= 500.0) {
              run.leader = std::move(name);
              run.leader_ratio = ratio;
              tell(run, Progress{.stage = ProgressStage::measuring});
            }
          });
    } catch (const CancelledError&) {
      stop_if_cancelled(run);
      throw;
    } catch (...) {
      // The measurement itself failed (not one backend): every entrant is unmeasured.
      const std::string cause = fmt::format("the measurement failed: {}", failure_text());
      log_.warn(1, cause);
      measured.lanes.assign(entrants.size(), detail::Lane{});
      for (detail::Lane& lane : measured.lanes)
        lane.failure = cause;
    }
    summarize(run, measured);
    if (measured.switch_verdict) {
      // The race names entrants: the baseline comes first when it was measured, then the
      // waiting candidates in order.
      run.switch_judged_by_looks = true;
      const std::size_t first_candidate = run.baseline_waiting ? 1 : 0;
      for (std::size_t entrant = first_candidate; entrant - first_candidate < run.waiting.size();
           ++entrant) {
        if (measured.switch_verdict->may_displace(entrant)) {
          run.switch_by_looks.push_back(run.waiting[entrant - first_candidate].index);
        }
      }
    }

    std::size_t lane = 0;
    if (run.baseline_waiting) {
      run.baseline_waiting = false;
      settle_baseline(run, measured.lanes[lane++]);
    }
    for (Prepared& prepared : run.waiting)
      settle_candidate(run, prepared, measured.lanes[lane++]);
    run.waiting.clear();
  }

  detail::Entrant entrant(Run& run, B& backend, std::string name, bool is_baseline,
                          double budget_ms) {
    return detail::Entrant{
        std::move(name), is_baseline,
        [this, &backend, &run, samples = run.samples](std::size_t call) {
          // A cancelled tuning ends the measurement at the next call.
          if (config_.stop_token().stop_requested()) throw CancelledError("cancelled");
          ++run.calls_so_far;  // progress is told between rounds, never inside a call
          const std::size_t index = call % samples.size();
          try {
            (void)backend.infer(samples[index]);
          } catch (...) {  // the measurement reports it in one line, with the sample
            throw Error(samples.size() > 1 ? fmt::format("sample {} of {}: {}", index,
                                                         samples.size(), failure_text())
                                           : failure_text());
          }
        },
        [&backend] { after_calls<B>::run(backend); }, budget_ms};
  }

  /// The measurement's verdict: its level for comparisons with the baseline, and the report's
  /// account of it (the sequential schedule adds up its one-backend measurements).
  void summarize(Run& run, const detail::Measurement& measured) {
    run.baseline_tail_alpha = measured.baseline_tail_alpha;
    MeasurementReport& report = run.report.measurement;
    report.rounds += measured.rounds;
    report.looks += measured.looks;
    report.stop_reason = measured.stop_reason;
    report.stop_detail = measured.stop_detail;
    if (run.profiling.schedule() == Schedule::interleaved)
      report.confidence = decider(run).confidence();
  }

  void settle_baseline(Run& run, detail::Lane& lane) {
    CandidateReport& entry = *run.report.baseline;
    entry.calls = lane.calls;
    entry.tuning_time_ms += lane.time_ms;
    std::optional<Result> measured = result_of(lane);
    if (!measured) {
      entry.status = CandidateStatus::measure_failed;
      entry.reason = fmt::format("measure: {}", lane.failure.value_or("not measured"));
      warn_baseline_failed(entry);
      release(*run.baseline);
      run.baseline.reset();
      return;
    }
    baseline_result_ = std::move(measured);
    entry.latency = baseline_result_->stats;
    entry.host_latency = host_latency_of(*baseline_result_);
    entry.samples_ms = baseline_result_->samples_ms;
    entry.speedup = 1.0;
    log_.info(2, fmt::format("baseline {}: {} {}", entry.backend, metric_label,
                             format_metric(baseline_result_->metric())));
    // Measured alone, it is freed until it is selected (activate() brings it back).
    if (measures_as_it_goes()) release(*run.baseline);
  }

  void settle_candidate(Run& run, Prepared& prepared, detail::Lane& lane) {
    CandidateReport& entry = run.report.candidates[prepared.index];
    entry.calls = lane.calls;
    entry.tuning_time_ms = prepared.spent_ms + lane.time_ms;
    std::optional<Result> outcome = result_of(lane);
    if (!outcome) {
      // Failed while measured, or never measured at all because the race ended first.
      entry.status = lane.failure ? CandidateStatus::measure_failed : CandidateStatus::skipped;
      entry.reason = lane.failure.value_or("not measured: the race ended first");
      log_.warn(2, fmt::format("{}: {}", to_label(entry.status), entry.reason));
      release(prepared.backend);
      return;
    }
    record_result(run, prepared.index, *outcome);
    if (lane.dropped) {
      entry.note =
          fmt::format("left the race after {} rounds: {}", lane.rounds.count(), lane.drop_reason);
      release(prepared.backend);
      return;
    }
    compete(run, prepared.index, std::move(prepared.backend), std::move(*outcome));
  }

  /// A lane's result; none when it failed, measured nothing, or its times make no statistics
  /// (then the lane's failure says why).
  static std::optional<Result> result_of(detail::Lane& lane) {
    if (lane.failure || lane.kept_calls_ms.empty()) return std::nullopt;
    try {
      const LatencyStats stats = LatencyStats::from_samples(lane.kept_calls_ms);
      Result result(stats.median, stats);
      result.samples_ms = lane.kept_calls_ms;
      result.host_samples_ms = lane.kept_host_ms;
      result.rounds = lane.rounds;
      result.calls = lane.calls;
      return result;
    } catch (...) {
      lane.failure = detail::current_exception_message();
      return std::nullopt;
    }
  }

  /// Fills a measured candidate's report row and its perf-validation entry.
  void record_result(Run& run, std::size_t index, const Result& result) {
    CandidateReport& entry = run.report.candidates[index];
    entry.latency = result.stats;
    entry.host_latency = host_latency_of(result);
    entry.samples_ms = result.samples_ms;
    if (baseline_result_) {
      const double metric = result.metric();
      const double baseline_metric = baseline_result_->metric();
      if (metric > 0.0 && baseline_metric > 0.0) {
        entry.vs_baseline = decider(run).ratio_to_baseline(result, *baseline_result_);
        // With paired rounds the speedup is the paired ratio's inverse, so the table's two
        // columns never disagree; measured apart, it is the ratio of the medians.
        const double gain = entry.vs_baseline && entry.vs_baseline->ratio > 0.0
                                ? 1.0 / entry.vs_baseline->ratio
                                : speedup(result, *baseline_result_);
        entry.speedup = gain;
        perf_validation_results_.push_back(
            PerfValidationResult{entry.backend, metric, baseline_metric, gain, gain >= 1.0});
      }
    }
    log_.info(2, fmt::format("{}: {} {}{}", entry.backend, metric_label,
                             format_metric(result.metric()),
                             entry.speedup
                                 ? fmt::format(" ({} vs baseline)", format_speedup(*entry.speedup))
                                 : std::string()));
  }

  /// Keeps the better of `candidate` and the best so far; frees the other.
  void compete(Run& run, std::size_t index, B candidate, Result result) {
    if (!run.best || decider(run).is_better(result, run.best->result)) {
      if (run.best) release(run.best->backend);
      run.best.emplace(Best{index, std::move(candidate), std::move(result)});
    } else {
      release(candidate);
    }
  }

  /// Hands back the best candidate if it displaces the baseline, else the baseline; when the
  /// one to hand back cannot be activated, the other. Throws when neither is usable.
  TuneResult<B> resolve(Run& run) {
    const bool baseline_usable = run.baseline && baseline_result_;
    std::optional<SwitchVerdict> verdict;
    if (run.best && baseline_result_) {
      std::optional<bool> by_looks;
      if (run.switch_judged_by_looks) {
        by_looks =
            std::ranges::find(run.switch_by_looks, run.best->index) != run.switch_by_looks.end();
      }
      verdict = decider(run).verdict(run.best->result, *baseline_result_,
                                     descriptions_[run.best->index], by_looks);
    }
    if (run.best && baseline_usable && !verdict->displaces) {
      release(run.best->backend);
      const std::string& why = verdict->why;
      if (try_activate(*run.baseline, *run.report.baseline)) return hand_back_baseline(run, why);
      run.baseline.reset();
      if (try_activate(run.best->backend, run.report.candidates[run.best->index])) {
        return hand_back_best(run, "the baseline could not be activated again; " + why);
      }
      run.best.reset();
    } else if (run.best) {
      if (run.baseline) release(*run.baseline);
      CandidateReport& winner = run.report.candidates[run.best->index];
      std::string why = "the best candidate (performance validation is off or the baseline "
                        "could not be measured)";
      if (verdict) {
        why = verdict->displaces ? verdict->why
                                 : "the baseline cannot be handed back; " + verdict->why;
      }
      if (try_activate(run.best->backend, winner))
        return hand_back_best(run, why + precision_note(winner));
      run.best.reset();
      if (baseline_usable && try_activate(*run.baseline, *run.report.baseline)) {
        return hand_back_baseline(run, "the selected candidate could not be activated");
      }
    } else if (baseline_usable) {
      const bool all_failed = run.report.every_candidate_failed();
      if (try_activate(*run.baseline, *run.report.baseline)) {
        return hand_back_baseline(run, all_failed ? "every candidate failed (see their reasons)"
                                                  : "no candidate could be measured");
      }
    }

    std::string considered;
    for (const auto& candidate : run.report.candidates) {
      considered += fmt::format("\n  - {}: {}: {}", candidate.backend, to_label(candidate.status),
                                candidate.reason);
    }
    run.report.decision = "no correct backend was found";
    throw NoCorrectBackendError(
        fmt::format(
            "module '{}': no correct backend was found among the {} candidate(s) considered{}{}",
            run.report.module, run.report.candidates.size(), considered,
            config_.performance_validation() ? "\n  (the baseline was not usable either)" : ""),
        std::make_shared<const TuneReport>(run.report));
  }

  /// `winner` is the selected candidate's result (null when the baseline was selected).
  void post_tune(const TuneReport& report, const Result* winner) {
    if (report.baseline_selected) {
      log_.info(0, fmt::format("{}: Baseline was selected: {} at {} ({})", report.module,
                               report.selected, format_metric(baseline_result_->metric()),
                               report.decision));
      return;
    }
    const CandidateReport* selected = report.selected_candidate();
    if (baseline_result_ && report.baseline) {
      log_.info(
          0, fmt::format("{}: selected {} at {}, {} faster than the baseline {} at {}",
                         report.module, report.selected, format_metric(winner->metric()),
                         selected->speedup ? format_speedup(*selected->speedup) : std::string("-"),
                         report.baseline->backend, format_metric(baseline_result_->metric())));
    } else {
      log_.info(0, fmt::format("{}: selected {} at {} (no baseline latency to compare with)",
                               report.module, report.selected, format_metric(winner->metric())));
    }
  }

  // ---- helpers of the steps ------------------------------------------------------------------

  /// Tells the progress callback, if any, how the tuning stands. Its failure is a warning, and
  /// it is not called again: showing progress must not end a tuning.
  void tell(Run& run, Progress progress) {
    if (!config_.progress() || progress_failed_) return;
    progress.total = candidates_.size();
    progress.elapsed_ms = timer_.now_ms() - run.start_ms;
    progress.budget_ms = run.profiling.time_budget_ms();
    progress.rounds = run.rounds_so_far;
    progress.calls = run.calls_so_far;
    if (progress.stage != ProgressStage::preparing && !run.leader.empty()) {
      progress.leader = run.leader;  // the race's leader at its last look, or the selected
      progress.leader_ratio = run.leader_ratio;
    } else if (run.best) {  // the best measured so far
      progress.leader = run.report.candidates[run.best->index].backend;
    }
    run.last_progress_ms = timer_.now_ms();
    try {
      config_.progress()(progress);
    } catch (...) {
      progress_failed_ = true;
      log_.warn(1, fmt::format("the progress callback threw ({}); it is not called again",
                               failure_text()));
    }
  }

  void warn_baseline_failed(const CandidateReport& entry) const {
    log_.warn(1, fmt::format("baseline {} failed ({}); the performance check is skipped and "
                             "tuning goes on with the candidates",
                             entry.backend, entry.reason));
  }

  /// When the winner computes in a lower precision than the baseline, the decision says so, and
  /// how far that moved the outputs.
  static std::string precision_note(const CandidateReport& winner) {
    if (!winner.reduced_precision) return "";
    const OutputAccuracy* worst = worst_accuracy(winner);
    return fmt::format(
        "; it computes in {}{}", winner.precision,
        worst
            ? fmt::format(", which moved the outputs by at most {} % of the tolerance (worst: {})",
                          format_fixed(worst->worst_error_ratio * 100.0, 0), worst->output)
            : std::string());
  }

  /// The exception being handled as one line (error_summary<B>); with full errors on, its whole
  /// text is logged too.
  std::string failure_text() const {
    return detail::current_exception_message([this](const std::exception& error) {
      std::string line = error_summary<B>::of(error);
      if (config_.full_errors() && line != error.what()) {
        log_.info(3, fmt::format("the full error: {}", error.what()));
      }
      return line;
    });
  }

  [[nodiscard]] LatencyDecider decider(const Run& run) const {
    return LatencyDecider(config_.decision(), run.baseline_tail_alpha);
  }

  static std::string position_of(std::size_t index) {
    return fmt::format("candidate #{}", index + 1);
  }

  Name name_of(const B& backend, const std::string& position) const {
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
    return name;
  }

  /// Records a failed step on `entry`; returns false (not ready) for the caller to pass on.
  static bool fail(CandidateReport& entry, PrepareStep step, std::string reason) {
    switch (step) {
      case PrepareStep::name:
      case PrepareStep::build: entry.status = CandidateStatus::build_failed; break;
      case PrepareStep::check: entry.status = CandidateStatus::incorrect; break;
      case PrepareStep::run_samples:
      case PrepareStep::budget: entry.status = CandidateStatus::measure_failed; break;
    }
    entry.reason = std::move(reason);
    return false;
  }

  B take_candidate(std::size_t index) {
    if constexpr (std::copy_constructible<B>) {
      return B(candidates_[index]);  // the prototype stays unbuilt for the next tune()
    } else {
      return std::move(candidates_[index]);
    }
  }

  /// The host clock's statistics, when the result has host times beside device times.
  static std::optional<LatencyStats> host_latency_of(const Result& result) {
    if (result.host_samples_ms.empty()) return std::nullopt;
    return LatencyStats::from_samples(result.host_samples_ms);
  }

  static std::size_t calls_made(const TuneReport& report) {
    std::size_t calls = report.baseline ? report.baseline->calls : 0;
    for (const auto& candidate : report.candidates)
      calls += candidate.calls;
    return calls;
  }

  /// Releases a backend that will not be handed back (deactivate()). Its failure must not end the
  /// tuning, but it is reported. (BackendLifecycle leaves a backend whose deactivate() threw
  /// inactive, so it is never deactivated twice.)
  void release(B& backend) {
    if (backend.state() == BackendState::created) return;
    try {
      backend.deactivate();
    } catch (...) {
      const std::string cause = failure_text();
      std::string name = "a backend";
      try {
        name = backend.describe();
      } catch (...) {
      }
      log_.warn(2, fmt::format("{}: deactivate failed: {}", name, cause));
    }
  }

  /// Activates the backend that is to be handed back. Its activate() is user code: when it
  /// throws, the entry says why and the caller falls back to the other choice.
  bool try_activate(B& backend, CandidateReport& entry) {
    try {
      backend.activate();
      return true;
    } catch (...) {
      entry.status = CandidateStatus::activate_failed;
      entry.reason = fmt::format("activate() threw when it was to be selected: {}", failure_text());
      log_.warn(1, fmt::format("{}: {}", entry.backend, entry.reason));
      release(backend);
      return false;
    }
  }

  [[noreturn]] void refuse_reuse(const Run& run, const TuneReport& earlier, std::string_view why) {
    log_.warn(1, fmt::format("{}: {}", earlier.selected, why));
    throw NoCorrectBackendError(
        fmt::format("module '{}': the earlier choice {} cannot be reused: {}", earlier.module,
                    earlier.selected, why),
        std::make_shared<const TuneReport>(run.report));
  }

  TuneResult<B> reused(const Run& run, B backend, TuneReport earlier) {
    earlier.cache_hit = CacheHit{"", "", timer_.now_ms() - run.start_ms};
    log_.info(0, fmt::format("{}: reused {}{}, checked in {:.1f} s", earlier.module,
                             earlier.selected, earlier.baseline_selected ? " (the baseline)" : "",
                             earlier.cache_hit->check_time_ms / 1000.0));
    return TuneResult<B>{std::move(backend), std::move(earlier)};
  }

  /// Names a machine busy with other work in the report and at the end of `why`
  /// (detail/strategy/busy_machine.hpp); `kept`: the baseline is handed back.
  void note_busy_machine(Run& run, std::string& why, bool kept) {
    if (!run.report.baseline) return;
    const CandidateReport* best = run.best ? &run.report.candidates[run.best->index] : nullptr;
    MeasurementReport& measurement = run.report.measurement;
    measurement.busy = judge_busy_machine(measurement, *run.report.baseline, best, kept);
    if (measurement.busy) why += "; " + measurement.busy->text;
  }

  TuneResult<B> hand_back_baseline(Run& run, std::string why) {
    note_busy_machine(run, why, true);
    run.report.baseline->selected = true;
    run.report.baseline_selected = true;
    run.report.selected = run.report.baseline->backend;
    run.report.selected_key = run.report.baseline->key;
    run.report.decision = std::move(why);
    return TuneResult<B>{std::move(*run.baseline), std::move(run.report)};
  }

  TuneResult<B> hand_back_best(Run& run, std::string why) {
    note_busy_machine(run, why, false);
    CandidateReport& winner = run.report.candidates[run.best->index];
    winner.selected = true;
    run.report.selected = winner.backend;
    run.report.selected_key = winner.key;
    run.report.decision = std::move(why);
    return TuneResult<B>{std::move(run.best->backend), std::move(run.report)};
  }

  std::vector<B> candidates_;
  std::vector<std::string> descriptions_;
  StrategyConfig config_;
  T timer_;
  Logger log_;
  bool consumed_ = false;
  bool progress_failed_ = false;
  std::optional<Result> baseline_result_;
  std::vector<PerfValidationResult> perf_validation_results_;
  std::vector<output_type> reference_outputs_;
  bool keep_reference_outputs_ = false;
};

}  // namespace aitune
