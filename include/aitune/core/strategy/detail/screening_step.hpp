// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The screening step (ScreeningConfig), between prepare and measure in a tuning
/// (core/strategy/min_latency_strategy.hpp): the built, unchecked candidates and the baseline in a
/// few interleaved rounds, then each candidate, fastest there first, checked unless it was
/// clearly slower than a backend checked before it (the rules: strategy/detail/screening.hpp).

#include "aitune/core/backend.hpp"
#include "aitune/core/measure/detail/caller_pool.hpp"
#include "aitune/core/measure/detail/measurement.hpp"
#include "aitune/core/measure/detail/race.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/stats/paired_rounds.hpp"
#include "aitune/core/strategy/detail/flow_parts.hpp"
#include "aitune/core/strategy/detail/guarded_calls.hpp"
#include "aitune/core/strategy/detail/screening.hpp"
#include "aitune/core/strategy/detail/tuning_values.hpp"
#include "aitune/core/text/enum_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::detail {

template <Backend B, Timer T>
class ScreeningStep {
 public:
  explicit ScreeningStep(FlowParts<B, T> parts) : parts_(parts) {}

  /// `waiting`'s candidates, built and not yet checked, and its baseline in a few interleaved
  /// rounds; then each candidate, fastest there first, checked by `check(backend, row)` unless it
  /// was clearly slower than a backend checked before it (or the baseline), which screens it out.
  /// `waiting` keeps the checked ones, in list order (a near tie in the race goes to the earlier
  /// listed), with the screen's time added to what each has spent.
  template <class Check>
  void screen_and_check(const TuneInputs<B>& in, const Reference<B>& reference, Waiting<B>& waiting,
                        TuneReport& report, Check check) {
    if (waiting.candidates.empty()) return;
    const std::size_t candidates = waiting.candidates.size();
    const double began_ms = parts_.timer.now_ms();
    const Measurement screen = run_screen(in, reference, waiting, report);
    const double screen_ms = parts_.timer.now_ms() - began_ms;
    const std::size_t screened_out =
        check_fastest_first(in, reference, screen, waiting, report, check);
    report.measurement.screening = fmt::format(
        "{} round(s) of {} backend(s), {} call(s) in {:.1f} s; {} of {} candidate(s) screened out "
        "(slower than a checked backend with confidence, by over {:g}x), the others checked "
        "fastest first",
        screen.rounds, screen.lanes.size(), total_calls_of(screen), screen_ms / 1000.0,
        screened_out, candidates, 1.0 + in.profiling.screening().margin());
  }

 private:
  /// The screen's interleaved rounds: a lane for `waiting`'s baseline (first, where it has one)
  /// and one for each of its candidates, in order.
  Measurement run_screen(const TuneInputs<B>& in, const Reference<B>& reference,
                         Waiting<B>& waiting, TuneReport& report) {
    std::optional<CallerPool> callers;
    if (in.profiling.callers() > 1) callers.emplace(in.profiling.callers());
    std::vector<Entrant> entrants = entrants_of(
        waiting, report, parts_.guard, in.samples, in.mix, in.profiling.candidate_time_budget_ms(),
        parts_.config.stop_token(), callers ? &*callers : nullptr);
    return parts_.guard.measured(entrants.size(), [&] {
      return LatencyRace<T>(screening_race(in.profiling.race(), in.profiling.screening()),
                            in.profiling.warmup(), screening_decision(parts_.config.decision()),
                            parts_.timer, parts_.log, reference.deadline_ms, {}, &in.mix)
          .run(entrants);
    });
  }

  /// Each of `waiting`'s candidates, fastest in `screen` first: screened out where it was
  /// clearly slower than a backend checked before it, else checked; `waiting` keeps those that
  /// pass, in list order. How many were screened out.
  template <class Check>
  std::size_t check_fastest_first(const TuneInputs<B>& in, const Reference<B>& reference,
                                  const Measurement& screen, Waiting<B>& waiting,
                                  TuneReport& report, Check& check) {
    const ScreeningConfig& screening = in.profiling.screening();
    // Only what was checked screens: the baseline (its outputs are the reference), then each
    // candidate as it passes.
    std::vector<const RoundSeries*> checked;
    std::vector<std::string_view> checked_names;
    const bool with_baseline = waiting.baseline.has_value();
    if (with_baseline && !screen.lanes[0].failure) {
      checked.push_back(&screen.lanes[0].rounds);
      checked_names.push_back(report.baseline->backend);
    }
    const std::size_t first = with_baseline ? 1 : 0;
    std::vector<Prepared<B>> built = std::exchange(waiting.candidates, {});
    std::vector<std::size_t> order(built.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return screened_median(screen.lanes[first + a].rounds) <
             screened_median(screen.lanes[first + b].rounds);
    });
    const double level = screening_level(parts_.config.decision(), in.profiling.race());
    std::size_t screened_out = 0;
    for (const std::size_t i : order) {
      stop_point(parts_.config.stop_token());
      Prepared<B>& candidate = built[i];
      const Lane& lane = screen.lanes[first + i];
      CandidateReport& row = report.candidates[candidate.index];
      candidate.spent_ms += lane.time_ms;
      const auto by = screened_out_by(lane.rounds, checked, level, screening.margin());
      if (lane.failure) {
        row.status = CandidateStatus::measure_failed;
        row.reason = "failed while screened: " + *lane.failure;
      } else if (by) {
        row.status = CandidateStatus::screened_out;
        row.reason = screened_out_reason(*by, checked_names[by->checked], screening.margin());
        ++screened_out;
      } else if (parts_.timer.now_ms() > reference.deadline_ms) {
        row.status = CandidateStatus::skipped;
        row.reason = "not checked: the tuning's time budget was spent";
      } else {
        const double start_ms = parts_.timer.now_ms();
        const bool passed = check(candidate.backend, row);
        candidate.spent_ms += parts_.timer.now_ms() - start_ms;
        if (passed && candidate.spent_ms > in.profiling.candidate_time_budget_ms()) {
          fail(row, PrepareStep::budget, over_budget(candidate.spent_ms));
        } else if (passed) {
          checked.push_back(&lane.rounds);
          checked_names.push_back(row.backend);
          waiting.candidates.push_back(std::move(candidate));
          continue;
        }
      }
      row.calls = lane.calls;
      row.tuning_time_ms = candidate.spent_ms;
      const std::string line =
          fmt::format("{}: {}: {}", row.backend, to_label(row.status), row.reason);
      row.status == CandidateStatus::screened_out ? parts_.log.info(2, line)
                                                  : parts_.log.warn(2, line);
      parts_.guard.release(candidate.backend);
    }
    std::sort(waiting.candidates.begin(), waiting.candidates.end(),
              [](const Prepared<B>& a, const Prepared<B>& b) { return a.index < b.index; });
    return screened_out;
  }

  FlowParts<B, T> parts_;
};

}  // namespace aitune::detail
