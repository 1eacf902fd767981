// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Variants made from one graph share its verdict. A reduced-precision run of a graph (the same
/// ONNX model or OpenVINO IR in bf16) is checked against a tolerance wide enough for its
/// precision, which can also pass a graph whose weights are wrong; its full-precision run, held
/// to fp32's, is the better judge of the graph. When that run is incorrect, the
/// reduced-precision runs are incorrect too, with its reason, whatever their own check said.

#include "aitune/core/report/tune_report.hpp"

#include <fmt/format.h>

#include <string>

namespace aitune::detail {

/// Why `row` is refused for its graph: a full-precision run of the same graph among `report`'s
/// candidates is incorrect. Empty when it stands: it is no reduced-precision run of a shared
/// graph, failed already, or no full-precision run of its graph is incorrect.
[[nodiscard]] inline std::string graph_refusal(const TuneReport& report,
                                               const CandidateReport& row) {
  if (row.graph.empty() || !row.reduced_precision || row.status != CandidateStatus::ok) return {};
  for (const CandidateReport& other : report.candidates) {
    if (&other == &row || other.graph != row.graph || other.reduced_precision ||
        other.status != CandidateStatus::incorrect) {
      continue;
    }
    return fmt::format("the full-precision run of its graph, {}, is incorrect: {}", other.backend,
                       other.reason);
  }
  return {};
}

/// Refuses `row` for its graph when graph_refusal says why: its status and reason say so.
/// Returns whether it was refused.
inline bool refuse_for_graph(const TuneReport& report, CandidateReport& row) {
  std::string why = graph_refusal(report, row);
  if (why.empty()) return false;
  row.status = CandidateStatus::incorrect;
  row.reason = std::move(why);
  return true;
}

}  // namespace aitune::detail
