// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning report: every candidate with its status, reason, latency statistics and
/// speedup, plus the baseline and the selection. Rendered as a table for people
/// (render_table) and as JSON for programs (to_json).

#include "aitune/core/format.hpp"
#include "aitune/core/latency_stats.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
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

/// One backend as the report shows it (a candidate, or the baseline).
struct CandidateReport {
  std::string backend;  ///< describe()
  std::string key;      ///< key()
  CandidateStatus status = CandidateStatus::ok;
  std::string reason{};                   ///< why it failed; empty when ok
  std::optional<LatencyStats> latency{};  ///< milliseconds; absent when not measured
  std::optional<double> speedup{};        ///< baseline latency / this latency
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
  double tuning_time_ms = 0.0;

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
  json["speedup"] =
      candidate.speedup ? nlohmann::json(*candidate.speedup) : nlohmann::json(nullptr);
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
                      {"tuning_time_ms", report.tuning_time_ms}};
  json["baseline"] =
      report.baseline ? detail::candidate_to_json(*report.baseline) : nlohmann::json(nullptr);
  json["candidates"] = nlohmann::json::array();
  for (const auto& candidate : report.candidates) {
    json["candidates"].push_back(detail::candidate_to_json(candidate));
  }
  return json;
}

/// The report as a table for people: one row per backend, then the reasons of the failures.
[[nodiscard]] inline std::string render_table(const TuneReport& report) {
  std::size_t name_width = 7;  // "backend"
  const auto widen = [&](const CandidateReport& row) {
    name_width = std::max(name_width, row.backend.size() + (row.selected ? 2 : 0));
  };
  if (report.baseline) widen(*report.baseline);
  for (const auto& candidate : report.candidates)
    widen(candidate);
  name_width += 2;

  std::string out =
      fmt::format("{} - module '{}' (batch size 1)\n", report.strategy, report.module);
  constexpr std::string_view row_format = "{:<{}}{:<10}{:<16}{:>12}{:>12}{:>12}{:>9}{:>9}\n";
  out += fmt::format(row_format, "backend", name_width, "role", "status", "median", "p90", "mean",
                     "cv", "speedup");
  const auto add_row = [&](std::string_view role, const CandidateReport& row) {
    const auto cell = [&](double LatencyStats::*field) {
      return row.latency ? format_ms((*row.latency).*field) : std::string("-");
    };
    out += fmt::format(row_format, fmt::format("{}{}", row.selected ? "* " : "", row.backend),
                       name_width, role, to_string(row.status), cell(&LatencyStats::median),
                       cell(&LatencyStats::p90), cell(&LatencyStats::mean),
                       row.latency ? fmt::format("{:.1f} %", row.latency->cv * 100.0)
                                   : std::string("-"),
                       row.speedup ? format_speedup(*row.speedup) : std::string("-"));
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
  };
  if (report.baseline) note("baseline", *report.baseline);
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    note(fmt::format("#{}", i + 1), report.candidates[i]);
  }
  if (!notes.empty()) out += "reasons:\n" + notes;
  out += fmt::format("selected: {}{}\n", report.selected,
                     report.baseline_selected ? " (the baseline)" : "");
  return out;
}

}  // namespace aitune
