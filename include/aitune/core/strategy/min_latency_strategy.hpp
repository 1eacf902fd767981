// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// MinLatencyStrategy: selects the backend with the lowest latency at batch size 1.
///
/// A tuning is `tune`, which runs these steps in order, each taking values and handing back what
/// the next needs (strategy/detail/tuning_values.hpp); the report is the one record all add to:
///
///   pre_tune         the baseline (aitune::baseline_traits: TorchEager for LibTorch), built; its
///                    outputs become the reference, and the time budget starts after its build;
///   prepare          each candidate, named, built and checked against the reference; a failure
///                    is recorded with its step and cause, and the tuning goes on; where checks
///                    are long (ScreeningConfig), all are built, screened in a few interleaved
///                    rounds, and checked fastest first, skipping those clearly slower than one
///                    checked (strategy/detail/screening_step.hpp);
///   build and check  their calls, each guarded: every call into a backend is user code
///                    (strategy/detail/guarded_calls.hpp, strategy/detail/reference_pass.hpp);
///   measure          by the schedule: the interleaved race all prepared backends together, the
///                    sequential schedule each as soon as it is prepared; each lane settles on its
///                    row, and the best candidate so far is kept
///                    (strategy/detail/measure_step.hpp);
///   resolve          the best candidate if the decision (decision/latency_decider.hpp) lets it
///                    displace the baseline, else the baseline, activated and handed back.
///
/// reuse, for a tuning cache's hit, runs pre_tune and build and check on one earlier choice.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/decision/latency_decider.hpp"
#include "aitune/core/decision/results.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/detail/measure.hpp"
#include "aitune/core/measure/memory_use.hpp"
#include "aitune/core/report/detail/summary.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/strategy/detail/busy_machine.hpp"
#include "aitune/core/strategy/detail/guarded_calls.hpp"
#include "aitune/core/strategy/detail/measure_step.hpp"
#include "aitune/core/strategy/detail/progress_reporter.hpp"
#include "aitune/core/strategy/detail/reference_pass.hpp"
#include "aitune/core/strategy/detail/screening_step.hpp"
#include "aitune/core/strategy/detail/settle.hpp"
#include "aitune/core/strategy/detail/tuning_values.hpp"
#include "aitune/core/strategy/strategy_config.hpp"
#include "aitune/core/strategy/tune_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune {

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

  explicit MinLatencyStrategy(std::vector<B> candidates,
                              StrategyConfig config = {}) requires std::default_initializable<T>
      : MinLatencyStrategy(std::move(candidates), std::move(config), T{}) {}

  /// Candidates must be unbuilt; they are tried in list order (a near tie goes to the earlier).
  MinLatencyStrategy(std::vector<B> candidates, StrategyConfig config, T timer)
      : candidates_(std::move(candidates)), config_(std::move(config)), timer_(std::move(timer)),
        log_(config_.logger()),
        guard_(log_, config_.full_errors(), config_.profiling().sample_names()) {
    for (std::size_t i = 0; i < candidates_.size(); ++i)
      descriptions_.push_back(guard_.describe_unbuilt(candidates_[i], i));
  }

  /// Tunes `model` on the batch-size-1 `samples`; the report names it StrategyConfig's
  /// module_name. Throws NoCorrectBackendError when no backend can be handed back, ConfigError
  /// for no samples, CancelledError (with the report so far) when the stop token asks.
  [[nodiscard]] TuneResult<B> tune(const model_type& model, std::span<const sample_type> samples) {
    return tune(model, samples, config_.module_name());
  }

  /// As above, the report naming the module `module_name`.
  [[nodiscard]] TuneResult<B> tune(const model_type& model, std::span<const sample_type> samples,
                                   std::string module_name) {
    const TuneInputs in = begin(model, samples, "tune");
    if (config_.before_tuning()) config_.before_tuning()();
    TuneReport report = open_report(std::move(module_name), "tuning");
    report.measurement.shapes = detail::shares_of(in.mix);
    if (const auto& budget = config_.accuracy_budget()) {
      report.accuracy_budget = budget->describe();
      if (const std::string blind = budget->blind_spot(); !blind.empty()) log_.warn(0, blind);
    }
    detail::ProgressReporter<T> progress(config_.progress(), log_, timer_, in.start_ms,
                                         candidates_.size(), in.profiling.time_budget_ms());
    try {
      // pre_tune: the baseline, for the reference outputs and (with validation) the fallback.
      std::optional<B> baseline =
          needs_baseline() ? guard_.make_baseline(in.model, report) : std::nullopt;
      if (report.baseline) progress.preparing(0, report.baseline->backend);
      PreTuned pre = pre_tune(in, std::move(baseline), report);
      if (!config_.performance_validation()) release(pre.baseline);
      const Reference& reference = pre.reference;

      // prepare each candidate; the sequential schedule measures each backend as soon as it is
      // prepared (so losers are freed as it goes), the interleaved race all of them together.
      const bool as_it_goes = config_.profiling().schedule() == Schedule::sequential;
      const bool screens = !as_it_goes && config_.correctness_check() &&
                           in.profiling.screening().applies(reference.outputs.size());
      Waiting waiting{std::move(pre.baseline)};
      Standing standing{.evidence = {config_.decision().baseline_tail(1.0, candidates_.size())}};
      const auto measure_now = [&](detail::LookObserver on_look) {
        standing = detail::MeasureStep<B, T>(parts()).measure(
            in, reference, std::exchange(waiting, {}), std::move(standing), report,
            std::move(on_look));
      };
      if (as_it_goes) measure_now({});
      for (std::size_t index = 0; index < candidates_.size(); ++index) {
        stop_if_cancelled();
        B candidate = take_candidate(index);
        CandidateReport& row = add_row(report, candidate, index);
        progress.preparing(index + 1, row.backend,
                           standing.best ? report.candidates[standing.best->index].backend : "");
        std::optional<Prepared> ready =
            prepare_candidate(in, reference, std::move(candidate), row, index, !screens);
        if (ready) waiting.candidates.push_back(std::move(*ready));
        if (as_it_goes) measure_now({});
      }
      stop_if_cancelled();
      if (screens) {
        detail::ScreeningStep<B, T>(parts()).screen_and_check(
            in, reference, waiting, report,
            [&](B& backend, CandidateReport& row) { return check(in, reference, backend, row); });
      }
      measure_now(progress.look_observer());
      report.measurement.calls = report.total_calls();
      stop_if_cancelled();
      last_ = {standing.baseline_result, detail::perf_validation_results_of(report)};

      // resolve, and hand back; each row then says how it stands against the one selected.
      const double tail_alpha = standing.evidence.baseline_tail_alpha;
      TuneResult<B> result = resolve(std::move(standing), std::move(report));
      detail::relate_to_selected(result.report, tail_alpha);
      if (keep_reference_outputs_) result.reference_outputs = std::move(pre.reference.outputs);
      result.report.tuning_time_ms = timer_.now_ms() - in.start_ms;
      log_.info(0, detail::summary_line(result.report));  // post_tune
      progress.finished(result.report.selected);
      return result;
    } catch (const CancelledError& cancelled) {
      if (cancelled.report() != nullptr) throw;
      throw detail::cancellation(std::move(report), timer_.now_ms() - in.start_ms);
    }
  }

  /// Hands back the backend an earlier tuning selected (`earlier`, its report), built and checked
  /// once against the reference (`stored_reference`, else the baseline's outputs), without
  /// measuring. Defined beside the tuning cache, with its whole contract: include
  /// core/cache/reuse.hpp (or core/cache/cached_tuning.hpp) to call it.
  [[nodiscard]] TuneResult<B> reuse(const model_type& model, std::span<const sample_type> samples,
                                    TuneReport earlier,
                                    std::vector<output_type> stored_reference = {});

  /// Does `result` rank above `other`: would a tuning of one candidate measured as `result`
  /// against a baseline measured as `other` select the candidate? The strategy's decider answers
  /// at the level it holds such a comparison to (a tuning's verdict also weighs its race's looks).
  [[nodiscard]] bool is_better(const result_type& result, const result_type& other) const {
    const LatencyDecider decider(config_.decision(), config_.decision().baseline_tail(1.0, 1));
    return decider.verdict(result, other, "the candidate").displaces;
  }

  /// One entry per successfully profiled candidate of the last tune(), compared with the baseline
  /// (never the baseline itself). Empty when the baseline was not profiled.
  [[nodiscard]] const std::vector<PerfValidationResult>& perf_validation_results() const noexcept {
    return last_.perf_validation_results;
  }
  /// The baseline's result of the last tune(), if it was profiled.
  [[nodiscard]] const std::optional<result_type>& baseline_result() const noexcept {
    return last_.baseline_result;
  }
  /// Asks tune() for the baseline's outputs in TuneResult::reference_outputs (tune_with_cache
  /// stores them); off by default.
  void keep_reference_outputs(bool keep) noexcept { keep_reference_outputs_ = keep; }

  [[nodiscard]] const StrategyConfig& config() const noexcept { return config_; }

  /// The strategy, its settings and its candidates, a line each.
  [[nodiscard]] std::string describe() const {
    return fmt::format("name: {}\nmetric: latency (ms) at batch size 1\n{}{}", title,
                       config_.describe(), detail::numbered_list("candidates", descriptions_));
  }

 private:
  using Result = result_type;
  using TuneInputs = detail::TuneInputs<B>;
  using Reference = detail::Reference<B>;
  using PreTuned = detail::PreTuned<B>;
  using Prepared = detail::Prepared<B>;
  using Waiting = detail::Waiting<B>;
  using Contender = detail::Contender<B>;
  using Standing = detail::Standing<B>;

  // ---- pre_tune and prepare --------------------------------------------------------------------

  TuneInputs begin(const model_type& model, std::span<const sample_type> samples,
                   std::string_view call) {
    if (samples.empty())
      throw ConfigError(fmt::format("{} needs at least one batch-size-1 sample", call));
    if (consumed_) {
      throw Error("the candidates of this strategy were consumed by an earlier tune() (the "
                  "backend type is not copyable); construct a new strategy to tune again");
    }
    // A timer may depend on the model (LibTorch's DeviceTimer uses CUDA events on a GPU).
    if constexpr (requires { timer_.prepare(model); }) timer_.prepare(model);
    // Move-only candidates are taken from here on: even a tuning that throws has used them up.
    if constexpr (!std::copy_constructible<B>) consumed_ = true;
    last_ = {};
    std::vector<std::string> shapes;
    for (const sample_type& sample : samples)
      shapes.push_back(sample_shape<B>::of(sample));
    SampleMix mix = SampleMix::of(shapes, config_.profiling().sample_weights());
    if (const auto& budget = config_.accuracy_budget();
        budget && config_.correctness_check() && samples.size() < budget->min_samples()) {
      throw ConfigError(fmt::format(
          "the accuracy budget is checked on at least {} held-out samples, and {} were given: "
          "pass more samples, or lower the budget's count (AccuracyBudget::set_min_samples; "
          "samples=N in aitune-tune's --accuracy)",
          budget->min_samples(), samples.size()));
    }
    return TuneInputs{model, samples, config_.profiling(), timer_.now_ms(), std::move(mix)};
  }

  TuneReport open_report(std::string module_name, std::string_view action) const {
    log_.info(0, fmt::format("{}: {} module '{}' over {} candidate(s)", title, action, module_name,
                             candidates_.size()));
    return detail::open_report(title, std::move(module_name), config_.profiling().schedule(),
                               config_.decision().rule());
  }

  /// For its outputs (the correctness check) or its latency (performance validation).
  [[nodiscard]] bool needs_baseline() const {
    return config_.performance_validation() || config_.correctness_check();
  }

  /// The baseline, built; the time budget starts when its build ends (the build is the model's
  /// cost, not the tuning's: its row shows it). Its outputs on the samples, as many as fit half
  /// the budget, become the reference. It comes back unless it failed.
  PreTuned pre_tune(const TuneInputs& in, std::optional<B> baseline, TuneReport& report) {
    const double budget_ms = in.profiling.time_budget_ms();
    PreTuned pre{std::nullopt,
                 {.checked = in.samples.size(), .deadline_ms = in.start_ms + budget_ms}};
    if (!report.baseline) return pre;
    CandidateReport& row = *report.baseline;
    const double start_ms = timer_.now_ms();
    const bool ready =
        baseline &&
        watching_memory<B>(in.model, config_.memory_watch(), config_.peak_reset(), row.memory, [&] {
          if (!build(in, *baseline, row, /*named=*/true)) return false;
          pre.reference.deadline_ms = timer_.now_ms() + budget_ms;
          return !config_.correctness_check() || reference_pass(in, *baseline, row, pre.reference);
        });
    row.tuning_time_ms = timer_.now_ms() - start_ms;
    if (!ready) {
      pre.reference.outputs.clear();
      release(baseline);
      if (config_.correctness_check()) {
        pre.reference.missing = detail::reference_missing(row);
        log_.warn(1, fmt::format("baseline {} failed ({}): {}", row.backend, row.reason,
                                 pre.reference.missing));
      } else {
        guard_.warn_baseline_failed(row);
      }
      return pre;
    }
    detail::note_reference_pass<B>(row, report.checked_samples, pre.reference.outputs,
                                   pre.reference.checked, in.samples.size(), budget_ms, log_,
                                   guard_.sample_names());
    pre.baseline = std::move(baseline);
    return pre;
  }

  /// A candidate, named on `row`: built and checked (unless `check_now` is false: the screening
  /// checks it later) unless its name failed or the tuning's budget is spent; it fails when its
  /// build and check went over its own budget.
  std::optional<Prepared> prepare_candidate(const TuneInputs& in, const Reference& reference,
                                            B candidate, CandidateReport& row, std::size_t index,
                                            bool check_now) {
    const double start_ms = timer_.now_ms();
    bool ready = false;
    if (row.status != CandidateStatus::ok) {  // its name failed: never built, never selected
    } else if (!reference.missing.empty()) {
      row.status = CandidateStatus::skipped;
      row.reason = "not tried: " + reference.missing;
    } else if (start_ms > reference.deadline_ms) {
      row.status = CandidateStatus::skipped;
      row.reason = "not tried: the tuning's time budget was spent";
    } else if (build_and_check(in, reference, candidate, row, check_now)) {
      const double spent_ms = timer_.now_ms() - start_ms;
      ready = spent_ms <= in.profiling.candidate_time_budget_ms() ||
              detail::fail(row, detail::PrepareStep::budget, detail::over_budget(spent_ms));
    }
    row.tuning_time_ms = timer_.now_ms() - start_ms;
    if (ready) return Prepared{index, std::move(candidate), row.tuning_time_ms};
    log_.warn(2, fmt::format("{}: {}", to_label(row.status), row.reason));
    guard_.release(candidate);
    return std::nullopt;
  }

  // ---- build and check -------------------------------------------------------------------------

  /// For reuse (core/cache/reuse.hpp): why the reused choice is refused for its graph.
  std::string graph_refusal_on_reuse(const TuneInputs& in, const Reference& reference,
                                     std::size_t selected, const CandidateReport& entry);

  bool build_and_check(const TuneInputs& in, const Reference& reference, B& candidate,
                       CandidateReport& row, bool check_now) {
    return watching_memory<B>(in.model, config_.memory_watch(), config_.peak_reset(), row.memory,
                              [&] {
                                return build(in, candidate, row, /*named=*/false) &&
                                       (!check_now || !config_.correctness_check() ||
                                        check(in, reference, candidate, row));
                              });
  }

  /// The baseline's reasons name their step; a candidate's failed build is its cause alone.
  bool build(const TuneInputs& in, B& backend, CandidateReport& row, bool named) {
    return guard_.run_step(backend, row, detail::PrepareStep::build, named, in.samples.size(),
                           [&](std::size_t&) { backend.build(in.model, in.samples); });
  }

  /// The baseline's outputs on the first samples become the reference; the pass ends early once
  /// the rest would not fit half the time budget (detail::samples_within_budget).
  bool reference_pass(const TuneInputs& in, B& baseline, CandidateReport& row,
                      Reference& reference) {
    return guard_.run_step(baseline, row, detail::PrepareStep::run_samples, true, in.samples.size(),
                           [&](std::size_t& at) {
                             detail::run_reference_pass(
                                 baseline, in.samples, reference.checked, reference.outputs, timer_,
                                 in.profiling.time_budget_ms(), must_check(in), at,
                                 [&] { cancel_during(row); });
                           });
  }

  /// The fewest samples the reference pass may check: every shape's first and every untimed one,
  /// and the accuracy budget's count.
  [[nodiscard]] std::size_t must_check(const TuneInputs& in) const {
    const auto& budget = config_.accuracy_budget();
    return std::max(in.mix.must_check(), budget ? budget->min_samples() : std::size_t{0});
  }

  /// Every checked sample through `candidate`, its outputs compared with the reference: the row
  /// gets, per output, the worst accuracy over the samples, and the first failure's reason. Under
  /// an accuracy budget, a reduced-precision candidate is judged by the budget instead of its
  /// tolerance, and its row says how it stands against it.
  bool check(const TuneInputs& in, const Reference& reference, B& candidate, CandidateReport& row) {
    detail::SamplesChecked checked;
    const AccuracyBudget* budget =
        config_.accuracy_budget() ? &*config_.accuracy_budget() : nullptr;
    const bool ran = guard_.run_step(
        candidate, row, detail::PrepareStep::check, true, in.samples.size(), [&](std::size_t& at) {
          checked = detail::check_samples(
              candidate, in.samples, reference.checked, reference.outputs, at,
              guard_.sample_names(), [&] { cancel_during(row); }, budget);
        });
    return ran && detail::settle_check(row, std::move(checked), budget, !reference.outputs.empty(),
                                       guard_.sample_names(), in.samples.size());
  }

  // ---- measure: strategy/detail/measure_step.hpp ------------------------------------------------

  // ---- resolve, and hand back ------------------------------------------------------------------

  /// The best candidate if it displaces the baseline, else the baseline; when the one to hand
  /// back cannot be activated, the other. Throws when neither is usable.
  TuneResult<B> resolve(Standing standing, TuneReport report) {
    std::optional<B>& baseline = standing.baseline;
    std::optional<Contender>& best = standing.best;
    const bool baseline_usable = baseline && standing.baseline_result;
    std::optional<SwitchVerdict> verdict;
    if (best && standing.baseline_result) {
      verdict = decider_of(standing.evidence)
                    .verdict(best->result, *standing.baseline_result, descriptions_[best->index],
                             standing.evidence.judged(best->index));
    }
    if (best && baseline_usable && !verdict->displaces) {
      guard_.release(best->backend);
      if (guard_.try_activate(*baseline, *report.baseline)) {
        return hand_back(std::move(*baseline), std::nullopt, best->index, std::move(report),
                         verdict->why);
      }
      if (guard_.try_activate(best->backend, report.candidates[best->index])) {
        return hand_back(std::move(best->backend), best->index, best->index, std::move(report),
                         "the baseline could not be activated again; " + verdict->why);
      }
    } else if (best) {
      release(baseline);
      std::string why = "the best candidate (performance validation is off or the baseline "
                        "could not be measured)";
      if (verdict) {
        why = verdict->displaces ? verdict->why
                                 : "the baseline cannot be handed back; " + verdict->why;
      }
      CandidateReport& winner = report.candidates[best->index];
      if (guard_.try_activate(best->backend, winner)) {
        return hand_back(std::move(best->backend), best->index, best->index, std::move(report),
                         why + detail::precision_note(winner));
      }
      if (baseline_usable && guard_.try_activate(*baseline, *report.baseline)) {
        return hand_back(std::move(*baseline), std::nullopt, std::nullopt, std::move(report),
                         "the selected candidate could not be activated");
      }
    } else if (baseline_usable && guard_.try_activate(*baseline, *report.baseline)) {
      return hand_back(std::move(*baseline), std::nullopt, std::nullopt, std::move(report),
                       detail::why_none_measured(report));
    }
    throw detail::no_correct_backend(std::move(report), config_.performance_validation());
  }

  /// `backend`, the candidate at `index` (none: the baseline), handed back as selected for `why`,
  /// and, on a busy machine, what that did to the measurement (`best`: the best candidate).
  TuneResult<B> hand_back(B backend, std::optional<std::size_t> index,
                          std::optional<std::size_t> best, TuneReport&& report, std::string why) {
    why += detail::note_busy_machine(report, best ? &report.candidates[*best] : nullptr, !index);
    CandidateReport& row = index ? report.candidates[*index] : *report.baseline;
    row.selected = true;
    report.baseline_selected = !index;
    report.selected = row.backend;
    report.selected_key = row.key;
    report.selected_identity = row.identity;
    report.decision = std::move(why);
    return TuneResult<B>{std::move(backend), std::move(report)};
  }

  // ---- helpers of the flow ---------------------------------------------------------------------

  [[nodiscard]] LatencyDecider decider_of(const detail::SwitchEvidence& evidence) const {
    return detail::decider_of(config_.decision(), evidence);
  }

  /// What the steps beside the flow borrow of it, for one call.
  detail::FlowParts<B, T> parts() { return {config_, timer_, log_, guard_, candidates_.size()}; }

  /// A copy of candidate `index`, whose prototype stays unbuilt for the next tune(); a move-only
  /// candidate itself.
  B take_candidate(std::size_t index) {
    if constexpr (std::copy_constructible<B>)
      return B(candidates_[index]);
    else
      return std::move(candidates_[index]);
  }

  /// The candidate's row, named; a name that failed fails the row (it is never built).
  CandidateReport& add_row(TuneReport& report, const B& candidate, std::size_t index) const {
    const detail::Name name = guard_.name_of(candidate, guard_.position_of(index));
    CandidateReport& row = report.candidates.emplace_back(name.row());
    log_.info(1, fmt::format("[{}/{}] {}", index + 1, candidates_.size(), row.backend));
    if (name.failure) detail::fail(row, detail::PrepareStep::name, *name.failure);
    return row;
  }

  /// Releases the backend in hand, if any, and lets go of it.
  void release(std::optional<B>& backend) const {
    if (backend) guard_.release(*backend);
    backend.reset();
  }

  void stop_if_cancelled() const { detail::stop_point(config_.stop_token()); }
  void cancel_during(CandidateReport& row) const { detail::stop_point(config_.stop_token(), row); }

  std::vector<B> candidates_;
  std::vector<std::string> descriptions_;
  StrategyConfig config_;
  T timer_;
  Logger log_;
  detail::GuardedCalls<B> guard_;
  bool consumed_ = false;
  bool keep_reference_outputs_ = false;
  struct {  // what the last tuning measured, for the seed's accessors
    std::optional<Result> baseline_result;
    std::vector<PerfValidationResult> perf_validation_results;
  } last_;
};

}  // namespace aitune
