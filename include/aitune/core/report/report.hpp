// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning report: every candidate with its status, reason, latency statistics and
/// speedup, plus the baseline and the selection. Rendered as a table for people
/// (render_table) and as JSON for programs (to_json).

#include "aitune/core/customization.hpp"
#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/measure/measurement.hpp"
#include "aitune/core/measure/memory_use.hpp"
#include "aitune/core/measure/race_config.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/stats/ratio.hpp"
#include "aitune/core/text/format.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  bool baseline_selected = false;
  std::string decision{};  ///< why the selected backend was selected, in one sentence
  MeasurementReport measurement{};
  double tuning_time_ms = 0.0;
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

  /// Whether there were candidates and not one of them came through (status ok).
  [[nodiscard]] bool every_candidate_failed() const {
    return !candidates.empty() &&
           std::none_of(candidates.begin(), candidates.end(),
                        [](const CandidateReport& c) { return c.status == CandidateStatus::ok; });
  }
};

/// The version of the JSON report's layout (README.md, "JSON report"). 2 added schema_version,
/// samples_ms and cache_hit.
inline constexpr int report_schema_version = 2;

/// What to_json includes beyond the summary.
struct ReportJsonOptions {
  bool raw_samples = false;  ///< every timed call of every backend (samples_ms)
};

namespace detail {

inline nlohmann::json stats_to_json(const LatencyStats& stats) {
  return {{"n", stats.n},     {"mean", stats.mean},     {"median", stats.median},
          {"p90", stats.p90}, {"p99", stats.p99},       {"min", stats.min},
          {"max", stats.max}, {"stddev", stats.stddev}, {"cv", stats.cv}};
}

/// Bytes, or null where the figure is absent.
inline nlohmann::json optional_bytes(const std::optional<std::int64_t>& bytes) {
  return bytes ? nlohmann::json(*bytes) : nlohmann::json(nullptr);
}

inline nlohmann::json memory_to_json(const MemoryUse& memory) {
  return {{"host_kept_bytes", optional_bytes(memory.host_kept_bytes)},
          {"host_peak_bytes", optional_bytes(memory.host_peak_bytes)},
          {"device_kept_bytes", optional_bytes(memory.device_kept_bytes)},
          {"device_peak_bytes", optional_bytes(memory.device_peak_bytes)}};
}

inline MemoryUse memory_from_json(const nlohmann::json& json) {
  const auto bytes = [&](const char* name) -> std::optional<std::int64_t> {
    const nlohmann::json& value = json.at(name);
    if (value.is_null()) return std::nullopt;
    return value.get<std::int64_t>();
  };
  return MemoryUse{bytes("host_kept_bytes"), bytes("host_peak_bytes"), bytes("device_kept_bytes"),
                   bytes("device_peak_bytes")};
}

inline nlohmann::json candidate_to_json(const CandidateReport& candidate,
                                        const ReportJsonOptions& options) {
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
  json["memory"] = candidate.memory ? memory_to_json(*candidate.memory) : nlohmann::json(nullptr);
  if (options.raw_samples) json["samples_ms"] = candidate.samples_ms;
  return json;
}

}  // namespace detail

/// The report as JSON. The schema is documented in README.md ("JSON report").
[[nodiscard]] inline nlohmann::json to_json(const TuneReport& report,
                                            const ReportJsonOptions& options = {}) {
  nlohmann::json json{{"schema_version", report_schema_version},
                      {"strategy", report.strategy},
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
  json["baseline"] = report.baseline ? detail::candidate_to_json(*report.baseline, options)
                                     : nlohmann::json(nullptr);
  json["candidates"] = nlohmann::json::array();
  for (const auto& candidate : report.candidates) {
    json["candidates"].push_back(detail::candidate_to_json(candidate, options));
  }
  json["cache_hit"] = nullptr;
  if (report.cache_hit) {
    json["cache_hit"] = {{"file", report.cache_hit->file},
                         {"created", report.cache_hit->created},
                         {"check_time_ms", report.cache_hit->check_time_ms},
                         {"stored_reference", report.cache_hit->stored_reference}};
  }
  return json;
}

namespace detail {

/// The enumerator of `E` whose to_string is `text`; throws Error otherwise.
template <class E, std::size_t N>
E enum_from_json(const nlohmann::json& text, const E (&values)[N], std::string_view what) {
  const auto name = text.get<std::string>();
  for (const E value : values) {
    if (to_string(value) == name) return value;
  }
  throw Error(fmt::format("unknown {} '{}' in a report", what, name));
}

inline std::optional<LatencyStats> stats_from_json(const nlohmann::json& json) {
  if (json.is_null()) return std::nullopt;
  LatencyStats stats;
  stats.n = json.at("n").get<std::size_t>();
  stats.mean = json.at("mean").get<double>();
  stats.median = json.at("median").get<double>();
  stats.p90 = json.at("p90").get<double>();
  stats.p99 = json.at("p99").get<double>();
  stats.min = json.at("min").get<double>();
  stats.max = json.at("max").get<double>();
  stats.stddev = json.at("stddev").get<double>();
  stats.cv = json.at("cv").is_null() ? std::nan("") : json.at("cv").get<double>();
  return stats;
}

/// A JSON null read back as the infinity to_json wrote it for.
inline double bound_from_json(const nlohmann::json& json, double if_null) {
  return json.is_null() ? if_null : json.get<double>();
}

inline CandidateReport candidate_from_json(const nlohmann::json& json) {
  static constexpr CandidateStatus statuses[] = {CandidateStatus::ok, CandidateStatus::build_failed,
                                                 CandidateStatus::incorrect,
                                                 CandidateStatus::measure_failed};
  CandidateReport row;
  row.backend = json.at("backend").get<std::string>();
  row.key = json.at("key").get<std::string>();
  row.status = enum_from_json(json.at("status"), statuses, "status");
  row.reason = json.at("reason").get<std::string>();
  row.selected = json.at("selected").get<bool>();
  row.tuning_time_ms = json.at("tuning_time_ms").get<double>();
  row.latency = stats_from_json(json.at("latency_ms"));
  row.host_latency = stats_from_json(json.at("host_latency_ms"));
  if (!json.at("speedup").is_null()) row.speedup = json.at("speedup").get<double>();
  if (const nlohmann::json& r = json.at("vs_baseline"); !r.is_null()) {
    const double inf = std::numeric_limits<double>::infinity();
    row.vs_baseline =
        RatioReport{r.at("ratio").get<double>(), bound_from_json(r.at("ci_low"), -inf),
                    bound_from_json(r.at("ci_high"), inf), r.at("confidence").get<double>(),
                    r.at("paired_rounds").get<std::size_t>()};
  }
  row.calls = json.at("calls").get<std::size_t>();
  row.note = json.at("note").get<std::string>();
  if (!json.at("precision").is_null()) row.precision = json.at("precision").get<std::string>();
  row.reduced_precision = json.at("reduced_precision").get<bool>();
  if (json.at("accuracy").is_array()) {
    for (const nlohmann::json& output : json.at("accuracy")) {
      row.accuracy.push_back(
          OutputAccuracy{output.at("output").get<std::string>(),
                         bound_from_json(output.at("worst_error_ratio"),
                                         std::numeric_limits<double>::infinity())});
    }
  }
  // Reports written before the memory was watched have no "memory".
  if (const auto memory = json.find("memory"); memory != json.end() && !memory->is_null())
    row.memory = memory_from_json(*memory);
  if (json.contains("samples_ms"))
    row.samples_ms = json.at("samples_ms").get<std::vector<double>>();
  return row;
}

}  // namespace detail

/// A report read back from to_json's output (the tuning cache keeps reports so). Throws
/// aitune::Error, or nlohmann::json::exception, when `json` is not such a report.
[[nodiscard]] inline TuneReport report_from_json(const nlohmann::json& json) {
  static constexpr Schedule schedules[] = {Schedule::interleaved, Schedule::sequential};
  static constexpr DecisionRule rules[] = {DecisionRule::confident_median,
                                           DecisionRule::aitune_mean};
  static constexpr StopReason reasons[] = {
      StopReason::not_measured, StopReason::settled,      StopReason::looks_used,
      StopReason::fixed_rounds, StopReason::time_budget,  StopReason::round_budget,
      StopReason::call_budget,  StopReason::nothing_left, StopReason::stop_rule};
  if (!json.is_object() || json.value("schema_version", 0) != report_schema_version) {
    throw Error(fmt::format("not a report of schema {}", report_schema_version));
  }
  TuneReport report;
  report.strategy = json.at("strategy").get<std::string>();
  report.module = json.at("module").get<std::string>();
  report.selected = json.at("selected").get<std::string>();
  report.selected_key = json.at("selected_key").get<std::string>();
  report.baseline_selected = json.at("baseline_selected").get<bool>();
  report.decision = json.at("decision").get<std::string>();
  report.tuning_time_ms = json.at("tuning_time_ms").get<double>();
  const nlohmann::json& m = json.at("measurement");
  report.measurement.schedule = detail::enum_from_json(m.at("schedule"), schedules, "schedule");
  report.measurement.decision_rule =
      detail::enum_from_json(m.at("decision_rule"), rules, "decision rule");
  report.measurement.rounds = m.at("rounds").get<std::size_t>();
  report.measurement.looks = m.at("looks").get<int>();
  report.measurement.calls = m.at("calls").get<std::size_t>();
  report.measurement.stop_reason =
      detail::enum_from_json(m.at("stop_reason"), reasons, "stop reason");
  report.measurement.stop_detail = m.at("stop_detail").get<std::string>();
  report.measurement.confidence = m.at("confidence").get<double>();
  if (!json.at("baseline").is_null()) {
    report.baseline = detail::candidate_from_json(json.at("baseline"));
  }
  for (const nlohmann::json& candidate : json.at("candidates")) {
    report.candidates.push_back(detail::candidate_from_json(candidate));
  }
  if (const auto hit = json.find("cache_hit"); hit != json.end() && !hit->is_null()) {
    report.cache_hit =
        CacheHit{hit->at("file").get<std::string>(), hit->at("created").get<std::string>(),
                 hit->at("check_time_ms").get<double>(), hit->value("stored_reference", false)};
  }
  return report;
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

namespace detail {

/// What a cache hit's check compared the rebuilt choice with, for the table and the markdown.
[[nodiscard]] inline std::string_view checked_against(const CacheHit& hit) {
  return hit.stored_reference ? ", against the baseline's outputs stored with the decision" : "";
}

/// The cells of one backend's row that the table and the markdown share (the latencies apart:
/// the table gives each its unit, the markdown names it in the header). "-" where there is
/// nothing to show.
struct RowCells {
  std::string cv;            ///< coefficient of variation, in %
  std::string paired_ratio;  ///< the paired ratio to the baseline with its interval
  std::string speedup;
  std::string calls;
  std::string precision;
  std::string error;   ///< the worst output's error as a share of its tolerance, in %
  std::string memory;  ///< kept / peak MiB, the device's where the report has device figures
};

/// Whether the memory column shows device memory (some row has device figures) or the host's.
inline bool memory_on_device(const TuneReport& report) {
  const auto on_device = [](const CandidateReport& row) {
    return row.memory && row.memory->has_device();
  };
  return (report.baseline && on_device(*report.baseline)) ||
         std::any_of(report.candidates.begin(), report.candidates.end(), on_device);
}

inline std::string memory_header(const TuneReport& report) {
  return memory_on_device(report) ? "GPU MiB kept/peak" : "MiB kept/peak";
}

inline std::string format_mib(std::int64_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  return format_fixed(mib, std::abs(mib) < 10.0 ? 1 : 0);
}

inline std::string memory_cell(const CandidateReport& row, bool on_device) {
  if (!row.memory) return "-";
  const MemoryUse& m = *row.memory;
  const auto& kept = on_device ? m.device_kept_bytes : m.host_kept_bytes;
  const auto& peak = on_device ? m.device_peak_bytes : m.host_peak_bytes;
  if (!kept && !peak) return "-";
  return fmt::format("{} / {}", kept ? format_mib(*kept) : "-", peak ? format_mib(*peak) : "-");
}

inline RowCells row_cells(const CandidateReport& row, bool memory_on_device) {
  const OutputAccuracy* worst = worst_accuracy(row);
  return RowCells{
      row.latency && std::isfinite(row.latency->cv)
          ? format_fixed(row.latency->cv * 100.0, 1) + " %"
          : std::string("-"),
      row.vs_baseline
          ? format_ratio(row.vs_baseline->ratio, row.vs_baseline->low, row.vs_baseline->high)
          : std::string("-"),
      row.speedup ? format_speedup(*row.speedup) : std::string("-"),
      row.calls > 0 ? fmt::format("{}", row.calls) : std::string("-"),
      row.precision.empty() ? std::string("-") : row.precision,
      worst ? format_fixed(worst->worst_error_ratio * 100.0, 0) + " %" : std::string("-"),
      memory_cell(row, memory_on_device)};
}

/// The ratio column's header: with the level of its intervals when the decision used some.
inline std::string ratio_header(const TuneReport& report) {
  return report.measurement.confidence > 0.0
             ? fmt::format("ratio [{} CI]", format_level(report.measurement.confidence))
             : std::string("ratio");
}

}  // namespace detail

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

  std::string out =
      fmt::format("{} - module '{}' (batch size 1)\n", report.strategy, report.module);
  constexpr std::string_view row_format =
      "{:<{}}{:<10}{:<16}{:>12}{:>12}{:>8}{:>28}{:>9}{:>7}{:>11}{:>11}{:>19}\n";
  const bool memory_on_device = detail::memory_on_device(report);
  out += fmt::format(row_format, "backend", name_width, "role", "status", "median", "p90", "cv",
                     detail::ratio_header(report), "speedup", "calls", "precision", "error/tol",
                     detail::memory_header(report));
  const auto add_row = [&](std::string_view role, const CandidateReport& row) {
    const auto cell = [&](double LatencyStats::*field) {
      return row.latency ? format_ms((*row.latency).*field) : std::string("-");
    };
    const detail::RowCells cells = detail::row_cells(row, memory_on_device);
    // Measured apart from the baseline (no paired rounds): the ratio of the medians.
    const std::string ratio =
        !row.vs_baseline && row.speedup ? format_fixed(1.0 / *row.speedup) : cells.paired_ratio;
    out += fmt::format(row_format, fmt::format("{}{}", row.selected ? "* " : "", row.backend),
                       name_width, role, to_string(row.status), cell(&LatencyStats::median),
                       cell(&LatencyStats::p90), cells.cv, ratio, cells.speedup, cells.calls,
                       cells.precision, cells.error, cells.memory);
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
  if (report.cache_hit) {
    out += fmt::format("from the tuning cache '{}' (measured {}): the selected backend was rebuilt "
                       "and passed its correctness check again in {:.1f} s{}; nothing was "
                       "measured now\n",
                       report.cache_hit->file, report.cache_hit->created,
                       report.cache_hit->check_time_ms / 1000.0,
                       detail::checked_against(*report.cache_hit));
  }
  out += fmt::format("selected: {}{}\n", report.selected.empty() ? "none" : report.selected,
                     report.baseline_selected ? " (the baseline)" : "");
  return out;
}

}  // namespace aitune
