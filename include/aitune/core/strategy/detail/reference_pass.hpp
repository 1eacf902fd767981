// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The reference pass and the correctness check, apart from the calls themselves: how many samples
/// the baseline's pass may check within the time budget, what the report says of a pass that was
/// cut short or of a reference the check cannot fully use, and how the verdicts of a candidate's
/// samples add up to one.

#include "aitune/core/customization.hpp"
#include "aitune/core/decision/accuracy_budget.hpp"
#include "aitune/core/measure/sample_names.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/strategy/detail/guarded_calls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune::detail {

/// How many of the first samples outputs are checked on, after the baseline's reference pass has
/// run `done` of them in `spent_ms` (the last call took `last_call_ms`): still `planned` when they
/// fit half the tuning's time budget `budget_ms` at the last call's pace, else those that do (at
/// least those done, and at least `must_check`: every shape's first sample and every untimed one,
/// SampleMix::must_check). The other half of the budget is left for the candidates' builds,
/// checks and the measurement.
[[nodiscard]] inline std::size_t samples_within_budget(std::size_t planned, std::size_t done,
                                                       double spent_ms, double last_call_ms,
                                                       double budget_ms,
                                                       std::size_t must_check = 0) {
  const double half_budget_ms = budget_ms / 2.0;
  if (done >= planned || !std::isfinite(half_budget_ms)) return planned;
  const double room_ms = std::max(0.0, half_budget_ms - spent_ms);
  const double more = last_call_ms > 0.0 ? std::floor(room_ms / last_call_ms)
                                         : std::numeric_limits<double>::infinity();
  if (more >= static_cast<double>(planned - done)) return planned;
  return std::min(planned, std::max(done + static_cast<std::size_t>(more), must_check));
}

/// The baseline's note when its pass checks only the first `checked` of `total` samples.
[[nodiscard]] inline std::string bounded_pass_note(std::size_t checked, std::size_t total,
                                                   double budget_ms) {
  return fmt::format("outputs checked on the first {} of {} samples: the baseline's pass over all "
                     "of them would not fit half the {:.1f} s time budget",
                     checked, total, budget_ms / 1000.0);
}

/// What the check cannot fully use in the reference (NaN, Inf: a candidate is then checked only
/// where the baseline's outputs are usable), as the baseline's note: the first such output is
/// enough to say the check is weakened. Empty when there is none.
template <class B>
[[nodiscard]] std::string reference_note(const std::vector<typename B::output_type>& reference,
                                         std::size_t total_samples, const SampleNames& names) {
  for (std::size_t i = 0; i < reference.size(); ++i) {
    std::string warning = output_checker<B>::reference_warning(reference[i]);
    if (!warning.empty()) return names.at(i, total_samples, std::move(warning));
  }
  return {};
}

/// What the baseline's row and the report say of a reference pass that checks only the first
/// `checked` of `total` samples (within half of `budget_ms`), or whose outputs the check cannot
/// fully use; each note is a warning too.
template <class B>
void note_reference_pass(CandidateReport& baseline, std::optional<std::size_t>& checked_samples,
                         const std::vector<typename B::output_type>& outputs, std::size_t checked,
                         std::size_t total, double budget_ms, const Logger& log,
                         const SampleNames& names) {
  if (checked < total) {
    checked_samples = checked;
    baseline.note = bounded_pass_note(checked, total, budget_ms);
    log.warn(1, baseline.note);
  }
  if (const std::string weakened = reference_note<B>(outputs, total, names); !weakened.empty()) {
    baseline.note =
        baseline.note.empty() ? weakened : fmt::format("{}; {}", baseline.note, weakened);
    log.warn(2, weakened);
  }
}

/// A candidate's verdict over its samples: the precision of the last sample, and, per output, its
/// worst accuracy over all of them. `sample` is the verdict of one more sample (its pass/fail is
/// the caller's: the first failure ends the check).
inline void merge_accuracy(OutputCheck& merged, OutputCheck sample) {
  merged.precision = std::move(sample.precision);
  merged.reduced_precision = sample.reduced_precision;
  merged.quantization = std::move(sample.quantization);
  for (OutputAccuracy& output : sample.accuracy) {
    const auto same =
        std::find_if(merged.accuracy.begin(), merged.accuracy.end(),
                     [&](const OutputAccuracy& known) { return known.output == output.output; });
    if (same == merged.accuracy.end()) {
      merged.accuracy.push_back(std::move(output));
    } else {
      same->merge(output);
    }
  }
}

/// One sample's verdict: under an accuracy budget, with what the budget judges measured too
/// (where the checker can).
template <class B>
[[nodiscard]] OutputCheck check_output(const B& candidate, const typename B::output_type* expected,
                                       const typename B::output_type& actual,
                                       const AccuracyBudget* budget) {
  if constexpr (requires { output_checker<B>::check(candidate, expected, actual, *budget); }) {
    if (budget != nullptr) return output_checker<B>::check(candidate, expected, actual, *budget);
  }
  return output_checker<B>::check(candidate, expected, actual);
}

/// The baseline's reference pass: its outputs on the first `checked` samples go to `outputs`;
/// `checked` shrinks as the pass goes when the rest would not fit half of `budget_ms`
/// (samples_within_budget), never below `must_check`. `before_each()` runs before each call (a
/// point to stop at); `at` follows the sample running, for a failure's reason (no_sample once the
/// calls are done, when aitune::after_calls puts the process back).
template <class B, class Timer, class BeforeEach>
void run_reference_pass(B& baseline, std::span<const typename B::sample_type> samples,
                        std::size_t& checked, std::vector<typename B::output_type>& outputs,
                        Timer& timer, double budget_ms, std::size_t must_check, std::size_t& at,
                        BeforeEach before_each) {
  const double start_ms = timer.now_ms();
  for (at = 0; at < checked; ++at) {
    before_each();
    const double call_start_ms = timer.now_ms();
    outputs.push_back(baseline.infer(samples[at]));
    checked = samples_within_budget(checked, at + 1, timer.now_ms() - start_ms,
                                    timer.now_ms() - call_start_ms, budget_ms, must_check);
  }
  at = no_sample;
  after_calls<B>::run(baseline);
}

/// What a check over the samples found, and how far it went.
struct SamplesChecked {
  OutputCheck verdict{};
  std::size_t ran = 0;         ///< the samples it ran
  std::size_t of = 0;          ///< the samples it was to run
  bool missed_budget = false;  ///< it ended early: a worst-case measure missed the budget
};

/// Whether `budget` (null: none) is to judge a candidate whose check gave `verdict`: it
/// computes in a lower precision. Judging it needs a reference (judged_by_budget).
[[nodiscard]] inline bool budget_decides(const AccuracyBudget* budget, const OutputCheck& verdict) {
  return budget != nullptr && verdict.reduced_precision;
}

/// A candidate's check over its samples (`checked`, of `samples` given) on its row: the
/// precision and each output's worst accuracy, and whether it passed. Under an accuracy `budget`
/// a reduced-precision candidate is judged by the budget instead of its tolerance, which needs
/// the baseline's outputs (`has_reference`); the row says how it stands against the budget.
/// `names` names the sample where a measure already missed ended the check early.
inline bool settle_check(CandidateReport& row, SamplesChecked checked, const AccuracyBudget* budget,
                         bool has_reference, const SampleNames& names, std::size_t samples) {
  OutputCheck& verdict = checked.verdict;
  row.precision = verdict.precision;
  row.reduced_precision = verdict.reduced_precision;
  row.quantization = std::move(verdict.quantization);
  row.accuracy = std::move(verdict.accuracy);
  const bool under_budget = verdict.passed && budget_decides(budget, verdict);
  // No baseline outputs (no baseline could run): nothing to judge the budget by, and a
  // reduced precision is not trusted unjudged.
  if (under_budget && !has_reference) {
    return fail(row, PrepareStep::check,
                "it computes in a lower precision and the accuracy budget cannot be judged "
                "without the baseline's outputs (there is no baseline)");
  }
  if (under_budget) {
    const AccuracyVerdict judged = budget->judge(row.accuracy);
    row.accuracy_verdict = judged.text;
    row.judged_by_budget = true;
    if (!judged.within) {
      // A measure already missed ended the check: the samples left could not mend it.
      const std::string stopped =
          checked.missed_budget && checked.ran < checked.of
              ? fmt::format("; the check stopped after {}, where the samples left could not bring "
                            "it within the budget",
                            names.of(checked.ran - 1, samples))
              : std::string();
      return fail(row, PrepareStep::check, "outside the accuracy budget: " + judged.text + stopped);
    }
  }
  return verdict.passed || fail(row, PrepareStep::check, verdict.reason);
}

/// Whether `budget` (null: none) judges a candidate whose check over its samples gave
/// `verdict`: it computes in a lower precision and was compared with a reference.
[[nodiscard]] inline bool judged_by_budget(const AccuracyBudget* budget, const OutputCheck& verdict,
                                           bool has_reference) {
  return has_reference && budget_decides(budget, verdict);
}

/// The class scores' rows in the samples a check has yet to run, per output: what later samples
/// could still add to a candidate's top-k agreement (AccuracyBudget::already_missed). Counted
/// once, when the agreement first falls short, by comparing each remaining reference output with
/// itself (a checker counts the reference's rows); each sample checked after that takes its own.
template <class B>
class RowsToCome {
 public:
  [[nodiscard]] bool counted() const noexcept { return counted_; }
  [[nodiscard]] std::span<const OutputAccuracy> rows() const noexcept { return rows_; }

  /// Counts the rows of `reference`'s outputs, as `candidate`'s checker sees them.
  void count(const B& candidate, std::span<const typename B::output_type> reference,
             const AccuracyBudget& budget) {
    counted_ = true;
    OutputCheck all;
    for (const typename B::output_type& expected : reference) {
      merge_accuracy(all, check_output(candidate, &expected, expected, &budget));
    }
    rows_ = std::move(all.accuracy);
  }

  /// One more sample checked: its rows (`sample`, its verdict) are no longer to come.
  void checked(const OutputCheck& sample) {
    for (const OutputAccuracy& done : sample.accuracy) {
      for (OutputAccuracy& rest : rows_) {
        if (rest.output == done.output) {
          rest.top_k_rows -= std::min(rest.top_k_rows, done.top_k_rows);
        }
      }
    }
  }

 private:
  bool counted_ = false;
  std::vector<OutputAccuracy> rows_{};
};

/// Whether a verdict's top-k agreement has missed a row so far (so that a bound on what later
/// samples can add may end the check early).
[[nodiscard]] inline bool top_k_fell_short(const OutputCheck& verdict) {
  return std::any_of(verdict.accuracy.begin(), verdict.accuracy.end(),
                     [](const OutputAccuracy& o) { return o.top_k_agreed < o.top_k_rows; });
}

/// Every one of the first `checked` samples through `candidate`, each output compared with the
/// reference (`reference` empty: there is none, and only the outputs themselves are checked).
/// The verdict holds, per output, the worst accuracy over the samples, and the first failure's
/// reason (the check ends there). Under an accuracy `budget` (null: none), a reduced-precision
/// candidate's values outside its tolerance are no failure: the budget judges them over the
/// samples (judge_by_budget), and the check ends once a measure has missed it beyond what the
/// samples still to come can mend (AccuracyBudget::already_missed). `before_each` and `at` as for
/// run_reference_pass; `names` names the sample a reason is about.
template <class B, class BeforeEach>
[[nodiscard]] SamplesChecked
check_samples(B& candidate, std::span<const typename B::sample_type> samples, std::size_t checked,
              const std::vector<typename B::output_type>& reference, std::size_t& at,
              const SampleNames& names, BeforeEach before_each,
              const AccuracyBudget* budget = nullptr) {
  SamplesChecked result{.of = checked};
  OutputCheck& verdict = result.verdict;
  RowsToCome<B> to_come;
  for (at = 0; at < checked && verdict.passed && !result.missed_budget; ++at) {
    before_each();
    const typename B::output_type actual = candidate.infer(samples[at]);
    const auto* expected = reference.empty() ? nullptr : &reference[at];
    OutputCheck sample = check_output(candidate, expected, actual, budget);
    const bool budget_judges = judged_by_budget(budget, sample, expected != nullptr);
    if (!sample.passed && !(budget_judges && sample.outside_tolerance_only)) {
      verdict.passed = false;
      verdict.reason = names.at(at, samples.size(), std::move(sample.reason));
    }
    if (to_come.counted()) to_come.checked(sample);
    merge_accuracy(verdict, std::move(sample));
    ++result.ran;
    if (!budget_judges) continue;
    if (!to_come.counted() && budget->top_k() && top_k_fell_short(verdict)) {
      to_come.count(candidate, std::span(reference).subspan(at + 1, checked - at - 1), *budget);
    }
    result.missed_budget = budget->already_missed(verdict.accuracy, to_come.rows());
  }
  at = no_sample;
  after_calls<B>::run(candidate);
  return result;
}

}  // namespace aitune::detail
