// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The profiling strategy flow shared by every strategy that ranks backends by a measured
/// metric (aitune's ProfilingTuneStrategy):
///
///   pre_tune   build the baseline; keep its outputs as the reference for the correctness
///              check; with performance validation on, profile it (sequential schedule) or
///              enter it in the race (interleaved schedule);
///   per candidate: build -> correctness check -> (sequential) measure and keep the best by
///              is_better; a failure at any step is recorded with its reason, the candidate is
///              deactivated, and the tuning goes on;
///   (interleaved) measure the baseline and every built candidate together, then keep the
///              best by is_better in list order; deactivate the others;
///   resolve    the best candidate if it displaces the baseline (displaces_baseline), else the
///              baseline when validation is on; activate the winner;
///   post_tune  write the summary lines.
///
/// `Derived` supplies the metric: `measure(backend, samples, config, timer, budget_ms)`
/// (sequential), `race(entrants, lanes, report)` and `result_from_lane(lane)` (interleaved),
/// `is_better(a, b)`, `displaces_baseline(result, baseline)`, `speedup(result, baseline)`,
/// `compare_with_baseline(result, baseline)`, `adjust_profiling_config(config)`,
/// `format_metric(value)` and the constants `title`, `metric_label` and `metric_unit`.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/latency_race.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report.hpp"
#include "aitune/core/results.hpp"
#include "aitune/core/strategy_config.hpp"
#include "aitune/core/timer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <limits>
#include <optional>
#include <span>
#include <string>
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

template <class Derived, Backend B, ProfilingResult Result, Timer T>
class ProfilingTuneStrategy {
 public:
  using backend_type = B;
  using model_type = typename B::model_type;
  using sample_type = typename B::sample_type;
  using output_type = typename B::output_type;
  using result_type = Result;
  using timer_type = T;

  /// Tunes `model` on the batch-size-1 `samples`. Throws NoCorrectBackendError when no backend
  /// can be selected, ConfigError for no samples.
  [[nodiscard]] TuneResult<B> tune(const model_type& model, std::span<const sample_type> samples,
                                   std::string module_name = "model") {
    if (samples.empty()) throw ConfigError("tune needs at least one batch-size-1 sample");
    if (consumed_) {
      throw Error(
          "the candidates of this strategy were consumed by an earlier tune() (the backend type "
          "is not copyable); construct a new strategy to tune again");
    }
    const ProfilingConfig profiling = profiling_config();
    // A timer may depend on the model (LibTorch's DeviceTimer uses CUDA events on a GPU).
    if constexpr (requires { timer_.prepare(model); }) timer_.prepare(model);
    const double start_ms = timer_.now_ms();
    Run run{model, samples, profiling, start_ms + profiling.time_budget_ms(), {}, {}, {}, {}, {}};
    run.report.strategy = std::string(Derived::title);
    run.report.module = std::move(module_name);
    run.report.measurement.schedule = std::string(to_string(profiling.schedule()));
    run.report.measurement.decision_rule = std::string(to_string(config_.decision_rule()));

    // Move-only candidates are taken from here on: even a tuning that throws has used them up.
    if constexpr (!std::copy_constructible<B>) consumed_ = true;
    pre_tune(run);
    for (std::size_t index = 0; index < candidates_.size(); ++index) {
      prepare_candidate(run, index);
    }
    if (profiling.schedule() == Schedule::interleaved) measure_together(run);
    run.report.measurement.calls = calls_made(run.report);
    TuneResult<B> result = resolve(run);
    result.report.tuning_time_ms = timer_.now_ms() - start_ms;
    post_tune(result.report, result.report.baseline_selected ? nullptr : &run.best->result);
    return result;
  }

  /// One entry per successfully profiled candidate, compared with the baseline (never the
  /// baseline itself). Empty when the baseline was not profiled.
  [[nodiscard]] const std::vector<PerfValidationResult>& perf_validation_results() const noexcept {
    return perf_validation_results_;
  }
  /// The baseline's result of the last tune(), if it was profiled.
  [[nodiscard]] const std::optional<Result>& baseline_result() const noexcept {
    return baseline_result_;
  }

  [[nodiscard]] const StrategyConfig& config() const noexcept { return config_; }
  [[nodiscard]] T& timer() noexcept { return timer_; }

  /// The profiling config the strategy really uses (the strategy may override settings).
  [[nodiscard]] ProfilingConfig profiling_config() const {
    return Derived::adjust_profiling_config(config_.profiling());
  }

  /// The descriptions of the candidates, in the order they are tried.
  [[nodiscard]] const std::vector<std::string>& candidate_descriptions() const noexcept {
    return descriptions_;
  }

  [[nodiscard]] std::string describe() const {
    const auto on_off = [](bool on) { return on ? "on" : "off"; };
    const ProfilingConfig profiling = profiling_config();
    std::string text = fmt::format("name: {}\n", Derived::title);
    text += fmt::format("metric: {} ({}), batch sizes: [{}]\n", Derived::metric_label,
                        Derived::metric_unit, fmt::join(profiling.batch_sizes(), ", "));
    text += fmt::format("performance validation: {}\n", on_off(config_.performance_validation()));
    text += fmt::format("correctness check: {}\n", on_off(config_.correctness_check()));
    text += fmt::format("decision rule: {}\n", to_string(config_.decision_rule()));
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

 protected:
  ProfilingTuneStrategy(std::vector<B> candidates, StrategyConfig config, T timer)
      : candidates_(std::move(candidates)), config_(std::move(config)), timer_(std::move(timer)),
        log_(config_.sink()) {
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      const CandidateName name = name_of(candidates_[i], fmt::format("candidate #{}", i + 1));
      if (candidates_[i].state() != BackendState::created) {
        throw ConfigError(fmt::format("candidate {} must be passed unbuilt, it is {}",
                                      name.description, to_string(candidates_[i].state())));
      }
      descriptions_.push_back(name.description);
    }
  }

  [[nodiscard]] const Logger& log() const noexcept { return log_; }

 private:
  struct Best {
    std::size_t index;
    B backend;
    Result result;
  };

  /// What the report calls a backend. Backends are user code: when `describe()` or `key()`
  /// throws, the backend is named by its position and `failure` says why (it is never built).
  struct CandidateName {
    std::string description;
    std::string key;
    std::optional<std::string> failure{};
  };

  static CandidateName name_of(const B& backend, const std::string& position) {
    CandidateName name;
    try {
      name.description = backend.describe();
    } catch (...) {
      name.description = position;
      name.failure = fmt::format("describe() threw: {}", detail::current_exception_message());
      return name;
    }
    try {
      name.key = backend.key();
    } catch (...) {
      name.failure = fmt::format("key() threw: {}", detail::current_exception_message());
    }
    return name;
  }

  /// A built, checked candidate waiting for the interleaved measurement.
  struct Contender {
    std::size_t index;
    B backend;
    double spent_ms;  ///< on its build and check
  };

  /// The state of one tune() call.
  struct Run {
    const model_type& model;
    std::span<const sample_type> samples;
    ProfilingConfig profiling;
    double deadline_ms;
    TuneReport report;
    std::optional<B> baseline;  ///< built and measured (or to be measured): the fallback
    std::vector<output_type> reference_outputs;
    std::vector<Contender> contenders;
    std::optional<Best> best;
  };

  Derived& self() { return static_cast<Derived&>(*this); }

  B take_candidate(std::size_t index) {
    if constexpr (std::copy_constructible<B>) {
      return B(candidates_[index]);  // the prototype stays unbuilt for the next tune()
    } else {
      return std::move(candidates_[index]);
    }
  }

  /// The host clock's statistics, when the result has host times beside device times.
  static std::optional<LatencyStats> host_latency_of(const Result& result) {
    if constexpr (requires { result.host_samples_ms; }) {
      if (!result.host_samples_ms.empty())
        return LatencyStats::from_samples(result.host_samples_ms);
    }
    return std::nullopt;
  }

  static std::size_t calls_made(const TuneReport& report) {
    std::size_t calls = report.baseline ? report.baseline->calls : 0;
    for (const auto& candidate : report.candidates)
      calls += candidate.calls;
    return calls;
  }

  /// Deactivation must not end the tuning, but its failure is reported. (BackendLifecycle
  /// leaves a backend whose deactivate() threw inactive, so it is never deactivated twice.)
  void deactivate_quietly(B& backend) {
    if (backend.state() == BackendState::created) return;
    try {
      backend.deactivate();
    } catch (...) {
      const std::string cause = detail::current_exception_message();
      std::string name = "a backend";
      try {
        name = backend.describe();
      } catch (...) {
      }
      log_.warn(2, fmt::format("{}: deactivate failed: {}", name, cause));
    }
  }

  void pre_tune(Run& run) {
    perf_validation_results_.clear();
    baseline_result_.reset();
    log_.info(0, fmt::format("{}: tuning module '{}' over {} candidate(s)", Derived::title,
                             run.report.module, candidates_.size()));
    const bool validate = config_.performance_validation();
    const bool check = config_.correctness_check();
    if (!validate && !check) return;
    if constexpr (!baseline_traits<B>::available) {
      log_.warn(1, "this backend type defines no baseline: performance validation and the "
                   "comparison of outputs are skipped");
    } else {
      std::optional<B> made;
      CandidateName name{"baseline", ""};
      try {
        made.emplace(baseline_traits<B>::make(run.model));
        name = name_of(*made, "baseline");
      } catch (...) {
        name.failure =
            fmt::format("making the baseline threw: {}", detail::current_exception_message());
      }
      CandidateReport entry{name.description, name.key};
      log_.info(1, fmt::format("baseline {}", entry.backend));
      if (name.failure) {
        entry.status = CandidateStatus::build_failed;
        entry.reason = *name.failure;
        log_.warn(1, fmt::format("baseline {} failed; the performance check is skipped and "
                                 "tuning goes on with the candidates ({})",
                                 entry.backend, entry.reason));
        run.report.baseline = std::move(entry);
        return;
      }
      B& baseline = *made;
      const double start_ms = timer_.now_ms();
      std::string_view step = "build";
      const bool measure_now = validate && run.profiling.schedule() == Schedule::sequential;
      try {
        baseline.build(run.model, run.samples);
        if (check) {
          step = "run the samples";
          for (const auto& sample : run.samples)
            run.reference_outputs.push_back(baseline.infer(sample));
        }
        if (measure_now) {
          step = "measure";
          baseline_result_ = self().measure(baseline, run.samples, run.profiling, timer_,
                                            remaining_ms(run, start_ms));
        }
      } catch (...) {
        entry.status =
            step == "build" ? CandidateStatus::build_failed : CandidateStatus::measure_failed;
        entry.reason = fmt::format("{}: {}", step, detail::current_exception_message());
        if (step == "run the samples") run.reference_outputs.clear();
        baseline_result_.reset();
        log_.warn(1, fmt::format("baseline {} failed to {}; the performance check is skipped "
                                 "and tuning goes on with the candidates ({})",
                                 entry.backend, step, entry.reason));
      }
      entry.tuning_time_ms = timer_.now_ms() - start_ms;
      if (baseline_result_) {
        entry.latency = baseline_result_->stats;
        entry.speedup = 1.0;
        entry.calls = baseline_result_->calls;
        log_.info(2, fmt::format("{}: {}", Derived::metric_label,
                                 Derived::format_metric(baseline_result_->metric())));
      }
      const bool keep = entry.status == CandidateStatus::ok && validate;
      // The interleaved race measures the baseline later, so it stays active until then;
      // otherwise it is freed now and activated again only if it is selected.
      if (!keep || measure_now) deactivate_quietly(baseline);
      if (keep) run.baseline.emplace(std::move(baseline));
      run.report.baseline = std::move(entry);
    }
  }

  /// What a step that started at `start_ms` may still spend: the candidate's own budget and
  /// the tuning's, whichever ends first.
  double remaining_ms(const Run& run, double start_ms) const {
    const double now = timer_.now_ms();
    return std::min(run.profiling.candidate_time_budget_ms() - (now - start_ms),
                    run.deadline_ms - now);
  }

  OutputCheck check_outputs(B& candidate, const Run& run) {
    for (std::size_t i = 0; i < run.samples.size(); ++i) {
      const output_type actual = candidate.infer(run.samples[i]);
      const output_type* reference =
          run.reference_outputs.empty() ? nullptr : &run.reference_outputs[i];
      OutputCheck verdict = output_checker<B>::check(candidate, reference, actual);
      if (!verdict.passed) {
        if (run.samples.size() > 1)
          verdict.reason = fmt::format("sample {}: {}", i, verdict.reason);
        return verdict;
      }
    }
    return OutputCheck::ok();
  }

  /// Build and check one candidate; with the sequential schedule, measure it and let it compete.
  void prepare_candidate(Run& run, std::size_t index) {
    B candidate = take_candidate(index);
    const CandidateName name = name_of(candidate, fmt::format("candidate #{}", index + 1));
    CandidateReport entry{name.description, name.key};
    log_.info(1, fmt::format("[{}/{}] {}", index + 1, candidates_.size(), entry.backend));
    const double start_ms = timer_.now_ms();
    const auto fail = [&](CandidateStatus status, std::string reason) {
      entry.status = status;
      entry.reason = std::move(reason);
    };

    if (name.failure) {
      fail(CandidateStatus::build_failed, *name.failure);  // never built, never selected
    } else if (timer_.now_ms() > run.deadline_ms) {
      fail(CandidateStatus::measure_failed, "not tried: the tuning's time budget was spent");
    } else {
      try {
        candidate.build(run.model, run.samples);
      } catch (...) {
        fail(CandidateStatus::build_failed, detail::current_exception_message());
      }
    }
    if (entry.status == CandidateStatus::ok && config_.correctness_check()) {
      try {
        OutputCheck verdict = check_outputs(candidate, run);
        if (!verdict.passed) fail(CandidateStatus::incorrect, std::move(verdict.reason));
      } catch (...) {
        fail(CandidateStatus::incorrect,
             fmt::format("correctness check: {}", detail::current_exception_message()));
      }
    }
    if (entry.status == CandidateStatus::ok &&
        timer_.now_ms() - start_ms > run.profiling.candidate_time_budget_ms()) {
      fail(CandidateStatus::measure_failed,
           fmt::format("over its time budget: building and checking it took {:.1f} s",
                       (timer_.now_ms() - start_ms) / 1000.0));
    }
    std::optional<Result> result;
    if (entry.status == CandidateStatus::ok && run.profiling.schedule() == Schedule::sequential) {
      try {
        result = self().measure(candidate, run.samples, run.profiling, timer_,
                                remaining_ms(run, start_ms));
      } catch (...) {
        fail(CandidateStatus::measure_failed, detail::current_exception_message());
      }
    }
    entry.tuning_time_ms = timer_.now_ms() - start_ms;
    const double spent_ms = entry.tuning_time_ms;
    const bool ok = entry.status == CandidateStatus::ok;
    if (!ok) log_.warn(2, fmt::format("{}: {}", to_string(entry.status), entry.reason));
    run.report.candidates.push_back(std::move(entry));
    if (!ok) {
      deactivate_quietly(candidate);
    } else if (result) {
      record_result(run, index, *result);
      compete(run, index, std::move(candidate), std::move(*result));
    } else {
      run.contenders.push_back(Contender{index, std::move(candidate), spent_ms});
    }
  }

  /// The interleaved schedule: the baseline and every built candidate, measured together.
  void measure_together(Run& run) {
    std::vector<RaceEntrant> entrants;
    std::vector<B*> backends;
    const auto enter = [&](B& backend, std::string name, bool is_baseline, double budget_ms) {
      backends.push_back(&backend);
      entrants.push_back(RaceEntrant{std::move(name), is_baseline,
                                     [&backend, &run](std::size_t call) {
                                       (void)backend.infer(run.samples[call % run.samples.size()]);
                                     },
                                     budget_ms});
    };
    if (run.baseline) {
      enter(*run.baseline, run.report.baseline->backend, true,
            std::numeric_limits<double>::infinity());
    }
    for (auto& contender : run.contenders) {
      enter(contender.backend, run.report.candidates[contender.index].backend, false,
            run.profiling.candidate_time_budget_ms() - contender.spent_ms);
    }
    if (entrants.empty()) return;
    log_.info(1, fmt::format("measuring {} backend(s) together", entrants.size()));
    std::vector<RaceLane> lanes;
    try {
      self().race(entrants, lanes, run.deadline_ms, run.report.measurement);
    } catch (...) {
      // The race itself failed (not one backend): every entrant is unmeasured, with the cause.
      const std::string cause =
          fmt::format("the measurement failed: {}", detail::current_exception_message());
      log_.warn(1, cause);
      lanes.assign(entrants.size(), RaceLane{});
      for (auto& lane : lanes)
        lane.failure = cause;
    }

    std::size_t lane = 0;
    if (run.baseline) {
      CandidateReport& entry = *run.report.baseline;
      entry.calls = lanes[lane].calls;
      std::optional<Result> measured = result_of(lanes[lane]);
      if (!measured) {
        entry.status = CandidateStatus::measure_failed;
        entry.reason = lanes[lane].failure.value_or("not measured");
        log_.warn(1, fmt::format("baseline {} failed to measure; the performance check is "
                                 "skipped and tuning goes on with the candidates ({})",
                                 entry.backend, entry.reason));
        deactivate_quietly(*run.baseline);
        run.baseline.reset();
      } else {
        baseline_result_ = std::move(measured);
        entry.latency = baseline_result_->stats;
        entry.host_latency = host_latency_of(*baseline_result_);
        entry.speedup = 1.0;
      }
      ++lane;
    }
    for (auto& contender : run.contenders) {
      RaceLane& measured = lanes[lane++];
      CandidateReport& entry = run.report.candidates[contender.index];
      entry.calls = measured.calls;
      entry.tuning_time_ms = contender.spent_ms + measured.time_ms;
      std::optional<Result> outcome = result_of(measured);
      if (!outcome) {
        entry.status = CandidateStatus::measure_failed;
        entry.reason = measured.failure.value_or("not measured: the race ended first");
        deactivate_quietly(contender.backend);
        continue;
      }
      Result result = std::move(*outcome);
      record_result(run, contender.index, result);
      if (measured.dropped) {
        entry.note = fmt::format("left the race after {} rounds: {}", measured.rounds.count(),
                                 measured.drop_reason);
        deactivate_quietly(contender.backend);
        continue;
      }
      compete(run, contender.index, std::move(contender.backend), std::move(result));
    }
    run.contenders.clear();
  }

  /// A lane's result; none when it failed, measured nothing, or its times make no statistics
  /// (then the lane's failure says why).
  std::optional<Result> result_of(RaceLane& lane) {
    if (lane.failure || lane.kept_calls_ms.empty()) return std::nullopt;
    try {
      return self().result_from_lane(lane);
    } catch (...) {
      lane.failure = detail::current_exception_message();
      return std::nullopt;
    }
  }

  /// Keeps the better of `candidate` and the best so far; deactivates the other.
  void compete(Run& run, std::size_t index, B candidate, Result result) {
    if (!run.best || self().is_better(result, run.best->result)) {
      if (run.best) deactivate_quietly(run.best->backend);
      run.best.emplace(Best{index, std::move(candidate), std::move(result)});
    } else {
      deactivate_quietly(candidate);
    }
  }

  /// Fills a measured candidate's report entry and its perf-validation entry.
  void record_result(Run& run, std::size_t index, const Result& result) {
    CandidateReport& entry = run.report.candidates[index];
    entry.latency = result.stats;
    entry.host_latency = host_latency_of(result);
    if (entry.calls == 0) entry.calls = result.calls;
    if (baseline_result_) {
      const double metric = result.metric();
      const double baseline_metric = baseline_result_->metric();
      if (metric > 0.0 && baseline_metric > 0.0) {
        const double speedup = Derived::speedup(result, *baseline_result_);
        entry.speedup = speedup;
        entry.vs_baseline = self().compare_with_baseline(result, *baseline_result_);
        perf_validation_results_.push_back(
            PerfValidationResult{entry.backend, metric, baseline_metric, speedup, speedup >= 1.0});
      }
    }
    log_.info(2, fmt::format("{}: {} {}{}", entry.backend, Derived::metric_label,
                             Derived::format_metric(result.metric()),
                             entry.speedup
                                 ? fmt::format(" ({} vs baseline)", format_speedup(*entry.speedup))
                                 : std::string()));
  }

  /// Activates the backend that is to be handed back. Its activate() is user code: when it
  /// throws, the entry says why and the caller falls back to the other choice.
  bool try_activate(B& backend, CandidateReport& entry) {
    try {
      backend.activate();
      return true;
    } catch (...) {
      entry.status = CandidateStatus::build_failed;
      entry.reason = fmt::format("activate() threw when it was to be selected: {}",
                                 detail::current_exception_message());
      log_.warn(1, fmt::format("{}: {}", entry.backend, entry.reason));
      deactivate_quietly(backend);
      return false;
    }
  }

  TuneResult<B> hand_back_baseline(Run& run, std::string why) {
    run.report.baseline->selected = true;
    run.report.baseline_selected = true;
    run.report.selected = run.report.baseline->backend;
    run.report.selected_key = run.report.baseline->key;
    run.report.decision = std::move(why);
    return TuneResult<B>{std::move(*run.baseline), std::move(run.report)};
  }

  TuneResult<B> hand_back_best(Run& run, std::string why) {
    CandidateReport& winner = run.report.candidates[run.best->index];
    winner.selected = true;
    run.report.selected = winner.backend;
    run.report.selected_key = winner.key;
    run.report.decision = std::move(why);
    return TuneResult<B>{std::move(run.best->backend), std::move(run.report)};
  }

  TuneResult<B> resolve(Run& run) {
    const bool baseline_usable = run.baseline && baseline_result_;
    if (run.best && baseline_usable &&
        !self().displaces_baseline(run.best->result, *baseline_result_)) {
      // The baseline stays; should it fail to come back, the best candidate serves instead.
      deactivate_quietly(run.best->backend);
      const std::string why = self().explain_baseline_kept(run.best->result, *baseline_result_,
                                                           descriptions_[run.best->index]);
      if (try_activate(*run.baseline, *run.report.baseline)) return hand_back_baseline(run, why);
      run.baseline.reset();
      if (try_activate(run.best->backend, run.report.candidates[run.best->index])) {
        return hand_back_best(run, "the baseline could not be activated again; " + why);
      }
      run.best.reset();
    } else if (run.best) {
      if (run.baseline) deactivate_quietly(*run.baseline);
      CandidateReport& winner = run.report.candidates[run.best->index];
      const std::string why =
          baseline_result_ ? self().explain_candidate_selected(run.best->result, *baseline_result_,
                                                               winner.backend)
                           : "the best candidate (performance validation is off or the "
                             "baseline could not be measured)";
      if (try_activate(run.best->backend, winner)) return hand_back_best(run, why);
      run.best.reset();
      if (baseline_usable && try_activate(*run.baseline, *run.report.baseline)) {
        return hand_back_baseline(run, "the selected candidate could not be activated");
      }
    } else if (baseline_usable) {
      const bool all_failed =
          !run.report.candidates.empty() &&
          std::none_of(run.report.candidates.begin(), run.report.candidates.end(),
                       [](const CandidateReport& c) { return c.status == CandidateStatus::ok; });
      if (try_activate(*run.baseline, *run.report.baseline)) {
        return hand_back_baseline(run, all_failed ? "every candidate failed (see their reasons)"
                                                  : "no candidate could be measured");
      }
    }

    std::string considered;
    for (const auto& candidate : run.report.candidates) {
      considered += fmt::format("\n  - {}: {}: {}", candidate.backend, to_string(candidate.status),
                                candidate.reason);
    }
    throw NoCorrectBackendError(fmt::format(
        "module '{}': no correct backend was found among the {} candidate(s) considered{}{}",
        run.report.module, run.report.candidates.size(), considered,
        config_.performance_validation() ? "\n  (the baseline was not usable either)" : ""));
  }

  /// `winner` is the selected candidate's result (null when the baseline was selected).
  void post_tune(const TuneReport& report, const Result* winner) {
    if (report.baseline_selected) {
      log_.info(0, fmt::format("{}: Baseline was selected: {} at {} ({})", report.module,
                               report.selected, Derived::format_metric(baseline_result_->metric()),
                               report.decision));
      return;
    }
    const CandidateReport* selected = report.selected_candidate();
    if (baseline_result_ && report.baseline) {
      log_.info(
          0, fmt::format("{}: selected {} at {}, {} faster than the baseline {} at {}",
                         report.module, report.selected, Derived::format_metric(winner->metric()),
                         selected->speedup ? format_speedup(*selected->speedup) : std::string("-"),
                         report.baseline->backend,
                         Derived::format_metric(baseline_result_->metric())));
    } else {
      log_.info(0, fmt::format("{}: selected {} at {} (no baseline latency to compare with)",
                               report.module, report.selected,
                               Derived::format_metric(winner->metric())));
    }
  }

  std::vector<B> candidates_;
  std::vector<std::string> descriptions_;
  StrategyConfig config_;
  T timer_;
  Logger log_;
  bool consumed_ = false;
  std::optional<Result> baseline_result_;
  std::vector<PerfValidationResult> perf_validation_results_;
};

}  // namespace aitune
