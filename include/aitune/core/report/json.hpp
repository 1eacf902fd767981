// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The report as JSON for programs (to_json), and read back (report_from_json). The schema is
/// documented in docs/command-line.md ("JSON report").

#include "aitune/core/error.hpp"
#include "aitune/core/report/detail/json_fields.hpp"
#include "aitune/core/report/tune_report.hpp"
#include "aitune/core/text/enum_text.hpp"
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
#include <variant>
#include <vector>

namespace aitune {

/// The version of the JSON report's layout (docs/command-line.md, "JSON report"). 2 added
/// schema_version, samples_ms and cache_hit; 3 writes every enum as a snake-case token
/// ("build_failed", "confident_median") where 2 wrote labels ("build failed"), and adds the
/// statuses "skipped" and "activate_failed". report_from_json reads 2 and 3.
inline constexpr int report_schema_version = 3;

/// What to_json includes beyond the summary.
struct ReportJsonOptions {
  bool raw_samples = false;  ///< every timed call of every backend (samples_ms)
};

namespace detail {

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
  const auto ratio_json = [](const std::optional<RatioReport>& ratio) {
    if (!ratio) return nlohmann::json(nullptr);
    const auto bound = [](double value) {  // too few rounds for this level: no bound (null)
      return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
    };
    return nlohmann::json{{"ratio", ratio->ratio},
                          {"ci_low", bound(ratio->low)},
                          {"ci_high", bound(ratio->high)},
                          {"confidence", ratio->confidence},
                          {"paired_rounds", ratio->rounds}};
  };
  json["vs_baseline"] = ratio_json(candidate.vs_baseline);
  json["vs_selected"] = ratio_json(candidate.vs_selected);
  json["calls"] = candidate.calls;
  json["steady_median_ms"] = candidate.steady_median_ms
                                 ? nlohmann::json(*candidate.steady_median_ms)
                                 : nlohmann::json(nullptr);
  if (!candidate.shape_medians_ms.empty()) {
    json["shape_medians_ms"] = nlohmann::json::array();
    for (const double ms : candidate.shape_medians_ms)  // NaN: a shape it has no call of
      json["shape_medians_ms"].push_back(std::isnan(ms) ? nlohmann::json(nullptr)
                                                        : nlohmann::json(ms));
  }
  json["note"] = candidate.note;
  if (!candidate.identity.empty()) json["identity"] = identity_to_json(candidate.identity);
  json["precision"] = candidate.precision ? nlohmann::json(to_string(*candidate.precision))
                                          : nlohmann::json(nullptr);
  json["reduced_precision"] = candidate.reduced_precision;
  if (!candidate.quantization.empty()) json["quantization"] = candidate.quantization;
  json["accuracy"] = nullptr;
  if (!candidate.accuracy.empty()) {
    json["accuracy"] = nlohmann::json::array();
    for (const OutputAccuracy& output : candidate.accuracy) {
      const double ratio = output.worst_error_ratio;  // infinite: an exact output was not
      nlohmann::json entry{
          {"output", output.output},
          {"worst_error_ratio", std::isfinite(ratio) ? nlohmann::json(ratio) : nullptr}};
      // What an accuracy budget measures, where measured (NaN: an output broken there).
      const auto measure = [](const std::optional<double>& value) {
        return std::isfinite(*value) ? nlohmann::json(*value) : nlohmann::json("nan");
      };
      if (output.relative_error) entry["relative_error"] = measure(output.relative_error);
      if (output.cosine) entry["cosine"] = measure(output.cosine);
      if (output.top_k_rows > 0) {
        entry["top_k_agreed"] = output.top_k_agreed;
        entry["top_k_rows"] = output.top_k_rows;
      }
      json["accuracy"].push_back(std::move(entry));
    }
  }
  if (candidate.judged_by_budget) json["accuracy_verdict"] = candidate.accuracy_verdict;
  json["memory"] = candidate.memory ? memory_to_json(*candidate.memory) : nlohmann::json(nullptr);
  if (options.raw_samples) json["samples_ms"] = candidate.samples_ms;
  return json;
}

}  // namespace detail

/// The report as JSON. The schema is documented in docs/command-line.md ("JSON report").
[[nodiscard]] inline nlohmann::json to_json(const TuneReport& report,
                                            const ReportJsonOptions& options = {}) {
  nlohmann::json json{{"schema_version", report_schema_version},
                      {"strategy", report.strategy},
                      {"module", report.module},
                      {"selected", report.selected},
                      {"selected_key", report.selected_key},
                      {"selected_identity", detail::identity_to_json(report.selected_identity)},
                      {"baseline_selected", report.baseline_selected},
                      {"decision", report.decision},
                      {"tuning_time_ms", report.tuning_time_ms}};
  if (!report.accuracy_budget.empty()) json["accuracy_budget"] = report.accuracy_budget;
  json["checked_samples"] =
      report.checked_samples ? nlohmann::json(*report.checked_samples) : nlohmann::json(nullptr);
  const MeasurementReport& m = report.measurement;
  json["measurement"] = {{"schedule", to_string(m.schedule)},
                         {"decision_rule", to_string(m.decision_rule)},
                         {"rounds", m.rounds},
                         {"looks", m.looks},
                         {"calls", m.calls},
                         {"stop_reason", to_string(m.stop_reason)},
                         {"stop_detail", m.stop_detail},
                         {"confidence", m.confidence},
                         {"callers", m.callers},
                         {"busy", nullptr}};
  json["measurement"]["steady_final"] = nullptr;
  if (!m.shapes.empty()) {
    json["measurement"]["shapes"] = nlohmann::json::array();
    for (const ShapeShare& share : m.shapes) {
      json["measurement"]["shapes"].push_back(
          {{"shape", share.shape}, {"weight", share.weight}, {"samples", share.samples}});
    }
  }
  if (!m.serves.empty()) json["measurement"]["serves"] = m.serves;
  if (!m.screening.empty()) json["measurement"]["screening"] = m.screening;
  if (const auto& final = m.steady_final) {
    json["measurement"]["steady_final"] = {{"settings", final->settings},
                                           {"finalists", final->finalists},
                                           {"pick", final->pick},
                                           {"rounds", final->rounds},
                                           {"cut_short", final->cut_short}};
  }
  if (m.busy) {
    json["measurement"]["busy"] = {{"undecided", m.busy->undecided},
                                   {"baseline_p90_over_median", m.busy->baseline_spread},
                                   {"baseline_p99_over_median", m.busy->baseline_tail},
                                   {"baseline_cv", m.busy->baseline_cv},
                                   {"ratio_span", m.busy->ratio_span
                                                      ? nlohmann::json(*m.busy->ratio_span)
                                                      : nlohmann::json(nullptr)},
                                   {"text", m.busy->text}};
  }
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

inline CandidateReport candidate_from_json(const nlohmann::json& json, int schema) {
  CandidateReport row;
  row.backend = text_from_json(json.at("backend"));
  row.key = text_from_json(json.at("key"));
  row.status = enum_from_json<CandidateStatus>(json.at("status"), schema, "status");
  row.reason = text_from_json(json.at("reason"));
  row.selected = json.at("selected").get<bool>();
  row.tuning_time_ms = json.at("tuning_time_ms").get<double>();
  row.latency = stats_from_json(json.at("latency_ms"));
  row.host_latency = stats_from_json(json.at("host_latency_ms"));
  if (!json.at("speedup").is_null()) row.speedup = json.at("speedup").get<double>();
  const auto ratio_from_json = [](const nlohmann::json& r) -> std::optional<RatioReport> {
    if (r.is_null()) return std::nullopt;
    const double inf = std::numeric_limits<double>::infinity();
    return RatioReport{r.at("ratio").get<double>(), bound_from_json(r.at("ci_low"), -inf),
                       bound_from_json(r.at("ci_high"), inf), r.at("confidence").get<double>(),
                       count_from_json(r.at("paired_rounds"), "paired_rounds")};
  };
  row.vs_baseline = ratio_from_json(json.at("vs_baseline"));
  // Reports written before it was added have none.
  if (json.contains("vs_selected")) row.vs_selected = ratio_from_json(json.at("vs_selected"));
  row.calls = count_from_json(json.at("calls"), "a row's calls");
  // Absent before the steady-state final was added (one more optional field).
  if (const auto steady = json.find("steady_median_ms"); steady != json.end() && !steady->is_null())
    row.steady_median_ms = steady->get<double>();
  if (const auto shapes = json.find("shape_medians_ms"); shapes != json.end()) {
    for (const nlohmann::json& ms : *shapes)
      row.shape_medians_ms.push_back(ms.is_null() ? std::nan("") : ms.get<double>());
  }
  row.note = text_from_json(json.at("note"));
  if (const auto identity = json.find("identity"); identity != json.end())
    row.identity = identity_from_json(*identity);
  if (!json.at("precision").is_null()) {
    row.precision = enum_from_json<Precision>(json.at("precision"), schema, "precision");
  }
  row.reduced_precision = json.at("reduced_precision").get<bool>();
  if (const auto quantization = json.find("quantization"); quantization != json.end())
    row.quantization = text_from_json(*quantization, 40);  // absent: not quantised
  if (json.at("accuracy").is_array()) {
    for (const nlohmann::json& output : json.at("accuracy")) {
      OutputAccuracy accuracy{
          text_from_json(output.at("output"), 200),
          bound_from_json(output.at("worst_error_ratio"), std::numeric_limits<double>::infinity())};
      const auto measure = [&](const char* name) -> std::optional<double> {
        const auto found = output.find(name);
        if (found == output.end()) return std::nullopt;
        return found->is_string() ? std::nan("") : found->get<double>();
      };
      accuracy.relative_error = measure("relative_error");
      accuracy.cosine = measure("cosine");
      if (output.contains("top_k_rows")) {
        accuracy.top_k_agreed = count_from_json(output.at("top_k_agreed"), "top_k_agreed");
        accuracy.top_k_rows = count_from_json(output.at("top_k_rows"), "top_k_rows");
      }
      row.accuracy.push_back(std::move(accuracy));
    }
  }
  // Present only where an accuracy budget judged the row.
  if (const auto verdict = json.find("accuracy_verdict"); verdict != json.end()) {
    row.judged_by_budget = true;
    row.accuracy_verdict = text_from_json(*verdict);
  }
  // Reports written before the memory was watched have no "memory".
  if (const auto memory = json.find("memory"); memory != json.end() && !memory->is_null())
    row.memory = memory_from_json(*memory);
  if (json.contains("samples_ms"))
    row.samples_ms = json.at("samples_ms").get<std::vector<double>>();
  return row;
}

}  // namespace detail

/// A report read back from to_json's output, of this schema or schema 2 (the tuning cache keeps
/// reports so). Throws aitune::Error, or nlohmann::json::exception, when `json` is not such a
/// report.
[[nodiscard]] inline TuneReport report_from_json(const nlohmann::json& json) {
  const int schema = json.is_object() ? json.value("schema_version", 0) : 0;
  if (schema != 2 && schema != report_schema_version) {
    throw Error(fmt::format("not a report of schema 2 or {}", report_schema_version));
  }
  TuneReport report;
  report.strategy = detail::text_from_json(json.at("strategy"), 200);
  report.module = detail::text_from_json(json.at("module"), 200);
  report.selected = detail::text_from_json(json.at("selected"));
  report.selected_key = detail::text_from_json(json.at("selected_key"));
  // Reports written before identities were have none.
  if (const auto identity = json.find("selected_identity"); identity != json.end())
    report.selected_identity = detail::identity_from_json(*identity);
  report.baseline_selected = json.at("baseline_selected").get<bool>();
  report.decision = detail::text_from_json(json.at("decision"));
  report.tuning_time_ms = json.at("tuning_time_ms").get<double>();
  if (const auto budget = json.find("accuracy_budget"); budget != json.end())
    report.accuracy_budget = detail::text_from_json(*budget, 500);
  if (const auto checked = json.find("checked_samples");
      checked != json.end() && checked->is_number_unsigned()) {
    report.checked_samples = checked->get<std::size_t>();
  }
  const nlohmann::json& m = json.at("measurement");
  report.measurement.schedule =
      detail::enum_from_json<Schedule>(m.at("schedule"), schema, "schedule");
  report.measurement.decision_rule =
      detail::enum_from_json<DecisionRule>(m.at("decision_rule"), schema, "decision rule");
  report.measurement.rounds = detail::count_from_json(m.at("rounds"), "rounds");
  report.measurement.looks = static_cast<int>(std::min<std::size_t>(
      detail::count_from_json(m.at("looks"), "looks"), std::numeric_limits<int>::max()));
  report.measurement.calls = detail::count_from_json(m.at("calls"), "calls");
  report.measurement.stop_reason =
      detail::enum_from_json<StopReason>(m.at("stop_reason"), schema, "stop reason");
  report.measurement.stop_detail = detail::text_from_json(m.at("stop_detail"));
  report.measurement.confidence = m.at("confidence").get<double>();
  // Absent before tuning at a server's load was added (one more field, 1 when absent).
  if (const auto callers = m.find("callers"); callers != m.end()) {
    report.measurement.callers = static_cast<int>(
        std::min<std::size_t>(detail::count_from_json(*callers, "callers"), 1 << 20));
  }
  // Absent for one shape, and before shapes were weighed.
  if (const auto shapes = m.find("shapes"); shapes != m.end()) {
    for (const nlohmann::json& share : *shapes) {
      const double weight = share.at("weight").get<double>();
      if (!(weight >= 0.0 && weight <= 1.0)) {
        throw Error(
            fmt::format("a shape's weight is {} in a report, not a share from 0 to 1", weight));
      }
      report.measurement.shapes.push_back(
          ShapeShare{detail::text_from_json(share.at("shape"), 500), weight,
                     detail::count_from_json(share.at("samples"), "a shape's samples")});
    }
  }
  if (const auto serves = m.find("serves"); serves != m.end())
    report.measurement.serves = detail::text_from_json(*serves);
  if (const auto screening = m.find("screening"); screening != m.end())
    report.measurement.screening = detail::text_from_json(*screening);
  // Absent before the busy-machine verdict was added (same schema: one more optional field).
  if (const auto busy = m.find("busy"); busy != m.end() && !busy->is_null()) {
    BusyMachine verdict;
    verdict.undecided = busy->at("undecided").get<bool>();
    verdict.baseline_spread = busy->at("baseline_p90_over_median").get<double>();
    verdict.baseline_tail = busy->at("baseline_p99_over_median").get<double>();
    verdict.baseline_cv = busy->at("baseline_cv").get<double>();
    if (!busy->at("ratio_span").is_null())
      verdict.ratio_span = busy->at("ratio_span").get<double>();
    verdict.text = detail::text_from_json(busy->at("text"));
    report.measurement.busy = std::move(verdict);
  }
  // Absent before the steady-state final was added (one more optional field).
  if (const auto final = m.find("steady_final"); final != m.end() && !final->is_null()) {
    SteadyFinalReport& shown = report.measurement.steady_final.emplace();
    shown.settings = detail::text_from_json(final->at("settings"));
    for (const nlohmann::json& finalist : final->at("finalists"))
      shown.finalists.push_back(detail::text_from_json(finalist));
    shown.pick = detail::text_from_json(final->at("pick"));
    shown.rounds = detail::count_from_json(final->at("rounds"), "the final's rounds");
    shown.cut_short = detail::text_from_json(final->at("cut_short"));
  }
  if (!json.at("baseline").is_null()) {
    report.baseline = detail::candidate_from_json(json.at("baseline"), schema);
  }
  for (const nlohmann::json& candidate : json.at("candidates")) {
    report.candidates.push_back(detail::candidate_from_json(candidate, schema));
  }
  if (const auto hit = json.find("cache_hit"); hit != json.end() && !hit->is_null()) {
    report.cache_hit = CacheHit{
        detail::text_from_json(hit->at("file")), detail::text_from_json(hit->at("created")),
        hit->at("check_time_ms").get<double>(), hit->value("stored_reference", false)};
  }
  return report;
}

}  // namespace aitune
