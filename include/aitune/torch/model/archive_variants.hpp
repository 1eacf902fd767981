// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Which of a `.pt2` archive's variants ONNX Runtime and OpenVINO run, under whatever name the
/// archive gives them, and what an archive holds that no candidate can be made from (named, never
/// dropped in silence).

#include "aitune/core/text/format.hpp"
#include "aitune/torch/model/archive_contents.hpp"
#include "aitune/torch/model/archive_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// The families whose runtimes this library runs a converted model on, in name order: those the
/// archive reader knows the files of (detail::runtime_family_files).
[[nodiscard]] inline std::vector<std::string> converted_families() {
  std::vector<std::string> families;
  for (const auto& [family, files] : detail::runtime_family_files())
    families.push_back(family);
  return families;
}

/// The converted family a variant's name starts with ("onnx_int8": "onnx"), or empty.
[[nodiscard]] inline std::string family_by_name(const std::string& variant) {
  for (const std::string& family : converted_families()) {
    if (variant.starts_with(family)) return family;
  }
  return {};
}

/// The family of `variant` in `archive`: its record's, usable or not; for a variant the export
/// tool could not make (failed_variants records no family), or of an archive whose records
/// cannot be read at all, the family its name starts with. Empty where none is known.
[[nodiscard]] inline std::string variant_family(const Pt2Archive& archive,
                                                const std::string& variant) {
  if (const auto found = archive.runtime_variants.find(variant);
      found != archive.runtime_variants.end()) {
    return found->second.family;
  }
  if (const auto found = archive.recorded_families.find(variant);
      found != archive.recorded_families.end() && archive.records_problem.empty()) {
    return found->second;
  }
  if (archive.failed_variants.contains(variant) || archive.unusable_variants.contains(variant) ||
      !archive.records_problem.empty()) {
    return family_by_name(variant);
  }
  return {};
}

/// Whether `variant` is one of the quantised models tools/export_model.py makes (onnx_int8,
/// openvino_int8), or a variant whose record says it is quantised: it joins a tuning under an
/// accuracy budget only.
[[nodiscard]] inline bool is_quantized_variant(const Pt2Archive& archive,
                                               const std::string& variant) {
  if (const auto found = archive.runtime_variants.find(variant);
      found != archive.runtime_variants.end()) {
    return !found->second.quantization.empty();
  }
  const std::string family = family_by_name(variant);
  return !family.empty() && variant == family + "_int8";
}

/// The variants of `archive` that ONNX Runtime or OpenVINO run, each family's in name order,
/// ONNX Runtime's first, quantised ones (is_quantized_variant) only where `quantized`, others
/// only where not: every converted model it holds under any name, and those whose record cannot
/// be used or whose conversion failed (their candidates fail with the cause). An archive whose
/// records cannot be read at all lists each family's own ("onnx", "openvino"; unquantised),
/// which fail with why.
[[nodiscard]] inline std::vector<std::string> converted_variants(const Pt2Archive& archive,
                                                                 bool quantized) {
  std::vector<std::string> names;
  if (!archive.records_problem.empty()) {
    if (!quantized) names = converted_families();
    return names;
  }
  std::set<std::string> all;  // in name order, each once (an archive may hold thousands)
  for (const auto& [name, info] : archive.runtime_variants)
    all.insert(name);
  for (const auto* unmade : {&archive.unusable_variants, &archive.failed_variants}) {
    for (const auto& [name, why] : *unmade)
      all.insert(name);
  }
  for (const std::string& family : converted_families()) {
    for (const std::string& name : all) {
      if (variant_family(archive, name) == family &&
          is_quantized_variant(archive, name) == quantized) {
        names.push_back(name);
      }
    }
  }
  return names;
}

/// The AOTInductor compilations `archive` records a variant for but does not hold (or whose
/// record cannot be used and names no compilation it holds), each unusable with the cause: their
/// candidates fail with it, so the report names them.
[[nodiscard]] inline std::vector<AotiModelInfo> unheld_compilations(const Pt2Archive& archive) {
  std::vector<AotiModelInfo> unheld;
  for (const auto& unusable : archive.unusable_variants) {
    const std::string& name = unusable.first;  // not a structured binding: a lambda takes it
    const auto family = archive.recorded_families.find(name);
    const bool held = std::any_of(archive.aoti_models.begin(), archive.aoti_models.end(),
                                  [&](const AotiModelInfo& info) { return info.name == name; });
    if (family != archive.recorded_families.end() && family->second == "aoti" && !held) {
      AotiModelInfo info{name};
      info.unusable = unusable.second;
      unheld.push_back(std::move(info));
    }
  }
  return unheld;
}

/// What `archive` holds that no candidate is made from, one line each, for a warning: the
/// variants of a family this library does not read, and those whose record names no family (so
/// that no runtime can even fail on them). At most `named` are named; one more line counts the
/// rest. Names are the archive's, cleaned and cut (an archive of 20,000 such variants gave
/// 20,000 lines).
[[nodiscard]] inline std::vector<std::string> variants_left_out(const Pt2Archive& archive,
                                                                std::size_t named = 5) {
  std::vector<std::string> lines;
  std::size_t left_out = 0;
  const auto tell = [&](const std::string& name, const std::string& why) {
    if (left_out++ < named) {
      lines.push_back(fmt::format("variant '{}' left out: {}",
                                  aitune::detail::printable_excerpt(name, 100), why));
    }
  };
  for (const auto& [name, why] : archive.unknown_variants)
    tell(name, why);
  for (const auto& [name, why] : archive.unusable_variants) {
    if (!archive.recorded_families.contains(name) && variant_family(archive, name).empty()) {
      tell(name, why);
    }
  }
  if (left_out > named) {
    lines.push_back(fmt::format("{} more variants left out: of families this aitune-cpp does not "
                                "read, or whose records name no family",
                                left_out - named));
  }
  return lines;
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
