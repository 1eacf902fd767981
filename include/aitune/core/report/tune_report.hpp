// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning report's data: every backend with its status, reason, latency statistics and
/// speedup, the baseline, the selection and how it was measured. Renderers: report/table.hpp
/// (people), report/json.hpp (programs), report/markdown.hpp and report/svg.hpp.

#include "aitune/core/decision/accuracy_budget.hpp"
#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/measure/memory_use.hpp"
#include "aitune/core/measure/race_config.hpp"
#include "aitune/core/measure/stop_reason.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/core/report/backend_identity.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/stats/paired_rounds.hpp"
#include "aitune/core/stats/ratio.hpp"
#include "aitune/core/text/enum_text.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune {

/// What became of one backend in a tuning.
enum class CandidateStatus {
  ok,               ///< built, checked and measured
  build_failed,     ///< describe(), key() or build() failed
  incorrect,        ///< its outputs failed the correctness check
  measure_failed,   ///< it failed while measured, or went over its own time budget
  skipped,          ///< never tried or never measured: the tuning's budget or race ended first
  activate_failed,  ///< chosen, but its activate() threw when it was to be handed back
  /// built and timed in the screening, then clearly slower than a checked backend: never checked
  /// or raced (ProfilingConfig::set_screening)
  screened_out
};

[[nodiscard]] constexpr EnumText enum_text(CandidateStatus status) noexcept {
  switch (status) {
    case CandidateStatus::ok: return {"ok", "ok"};
    case CandidateStatus::build_failed: return {"build_failed", "build failed"};
    case CandidateStatus::incorrect: return {"incorrect", "incorrect"};
    case CandidateStatus::measure_failed: return {"measure_failed", "measure failed"};
    case CandidateStatus::skipped: return {"skipped", "skipped"};
    case CandidateStatus::activate_failed: return {"activate_failed", "activate failed"};
    case CandidateStatus::screened_out: return {"screened_out", "screened out"};
  }
  return {};
}

/// The noise of a measurement on a machine busy with other work (strategy/detail/busy_machine.hpp):
/// its figures and what to try.
struct BusyMachine {
  /// The race ended on a budget or its looks and kept the baseline: too busy to decide. False:
  /// it decided, and its latencies are a busy machine's.
  bool undecided = false;
  double baseline_spread = 0.0;        ///< the baseline's p90 / median over its timed calls
  double baseline_tail = 0.0;          ///< the baseline's p99 / median
  double baseline_cv = 0.0;            ///< the baseline's coefficient of variation
  std::optional<double> ratio_span{};  ///< the best candidate's ratio interval, high / low
  std::string text{};                  ///< for people: the figures and what to try
};

/// How the measurement went.
/// The race's steady-state final (RaceConfig::set_steady_final): the finalists it timed as a
/// server calls them, and the one it selected.
struct SteadyFinalReport {
  std::string settings;                ///< RaceConfig::describe_final()
  std::vector<std::string> finalists;  ///< the race's leader first
  std::string pick;                    ///< the finalist it selected
  std::size_t rounds = 0;              ///< rounds it ran
  std::string cut_short{};             ///< why it stopped early; empty when it ran in full
};

/// One shape of the samples a tuning decided on (core/measure/sample_mix.hpp).
struct ShapeShare {
  std::string shape;    ///< aitune::sample_shape's text
  double weight = 0.0;  ///< its share of the timed traffic; 0: checked, not timed
  std::size_t samples = 0;
};

struct MeasurementReport {
  Schedule schedule = Schedule::interleaved;
  DecisionRule decision_rule = DecisionRule::confident_median;
  std::size_t rounds = 0;
  int looks = 0;
  std::size_t calls = 0;  ///< every call made to measure, warm-up included
  StopReason stop_reason = StopReason::not_measured;
  std::string stop_detail{};  ///< the stop reason for people, with its figures
  double confidence = 0.0;    ///< two-sided level of the intervals the decision used
  /// Set when the baseline's calls say the machine was busy with other work.
  std::optional<BusyMachine> busy{};
  std::optional<SteadyFinalReport> steady_final{};  ///< when the race ran one
  /// The screening before the checks, for people, when one ran ("6 rounds, 540 calls: 3 of 8
  /// candidates screened out"); empty when none did.
  std::string screening{};
  /// The server's load it was measured at (ProfilingConfig::set_callers): each timed call was
  /// this many calls at once, its latency the time until the last ended; 1: one call at a time.
  int callers = 1;
  /// The samples' shapes and weights, when several shapes were timed or some samples were
  /// checked only: each row's latency is then the weighted mean of its per-shape medians
  /// (CandidateReport::shape_medians_ms, in the order of the timed shapes here). Empty: one shape.
  std::vector<ShapeShare> shapes{};
  /// The input shapes the tuned module serves, when it serves a range ("input_ids [1, 8..256]");
  /// empty: the tuned shapes (or, for a model that takes any, their ranks).
  std::string serves{};
};

/// One backend as the report shows it (a candidate, or the baseline).
struct CandidateReport {
  std::string backend;  ///< describe()
  std::string key;      ///< key()
  CandidateStatus status = CandidateStatus::ok;
  std::string reason{};                   ///< why it failed; empty when ok
  std::optional<LatencyStats> latency{};  ///< milliseconds; absent when not measured
  /// The host clock's view of the same calls, when a device clock (CUDA events) timed them.
  std::optional<LatencyStats> host_latency{};
  std::optional<double> speedup{};           ///< baseline latency / this latency
  std::optional<RatioReport> vs_baseline{};  ///< paired ratio to the baseline, interleaved only
  /// Its latency relative to the selected backend's (1 for the selected itself): the paired
  /// ratio over the rounds both ran, with its interval; measured apart, the medians' ratio (no
  /// rounds, no interval). What the race decided on: the table orders by it.
  std::optional<RatioReport> vs_selected{};
  /// Its block value per round (the interleaved schedule; NaN where it did not race): what
  /// vs_selected pairs. Not in the JSON.
  RoundSeries rounds{};
  std::size_t calls = 0;  ///< calls made to measure it
  /// Its median in the race's steady-state final, timed as a server calls it (a finalist only);
  /// `latency` is what the race measured, interleaved with the others.
  std::optional<double> steady_median_ms{};
  /// Its median at each shape timed (MeasurementReport::shapes, the timed ones in order), when
  /// several were: its latency's median is theirs weighted.
  std::vector<double> shape_medians_ms{};
  std::string note{};  ///< e.g. why it left the race early
  /// The graph it runs, shared with its variants in other precisions (aitune::graph_of); empty:
  /// a graph of its own. Not in the JSON.
  std::string graph{};
  /// What its key says, as named fields (aitune::identity_of; empty: it says nothing).
  BackendIdentity identity{};
  /// The precision it computes in, as its correctness check said (none when not checked).
  std::optional<Precision> precision{};
  bool reduced_precision = false;  ///< lower than the baseline's
  /// How it was quantised ("int8"), as its correctness check said; empty: not quantised.
  std::string quantization{};
  /// Per output, its worst error as a fraction of the tolerance, over every sample (empty
  /// when it was not checked against the baseline), and what an accuracy budget measures.
  std::vector<OutputAccuracy> accuracy{};
  /// The accuracy budget judged it (a reduced-precision candidate, under a budget) instead of its
  /// tolerance.
  bool judged_by_budget = false;
  /// Its figures against the accuracy budget, when the budget judged it ("output: cosine
  /// 0.999871 >= 0.999"); when outside, the reason says which measure failed and by how much.
  std::string accuracy_verdict{};
  /// The memory it took while it was built and checked (absent when not watched).
  std::optional<MemoryUse> memory{};
  bool selected = false;
  double tuning_time_ms = 0.0;  ///< time spent building, checking and measuring it
  /// Every timed call the statistics were computed from, in milliseconds, in the order timed
  /// (empty when not measured). In the JSON only when asked for (ReportJsonOptions).
  std::vector<double> samples_ms{};
};

/// Where a decision came from when it was taken from a tuning cache instead of measured now.
struct CacheHit {
  std::string file;            ///< the cache file
  std::string created;         ///< when the decision was measured and stored (UTC, ISO 8601)
  double check_time_ms = 0.0;  ///< building and checking the cached choice now
  /// It was checked against the baseline's outputs stored with the decision (the baseline was
  /// not built); false: against the baseline, built again.
  bool stored_reference = false;
};

struct TuneReport {
  std::string strategy;
  std::string module;
  std::optional<CandidateReport> baseline{};
  std::vector<CandidateReport> candidates{};
  std::string selected{};      ///< description of the selected backend
  std::string selected_key{};  ///< its key
  /// Its identity (aitune::identity_of): what the key says, field by field.
  BackendIdentity selected_identity{};
  bool baseline_selected = false;
  std::string decision{};  ///< why the selected backend was selected, in one sentence
  MeasurementReport measurement{};
  double tuning_time_ms = 0.0;
  /// The accuracy budget reduced-precision candidates were judged by (AccuracyBudget::describe);
  /// empty: none, every candidate was held to its tolerance.
  std::string accuracy_budget{};
  /// The first samples outputs were checked on, when fewer than were given (the baseline's
  /// pass over all of them would not fit half the time budget); none: all of them.
  std::optional<std::size_t> checked_samples{};
  /// Set when the decision (and every figure above) came from a tuning cache: the selected
  /// backend was rebuilt and checked against the baseline's outputs now, not measured.
  std::optional<CacheHit> cache_hit{};

  /// The candidate whose description is `backend` (the first, if several), or null.
  [[nodiscard]] const CandidateReport* find(std::string_view backend) const {
    for (const auto& candidate : candidates) {
      if (candidate.backend == backend) return &candidate;
    }
    return nullptr;
  }

  [[nodiscard]] const CandidateReport* selected_candidate() const {
    for (const auto& candidate : candidates) {
      if (candidate.selected) return &candidate;
    }
    return nullptr;
  }
  [[nodiscard]] CandidateReport* selected_candidate() {
    return const_cast<CandidateReport*>(std::as_const(*this).selected_candidate());
  }

  /// Every call made to measure the baseline and the candidates (warm-up included).
  [[nodiscard]] std::size_t total_calls() const {
    std::size_t calls = baseline ? baseline->calls : 0;
    for (const auto& candidate : candidates)
      calls += candidate.calls;
    return calls;
  }

  /// Whether there were candidates and not one of them came through (status ok).
  /// No candidate is ok, and none was screened out (which is a measurement, not a failure).
  [[nodiscard]] bool every_candidate_failed() const {
    return !candidates.empty() &&
           std::none_of(candidates.begin(), candidates.end(), [](const CandidateReport& c) {
             return c.status == CandidateStatus::ok || c.status == CandidateStatus::screened_out;
           });
  }
};

/// What `row` computes in, for people: its quantisation ("int8") where it was quantised, else its
/// precision ("bf16"); empty when its check did not say.
[[nodiscard]] inline std::string computed_in(const CandidateReport& row) {
  if (!row.quantization.empty()) return row.quantization;
  return row.precision ? std::string(to_string(*row.precision)) : std::string();
}

/// The output of `row` that came closest to failing its correctness check, or null when it was
/// not checked against the baseline.
[[nodiscard]] inline const OutputAccuracy* worst_accuracy(const CandidateReport& row) {
  const auto worst = std::max_element(row.accuracy.begin(), row.accuracy.end(),
                                      [](const OutputAccuracy& a, const OutputAccuracy& b) {
                                        return a.worst_error_ratio < b.worst_error_ratio;
                                      });
  return worst == row.accuracy.end() ? nullptr : &*worst;
}

}  // namespace aitune
