// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a .pt2 archive's extra/aitune.json (torch/model/archive_records.hpp's
// reader: schema 1 and 2) and the output structure it records, through ConvertedModel::outputs,
// which rebuilds a converted model's flat outputs into it (torch/backends/runtime_variant.hpp).
// Any input is read into what can be used and what cannot (with why); a range or an index
// domain read is one a tuning can use; the variants candidates are made from are each of a
// family a runtime reads, and what is left out is said in a few lines; whatever the records say,
// rebuilding outputs of any count returns outputs or flat ones, never reads or writes out of
// bounds.
#include <aitune/torch/backends/runtime_variant.hpp>
#include <aitune/torch/model/archive_variants.hpp>
#include <aitune/torch/model/pt2_archive.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  aitune::lt::Pt2Archive archive{"fuzz.pt2"};
  archive.aoti_models = {aitune::lt::AotiModelInfo{"aoti_default"},
                         aitune::lt::AotiModelInfo{"aoti_bf16"}};
  // Half the record names are in the archive: both answers are read.
  aitune::lt::detail::read_aitune_json(
      text, archive, [](const std::string& name) { return name.size() % 2 == 0; });
  if (!archive.records_problem.empty() && !archive.runtime_variants.empty()) std::abort();
  for (const auto& [name, info] : archive.runtime_variants) {
    if (info.records.empty() || archive.unusable_variants.contains(name)) std::abort();
  }
  // A range read is one a tuning can check at: no axis twice, one range per symbol, a max an
  // input may have; a domain read holds at least one value.
  const auto& axes = archive.dynamic_axes;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].min < 0 || axes[a].min > axes[a].max || axes[a].max > aitune::max_input_dimension)
      std::abort();
    for (std::size_t b = a + 1; b < axes.size(); ++b) {
      if (axes[a].input == axes[b].input && axes[a].axis == axes[b].axis) std::abort();
      if (!axes[a].symbol.empty() && axes[a].symbol == axes[b].symbol &&
          (axes[a].min != axes[b].min || axes[a].max != axes[b].max)) {
        std::abort();
      }
    }
  }
  for (const auto& domain : archive.index_domains) {
    if (domain.min > domain.max) std::abort();
  }
  // What the candidates are made from: each converted variant once, of a family a runtime
  // reads; what no candidate comes from said in at most six lines.
  for (const bool quantized : {false, true}) {
    std::vector<std::string> seen;
    for (const std::string& name : aitune::lt::converted_variants(archive, quantized)) {
      const std::string family = aitune::lt::variant_family(archive, name);
      if (family != "onnx" && family != "openvino") std::abort();
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) std::abort();
      seen.push_back(name);
    }
  }
  for (const auto& info : aitune::lt::unheld_compilations(archive)) {
    if (info.unusable.empty()) std::abort();
  }
  if (aitune::lt::variants_left_out(archive).size() > 6) std::abort();
  aitune::lt::ConvertedModel converted;
  converted.read_structure(archive);
  const std::size_t leaves = converted.structure ? converted.structure->leaves() : 0;
  for (std::size_t outputs = 0; outputs <= leaves + 2 && outputs <= 64; ++outputs) {
    std::vector<at::Tensor> flat;
    for (std::size_t i = 0; i < outputs; ++i)
      flat.push_back(at::zeros({1}));
    (void)converted.flat_reason(outputs);
    (void)converted.outputs(std::move(flat));
  }
  return 0;
}
