// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// TuneResult: what a tuning hands back (MinLatencyStrategy::tune).

#include "aitune/core/backend.hpp"
#include "aitune/core/report/tune_report.hpp"

#include <vector>

namespace aitune {

/// What tuning returns: the selected backend, active and ready for `infer`, and the report.
template <Backend B>
struct TuneResult {
  B backend;
  TuneReport report;
  /// The baseline's outputs on the checked samples, the reference of the correctness check: only
  /// when asked for (MinLatencyStrategy::keep_reference_outputs), since they may be large and on a
  /// device. Empty when the check was off or the baseline failed.
  std::vector<typename B::output_type> reference_outputs{};

  [[nodiscard]] bool baseline_selected() const noexcept { return report.baseline_selected; }
};

}  // namespace aitune
