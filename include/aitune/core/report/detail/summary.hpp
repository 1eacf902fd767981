// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a finished tuning says of itself in a few words, read off its report: the summary line
/// (post_tune), the note a reduced-precision winner adds to the decision, and the seed's
/// performance-validation verdicts.

#include "aitune/core/decision/results.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/sample_mix.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/stats/median_interval.hpp"
#include "aitune/core/stats/paired_rounds.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::detail {

/// A new report of `strategy` tuning `module` with `config`'s schedule and rule.
[[nodiscard]] inline TuneReport open_report(std::string_view strategy, std::string module,
                                            Schedule schedule, DecisionRule rule) {
  TuneReport report{.strategy = std::string(strategy), .module = std::move(module)};
  report.measurement.schedule = schedule;
  report.measurement.decision_rule = rule;
  report.measurement.stop_detail = "nothing was measured";
  return report;
}

/// One line: what was selected, at what latency, and how much faster than the baseline.
[[nodiscard]] inline std::string summary_line(const TuneReport& report) {
  const CandidateReport* baseline = report.baseline ? &*report.baseline : nullptr;
  const bool baseline_measured = baseline != nullptr && baseline->latency.has_value();
  if (report.baseline_selected) {
    return fmt::format("{}: Baseline was selected: {} at {} ({})", report.module, report.selected,
                       baseline_measured ? format_ms(baseline->latency->median) : "-",
                       report.decision);
  }
  const CandidateReport* selected = report.selected_candidate();
  const std::string latency =
      selected && selected->latency ? format_ms(selected->latency->median) : "-";
  if (baseline_measured) {
    return fmt::format("{}: selected {} at {}, {} faster than the baseline {} at {}", report.module,
                       report.selected, latency,
                       selected && selected->speedup ? format_speedup(*selected->speedup)
                                                     : std::string("-"),
                       baseline->backend, format_ms(baseline->latency->median));
  }
  return fmt::format("{}: selected {} at {} (no baseline latency to compare with)", report.module,
                     report.selected, latency);
}

/// When the winner computes in a lower precision than the baseline, the decision says so, and
/// how far that moved the outputs (against the accuracy budget, where one judged it).
[[nodiscard]] inline std::string precision_note(const CandidateReport& winner) {
  if (!winner.reduced_precision) return "";
  const std::string computed =
      computed_in(winner).empty() ? std::string("a lower precision") : computed_in(winner);
  if (winner.judged_by_budget) {
    return fmt::format("; it computes in {}, within the accuracy budget ({})", computed,
                       winner.accuracy_verdict);
  }
  const OutputAccuracy* worst = worst_accuracy(winner);
  return fmt::format(
      "; it computes in {}{}", computed,
      worst ? fmt::format(", which moved the outputs by at most {} % of the tolerance (worst: {})",
                          format_fixed(worst->worst_error_ratio * 100.0, 0), worst->output)
            : std::string());
}

/// The seed's performance-validation verdicts: one per candidate measured against the baseline
/// (its row has a speedup), passed when it is at least as fast. Empty when the baseline was not
/// measured.
[[nodiscard]] inline std::vector<PerfValidationResult>
perf_validation_results_of(const TuneReport& report) {
  std::vector<PerfValidationResult> results;
  if (!report.baseline || !report.baseline->latency) return results;
  for (const CandidateReport& row : report.candidates) {
    if (!row.speedup || !row.latency || row.status != CandidateStatus::ok) continue;
    results.push_back(PerfValidationResult{row.backend, row.latency->median,
                                           report.baseline->latency->median, *row.speedup,
                                           *row.speedup >= 1.0});
  }
  return results;
}

/// Why the baseline is handed back without any candidate measured: every candidate failed (the
/// rows say why), or the time budget ran out first, with how many candidates it left untried or
/// unmeasured and what to change.
[[nodiscard]] inline std::string why_none_measured(const TuneReport& report) {
  const auto skipped = static_cast<std::size_t>(std::count_if(
      report.candidates.begin(), report.candidates.end(),
      [](const CandidateReport& row) { return row.status == CandidateStatus::skipped; }));
  if (skipped == 0) {
    if (report.every_candidate_failed()) return "every candidate failed (see their reasons)";
    const bool screened =
        std::any_of(report.candidates.begin(), report.candidates.end(),
                    [](const auto& row) { return row.status == CandidateStatus::screened_out; });
    return screened ? "every candidate was screened out as clearly slower, or failed (see their "
                      "reasons)"
                    : "no candidate could be measured";
  }
  return fmt::format("no candidate was measured: the time budget ran out with {} of the {} "
                     "candidate(s) not tried or not measured (see their rows); give the tuning "
                     "more time{}",
                     skipped, report.candidates.size(),
                     report.checked_samples ? ", or fewer samples to check (the baseline's pass "
                                              "over them took half of it)"
                                            : "");
}

/// The error of a tuning that has no backend to hand back: every candidate with its reason. Its
/// report (the decision says so) travels with it; `validation`: the baseline was asked for too.
[[nodiscard]] inline NoCorrectBackendError no_correct_backend(TuneReport report, bool validation) {
  std::string considered;
  for (const auto& candidate : report.candidates) {
    considered += fmt::format("\n  - {}: {}: {}", candidate.backend, to_label(candidate.status),
                              candidate.reason);
  }
  report.decision = "no correct backend was found";
  std::string baseline = validation ? "\n  (the baseline was not usable either)" : "";
  if (report.baseline && report.baseline->status != CandidateStatus::ok) {
    baseline = fmt::format("\n  (the baseline {} failed: {}: {})", report.baseline->backend,
                           to_label(report.baseline->status), report.baseline->reason);
  }
  std::string message =
      fmt::format("module '{}': no correct backend was found among the {} candidate(s) "
                  "considered{}{}",
                  report.module, report.candidates.size(), considered, baseline);
  return NoCorrectBackendError(message, std::make_shared<const TuneReport>(std::move(report)));
}

/// A measured backend's row: its latency statistics, on the host clock too when a device clock
/// timed it, and its timed calls.
inline void record_latency(CandidateReport& row, const MinLatencyProfilingResult& result) {
  row.latency = result.stats;
  row.host_latency = result.host_stats();
  row.samples_ms = result.samples_ms;
  row.rounds = result.rounds;
  row.shape_medians_ms = result.shape_medians_ms;
  // Over several shapes the row's median is what the mix costs: the shapes' medians weighted.
  if (!result.shape_medians_ms.empty()) row.latency->median = result.latency;
}

/// `mix` as the report shows it: every shape, timed ones first (none for one shape timed and
/// nothing checked only).
[[nodiscard]] inline std::vector<ShapeShare> shares_of(const SampleMix& mix) {
  std::vector<ShapeShare> shares;
  if (!mix.worth_showing()) return shares;
  for (const auto* shapes : {&mix.timed(), &mix.checked_only()}) {
    for (const SampleShape& shape : *shapes)
      shares.push_back(ShapeShare{shape.label, shape.weight, shape.samples.size()});
  }
  return shares;
}

/// Relates every measured row of `report` to its selected backend (CandidateReport::vs_selected):
/// the paired ratio over the rounds both ran, at `tail_alpha` per bound, or the medians' ratio
/// where there are none (measured apart). The selected row's is 1.
inline void relate_to_selected(TuneReport& report, double tail_alpha) {
  CandidateReport* selected =
      report.baseline_selected ? &*report.baseline : report.selected_candidate();
  if (selected == nullptr || !selected->latency) return;
  const auto relate = [&](CandidateReport& row) {
    if (!row.latency) return;
    if (&row == selected) {
      row.vs_selected = RatioReport{1.0, 1.0, 1.0, 0.0, 0};
      return;
    }
    if (const std::vector<double> ratios = paired_ratios(row.rounds, selected->rounds);
        !ratios.empty()) {
      const MedianInterval ci = median_interval(ratios, tail_alpha);
      row.vs_selected = RatioReport{ci.median, ci.low, ci.high, 1.0 - 2.0 * tail_alpha, ci.n};
    } else if (selected->latency->median > 0.0) {
      const double ratio = row.latency->median / selected->latency->median;
      row.vs_selected = RatioReport{ratio, ratio, ratio, 0.0, 0};
    }
  };
  if (report.baseline) relate(*report.baseline);
  for (CandidateReport& row : report.candidates)
    relate(row);
}

/// The error of a tuning cancelled through its stop token, with its report so far (`report`
/// took `elapsed_ms`).
[[nodiscard]] inline CancelledError cancellation(TuneReport report, double elapsed_ms) {
  report.measurement.calls = report.total_calls();
  report.decision = "the tuning was cancelled";
  report.tuning_time_ms = elapsed_ms;
  std::string message = fmt::format("module '{}': the tuning was cancelled", report.module);
  return CancelledError(message, std::make_shared<const TuneReport>(std::move(report)));
}

}  // namespace aitune::detail
