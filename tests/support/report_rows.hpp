// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once
// A report's row by its backend's name, for the core tests (Catch's REQUIRE: the torch tests
// include Catch their own way, torch/torch_catch.hpp).

#include <aitune/core/report/tune_report.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace aitune::testing {

/// The report's row for `backend` (its describe()), which must be there.
inline const CandidateReport& row_of(const TuneReport& report, const std::string& backend) {
  const CandidateReport* row = report.find(backend);
  REQUIRE(row != nullptr);
  return *row;
}

}  // namespace aitune::testing
