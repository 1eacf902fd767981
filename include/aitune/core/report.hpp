// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning report: every candidate with its status, reason, latency statistics and
/// speedup, plus the baseline and the selection. Rendered as a table for people
/// (render_table) and as JSON for programs (to_json).

#include "aitune/core/customization.hpp"
#include "aitune/core/decision_config.hpp"
#include "aitune/core/format.hpp"
#include "aitune/core/latency_stats.hpp"
#include "aitune/core/measurement.hpp"
#include "aitune/core/race_config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aitune {

enum class CandidateStatus { ok, build_failed, incorrect, measure_failed };

[[nodiscard]] constexpr std::string_view to_string(CandidateStatus status) noexcept {
  switch (status) {
    case CandidateStatus::ok: return "ok";
    case CandidateStatus::build_failed: return "build failed";
    case CandidateStatus::incorrect: return "incorrect";
    case CandidateStatus::measure_failed: return "measure failed";
  }
  return "unknown";
}

/// A backend's latency relative to the baseline's: the median of the paired per-round ratios
/// (this / baseline) and its sign-test interval.
struct RatioReport {
  double ratio = 1.0;
  double low = 0.0;
  double high = 0.0;
  double confidence = 0.0;  ///< two-sided level of [low, high]
  std::size_t rounds = 0;   ///< paired rounds behind it
};

/// How the measurement went.
struct MeasurementReport {
  Schedule schedule = Schedule::interleaved;
  DecisionRule decision_rule = DecisionRule::confident_median;
  std::size_t rounds = 0;
  int looks = 0;
  std::size_t calls = 0;  ///< every call made to measure, warm-up included
  StopReason stop_reason = StopReason::not_measured;
  std::string stop_detail{};  ///< the stop reason for people, with its figures
  double confidence = 0.0;    ///< two-sided level of the intervals the decision used
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
  std::size_t calls = 0;                     ///< calls made to measure it
  std::string note{};                        ///< e.g. why it left the race early
  /// The precision it computes in, as its correctness check said (empty when not checked).
  std::string precision{};
  bool reduced_precision = false;  ///< lower than the baseline's
  /// Per output, its worst error as a fraction of the tolerance, over every sample (empty
  /// when it was not checked against the baseline).
  std::vector<OutputAccuracy> accuracy{};
  bool selected = false;
  double tuning_time_ms = 0.0;  ///< time spent building, checking and measuring it
};

struct TuneReport {
  std::string strategy;
  std::string module;
  std::optional<CandidateReport> baseline{};
  std::vector<CandidateReport> candidates{};
  std::string selected{};      ///< description of the selected backend
  std::string selected_key{};  ///< its key
  bool baseline_selected = false;
  std::string decision{};  ///< why the selected backend was selected, in one sentence
  MeasurementReport measurement{};
  double tuning_time_ms = 0.0;

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
};

namespace detail {

inline nlohmann::json stats_to_json(const LatencyStats& stats) {
  return {{"n", stats.n},     {"mean", stats.mean},     {"median", stats.median},
          {"p90", stats.p90}, {"p99", stats.p99},       {"min", stats.min},
          {"max", stats.max}, {"stddev", stats.stddev}, {"cv", stats.cv}};
}

inline nlohmann::json candidate_to_json(const CandidateReport& candidate) {
  nlohmann::json json{
      {"backend", candidate.backend},          {"key", candidate.key},
      {"status", to_string(candidate.status)}, {"reason", candidate.reason},
      {"selected", candidate.selected},        {"tuning_time_ms", candidate.tuning_time_ms}};
  json["latency_ms"] =
      candidate.latency ? stats_to_json(*candidate.latency) : nlohmann::json(nullptr);
  json["host_latency_ms"] =
      candidate.host_latency ? stats_to_json(*candidate.host_latency) : nlohmann::json(nullptr);
  json["speedup"] =
      candidate.speedup ? nlohmann::json(*candidate.speedup) : nlohmann::json(nullptr);
  json["vs_baseline"] = nullptr;
  if (candidate.vs_baseline) {
    const RatioReport& r = *candidate.vs_baseline;
    const auto bound = [](double value) {  // too few rounds for this level: no bound (null)
      return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
    };
    json["vs_baseline"] = {{"ratio", r.ratio},
                           {"ci_low", bound(r.low)},
                           {"ci_high", bound(r.high)},
                           {"confidence", r.confidence},
                           {"paired_rounds", r.rounds}};
  }
  json["calls"] = candidate.calls;
  json["note"] = candidate.note;
  json["precision"] =
      candidate.precision.empty() ? nlohmann::json(nullptr) : nlohmann::json(candidate.precision);
  json["reduced_precision"] = candidate.reduced_precision;
  json["accuracy"] = nullptr;
  if (!candidate.accuracy.empty()) {
    json["accuracy"] = nlohmann::json::array();
    for (const OutputAccuracy& output : candidate.accuracy) {
      const double ratio = output.worst_error_ratio;  // infinite: an exact output was not
      json["accuracy"].push_back(
          {{"output", output.output},
           {"worst_error_ratio", std::isfinite(ratio) ? nlohmann::json(ratio) : nullptr}});
    }
  }
  return json;
}

}  // namespace detail

/// The report as JSON. The schema is documented in README.md ("JSON report").
[[nodiscard]] inline nlohmann::json to_json(const TuneReport& report) {
  nlohmann::json json{{"strategy", report.strategy},
                      {"module", report.module},
                      {"selected", report.selected},
                      {"selected_key", report.selected_key},
                      {"baseline_selected", report.baseline_selected},
                      {"decision", report.decision},
                      {"tuning_time_ms", report.tuning_time_ms}};
  const MeasurementReport& m = report.measurement;
  json["measurement"] = {{"schedule", to_string(m.schedule)},
                         {"decision_rule", to_string(m.decision_rule)},
                         {"rounds", m.rounds},
                         {"looks", m.looks},
                         {"calls", m.calls},
                         {"stop_reason", to_string(m.stop_reason)},
                         {"stop_detail", m.stop_detail},
                         {"confidence", m.confidence}};
  json["baseline"] =
      report.baseline ? detail::candidate_to_json(*report.baseline) : nlohmann::json(nullptr);
  json["candidates"] = nlohmann::json::array();
  for (const auto& candidate : report.candidates) {
    json["candidates"].push_back(detail::candidate_to_json(candidate));
  }
  return json;
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

/// The report as a table for people: one row per backend (median, p90, coefficient of
/// variation, the paired ratio to the baseline with its interval, speedup, calls, the precision
/// it computes in and its worst output error as a share of the tolerance), then the reasons and
/// notes, the measurement, and the decision.
[[nodiscard]] inline std::string render_table(const TuneReport& report) {
  std::size_t name_width = 7;  // "backend"
  const auto widen = [&](const CandidateReport& row) {
    name_width = std::max(name_width, row.backend.size() + (row.selected ? 2 : 0));
  };
  if (report.baseline) widen(*report.baseline);
  for (const auto& candidate : report.candidates)
    widen(candidate);
  name_width += 2;

  const bool with_ratios = report.measurement.confidence > 0.0;
  std::string out =
      fmt::format("{} - module '{}' (batch size 1)\n", report.strategy, report.module);
  constexpr std::string_view row_format =
      "{:<{}}{:<10}{:<16}{:>12}{:>12}{:>8}{:>28}{:>9}{:>7}{:>11}{:>11}\n";
  out += fmt::format(row_format, "backend", name_width, "role", "status", "median", "p90", "cv",
                     with_ratios
                         ? fmt::format("ratio [{} CI]", format_level(report.measurement.confidence))
                         : std::string("ratio"),
                     "speedup", "calls", "precision", "error/tol");
  const auto add_row = [&](std::string_view role, const CandidateReport& row) {
    const auto cell = [&](double LatencyStats::*field) {
      return row.latency ? format_ms((*row.latency).*field) : std::string("-");
    };
    std::string ratio = "-";
    if (row.vs_baseline) {
      ratio = format_ratio(row.vs_baseline->ratio, row.vs_baseline->low, row.vs_baseline->high);
    } else if (row.speedup) {
      ratio = format_fixed(1.0 / *row.speedup);
    }
    const OutputAccuracy* worst = worst_accuracy(row);
    out += fmt::format(
        row_format, fmt::format("{}{}", row.selected ? "* " : "", row.backend), name_width, role,
        to_string(row.status), cell(&LatencyStats::median), cell(&LatencyStats::p90),
        row.latency && std::isfinite(row.latency->cv)
            ? format_fixed(row.latency->cv * 100.0, 1) + " %"
            : std::string("-"),
        ratio, row.speedup ? format_speedup(*row.speedup) : std::string("-"),
        row.calls > 0 ? fmt::format("{}", row.calls) : std::string("-"),
        row.precision.empty() ? std::string("-") : row.precision,
        worst ? format_fixed(worst->worst_error_ratio * 100.0, 0) + " %" : std::string("-"));
  };
  if (report.baseline) add_row("baseline", *report.baseline);
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    add_row(fmt::format("#{}", i + 1), report.candidates[i]);
  }

  std::string notes;
  const auto note = [&](std::string_view label, const CandidateReport& row) {
    if (!row.reason.empty()) {
      notes +=
          fmt::format("  {} {}: {}: {}\n", label, row.backend, to_string(row.status), row.reason);
    }
    if (!row.note.empty()) notes += fmt::format("  {} {}: {}\n", label, row.backend, row.note);
  };
  if (report.baseline) note("baseline", *report.baseline);
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    note(fmt::format("#{}", i + 1), report.candidates[i]);
  }
  if (!notes.empty()) out += "notes:\n" + notes;
  const MeasurementReport& m = report.measurement;
  switch (m.schedule) {
    case Schedule::interleaved:
      out += fmt::format("measurement: interleaved schedule, {} rule, {} rounds, {} looks, {} "
                         "calls; {}\n",
                         to_string(m.decision_rule), m.rounds, m.looks, m.calls,
                         m.stop_detail.empty() ? to_string(m.stop_reason) : m.stop_detail);
      break;
    case Schedule::sequential:
      out += fmt::format("measurement: sequential schedule, {} rule, {} calls\n",
                         to_string(m.decision_rule), m.calls);
      break;
  }
  if (!report.decision.empty()) out += fmt::format("why: {}\n", report.decision);
  out += fmt::format("selected: {}{}\n", report.selected.empty() ? "none" : report.selected,
                     report.baseline_selected ? " (the baseline)" : "");
  return out;
}

}  // namespace aitune
