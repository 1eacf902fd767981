// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The profiling strategy flow shared by every strategy that ranks backends by a measured
/// metric (aitune's ProfilingTuneStrategy):
///
///   pre_tune   build the baseline; keep its outputs as the reference for the correctness
///              check; profile it when performance validation is on;
///   per candidate: build -> correctness check -> measure -> keep the best by is_better,
///              deactivate the others (a failure at any step is recorded with its reason and
///              the tuning goes on);
///   resolve    the best candidate, or the baseline when validation is on and no candidate
///              beats it (or all failed); activate the winner;
///   post_tune  write the summary lines.
///
/// `Derived` supplies the ranking: `measure(backend, samples, profiling_config, timer)`,
/// `is_better(a, b)`, `speedup(result, baseline)`, `adjust_profiling_config(config)`,
/// `format_metric(value)` and the constants `title`, `metric_label` and `metric_unit`.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report.hpp"
#include "aitune/core/results.hpp"
#include "aitune/core/strategy_config.hpp"
#include "aitune/core/timer.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <exception>
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

namespace detail {
/// The message of the exception being handled, for reports.
inline std::string current_exception_message() {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "unknown exception";
  }
}
}  // namespace detail

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
    const double start_ms = timer_.now_ms();
    Run run{model, samples, {}, {}, {}, {}};
    run.report.strategy = std::string(Derived::title);
    run.report.module = std::move(module_name);

    pre_tune(run);
    for (std::size_t index = 0; index < candidates_.size(); ++index) {
      tune_candidate(run, index);
    }
    if constexpr (!std::copy_constructible<B>) consumed_ = true;
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
    text += fmt::format("stop rule: {}\n", profiling.stop_rule().describe());
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
    for (const auto& candidate : candidates_) {
      if (candidate.state() != BackendState::created) {
        throw ConfigError(fmt::format("candidate {} must be passed unbuilt, it is {}",
                                      candidate.describe(), to_string(candidate.state())));
      }
      descriptions_.push_back(candidate.describe());
    }
  }

 private:
  struct Best {
    std::size_t index;
    B backend;
    Result result;
  };

  /// The state of one tune() call.
  struct Run {
    const model_type& model;
    std::span<const sample_type> samples;
    TuneReport report;
    std::optional<B> baseline;  ///< built and profiled: the fallback
    std::vector<output_type> reference_outputs;
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

  /// Deactivation must not end the tuning, but its failure is reported.
  void deactivate_quietly(B& backend) {
    if (backend.state() == BackendState::created) return;
    try {
      backend.deactivate();
    } catch (...) {
      log_.warn(2, fmt::format("{}: deactivate failed: {}", backend.describe(),
                               detail::current_exception_message()));
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
      B baseline = baseline_traits<B>::make(run.model);
      CandidateReport entry{baseline.describe(), baseline.key()};
      log_.info(1, fmt::format("baseline {}", entry.backend));
      const double start_ms = timer_.now_ms();
      std::string_view step = "build";
      try {
        baseline.build(run.model, run.samples);
        if (check) {
          step = "run the samples";
          for (const auto& sample : run.samples)
            run.reference_outputs.push_back(baseline.infer(sample));
        }
        if (validate) {
          step = "measure";
          baseline_result_ = self().measure(baseline, run.samples, profiling_config(), timer_);
          entry.latency = baseline_result_->stats;
          entry.speedup = 1.0;
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
        log_.info(2, fmt::format("{}: {}", Derived::metric_label,
                                 Derived::format_metric(baseline_result_->metric())));
      }
      deactivate_quietly(baseline);  // frees it; activated again only if it is selected
      if (baseline_result_) run.baseline.emplace(std::move(baseline));
      run.report.baseline = std::move(entry);
    }
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

  void tune_candidate(Run& run, std::size_t index) {
    B candidate = take_candidate(index);
    CandidateReport entry{candidate.describe(), candidate.key()};
    log_.info(1, fmt::format("[{}/{}] {}", index + 1, candidates_.size(), entry.backend));
    const double start_ms = timer_.now_ms();
    const auto fail = [&](CandidateStatus status, std::string reason) {
      entry.status = status;
      entry.reason = std::move(reason);
    };

    std::optional<Result> result;
    try {
      candidate.build(run.model, run.samples);
    } catch (...) {
      fail(CandidateStatus::build_failed, detail::current_exception_message());
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
    if (entry.status == CandidateStatus::ok) {
      try {
        result = self().measure(candidate, run.samples, profiling_config(), timer_);
      } catch (...) {
        fail(CandidateStatus::measure_failed, detail::current_exception_message());
      }
    }
    entry.tuning_time_ms = timer_.now_ms() - start_ms;

    if (!result) {
      log_.warn(2, fmt::format("{}: {}", to_string(entry.status), entry.reason));
      deactivate_quietly(candidate);
      run.report.candidates.push_back(std::move(entry));
      return;
    }
    entry.latency = result->stats;
    record_against_baseline(entry, *result);
    log_.info(2, fmt::format("{}: {}{}", Derived::metric_label,
                             Derived::format_metric(result->metric()),
                             entry.speedup
                                 ? fmt::format(" ({} vs baseline)", format_speedup(*entry.speedup))
                                 : std::string()));
    run.report.candidates.push_back(std::move(entry));

    if (!run.best || self().is_better(*result, run.best->result)) {
      if (run.best) deactivate_quietly(run.best->backend);
      run.best.emplace(Best{index, std::move(candidate), *result});
    } else {
      deactivate_quietly(candidate);
    }
  }

  void record_against_baseline(CandidateReport& entry, const Result& result) {
    if (!baseline_result_) return;
    const double metric = result.metric();
    const double baseline_metric = baseline_result_->metric();
    if (!(metric > 0.0) || !(baseline_metric > 0.0)) return;
    const double speedup = Derived::speedup(result, *baseline_result_);
    entry.speedup = speedup;
    perf_validation_results_.push_back(
        PerfValidationResult{entry.backend, metric, baseline_metric, speedup, speedup >= 1.0});
  }

  TuneResult<B> select_baseline(Run& run) {
    run.baseline->activate();
    run.report.baseline->selected = true;
    run.report.baseline_selected = true;
    run.report.selected = run.report.baseline->backend;
    run.report.selected_key = run.report.baseline->key;
    return TuneResult<B>{std::move(*run.baseline), std::move(run.report)};
  }

  TuneResult<B> resolve(Run& run) {
    if (run.best) {
      if (run.baseline && !self().is_better(run.best->result, *baseline_result_)) {
        deactivate_quietly(run.best->backend);
        return select_baseline(run);
      }
      CandidateReport& winner = run.report.candidates[run.best->index];
      winner.selected = true;
      run.report.selected = winner.backend;
      run.report.selected_key = winner.key;
      run.best->backend.activate();
      return TuneResult<B>{std::move(run.best->backend), std::move(run.report)};
    }
    if (run.baseline) return select_baseline(run);

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
      log_.info(0, fmt::format("{}: Baseline was selected: {} at {} (no candidate was faster)",
                               report.module, report.selected,
                               Derived::format_metric(baseline_result_->metric())));
      return;
    }
    const CandidateReport* selected = report.selected_candidate();
    if (baseline_result_ && selected->speedup) {
      log_.info(0, fmt::format("{}: selected {} at {}, {} faster than the baseline {} at {}",
                               report.module, report.selected,
                               Derived::format_metric(winner->metric()),
                               format_speedup(*selected->speedup), report.baseline->backend,
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
