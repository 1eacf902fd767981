// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a tuning cache entry's report, as a file or a store others can write hands it
// back (core/report/json.hpp's report_from_json, core/cache/cached_tuning.hpp's contradiction),
// then the report's renderers. Any input is a report or an Error (or nlohmann's own exception):
// never a crash, and what was read is a report whose every count came from a count and whose
// texts hold no control character, so none reaches a terminal.
#include <aitune/core/cache/cached_tuning.hpp>
#include <aitune/core/report/json.hpp>
#include <aitune/core/report/report.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace {

bool printable(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  aitune::TuneReport report;
  try {
    report = aitune::report_from_json(json);
  } catch (const aitune::Error&) {
    return 0;
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  (void)aitune::detail::contradiction(report, true);
  if (!printable(report.decision) || !printable(report.selected) ||
      !printable(report.measurement.stop_detail)) {
    std::abort();
  }
  for (const aitune::CandidateReport& row : report.candidates) {
    if (!printable(row.backend) || !printable(row.reason) || !printable(row.note)) std::abort();
  }
  for (const aitune::ShapeShare& share : report.measurement.shapes) {
    if (!printable(share.shape) || !(share.weight >= 0.0 && share.weight <= 1.0)) std::abort();
  }
  // The renderers take whatever was read.
  (void)aitune::render_table(report);
  (void)aitune::to_json(report).dump();
  return 0;
}
