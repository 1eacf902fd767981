// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a torch.export `.pt2` archive holds (Pt2Archive), as model/pt2_archive.hpp reads it:
/// its programs, its AOTInductor compilations, the models converted for other runtimes, and what
/// tools/export_model.py recorded of them.

#include "aitune/core/precision.hpp"
#include "aitune/torch/libtorch.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// One AOTInductor compilation inside a `.pt2` archive, and what `tools/export_model.py`
/// recorded about it (nothing, for archives made by other tools).
struct AotiModelInfo {
  std::string name;                                       ///< the model name inside the archive
  Precision precision = Precision::fp32;                  ///< the precision it computes in
  std::map<std::string, std::string> inductor_configs{};  ///< as given to Inductor, as text
  /// Whether it was compiled for every shape of the archive's dynamic_axes (else the example's).
  bool takes_range = false;
  /// How its graph was quantised before it was compiled ("int8": tools/export_model.py's
  /// aoti_int8), empty for none: a reduced-precision candidate, tried only under an accuracy
  /// budget, and never a baseline.
  std::string quantization{};
  /// The digests of the inputs it was calibrated on (as RuntimeVariantInfo's).
  std::vector<std::string> calibration_digests{};
  /// Why the archive's record of it cannot be used (a field of the wrong type or an unknown
  /// precision): its candidate's build fails with this. Empty when it can.
  std::string unusable{};
};

/// The model converted for another runtime (ONNX Runtime, OpenVINO) inside a `.pt2` archive, as
/// tools/export_model.py writes it: the archive records that hold it. (Its inputs' names are the
/// graph's own, which the backend reads from the loaded model.)
struct RuntimeVariantInfo {
  std::string name;                    ///< the variant's name in the archive ("onnx", "openvino")
  std::vector<std::string> records{};  ///< the model's files in the archive, in the runtime's order
  std::string family{};                ///< the runtime that runs it: "onnx" or "openvino"
  /// Whether it takes every shape of the archive's dynamic_axes (else the example's only).
  bool takes_range = false;
  /// How it was quantised ("int8"), empty for a model in its precision: a reduced-precision
  /// candidate, tried only under an accuracy budget.
  std::string quantization{};
  /// The digests of the inputs it was calibrated on (digest_samples of each, alone): never the
  /// inputs its accuracy is checked on.
  std::vector<std::string> calibration_digests{};
};

/// An axis of one of the program's inputs exported as a range (tools/export_model.py --dynamic):
/// every size from min to max inclusive, as torch.export proved it. Axes with the same symbol
/// must have the same size in one call (input_ids and attention_mask).
struct DynamicAxis {
  std::string input;     ///< the input's name
  std::size_t axis = 0;  ///< the axis in the input's shape
  std::int64_t min = 0;  ///< the smallest size
  std::int64_t max = 0;  ///< the largest size
  std::string symbol{};  ///< torch.export's symbol for the size (`s0`)
};

/// The values an integer input may hold, from min to max inclusive: the rows of the embedding it
/// indexes (torch.export's graph proves it), or what the user declared at export
/// (tools/export_model.py --domain). A value outside reads out of bounds in a compiled model
/// (AOTInductor aborts the process), and other runtimes answer it silently.
struct IndexDomain {
  std::string input;     ///< the input's name
  std::int64_t min = 0;  ///< the smallest value
  std::int64_t max = 0;  ///< the largest value
  std::string source{};  ///< where it comes from: "embedding" or "declared"
};

/// What a torch.export `.pt2` archive (PT2 archive format) holds: ExportedPrograms under
/// `models/<name>.json`, run by the native runtime, and AOTInductor compilations under
/// `data/aotinductor/<name>/`, each loaded by its name.
struct Pt2Archive {
  std::filesystem::path path;
  std::vector<std::string> programs{};       ///< ExportedProgram names
  std::vector<AotiModelInfo> aoti_models{};  ///< AOTInductor compilations
  /// The programs' input names, in order, as tools/export_model.py recorded them (empty for
  /// archives made by other tools).
  std::vector<std::string> input_names{};
  /// The shapes of the inputs it was exported for (`1x3x224x224`), in the same order, as
  /// tools/export_model.py recorded them; empty for archives made by other tools, and an empty
  /// shape for an input it did not record.
  std::vector<std::string> input_shapes{};
  /// The axes exported as a range, as tools/export_model.py recorded them (empty: every input
  /// has the example's shape).
  std::vector<DynamicAxis> dynamic_axes{};
  /// The values the integer inputs that index an embedding may hold, as tools/export_model.py
  /// recorded them (empty: none recorded).
  std::vector<IndexDomain> index_domains{};
  /// The models converted for other runtimes, by variant name ("onnx", "openvino").
  std::map<std::string, RuntimeVariantInfo> runtime_variants{};
  /// The variants tools/export_model.py tried and could not make, with the cause it recorded.
  std::map<std::string, std::string> failed_variants{};
  /// The variants whose records cannot be used (a field of the wrong type, a record the archive
  /// lacks, a family this library does not read), with why: their candidates fail with it.
  std::map<std::string, std::string> unusable_variants{};
  /// The variants of a family this library does not read (a newer export tool's), with a cause
  /// that says so: no candidate is made from them.
  std::map<std::string, std::string> unknown_variants{};
  /// The family each variant's record names ("aoti", "onnx", "openvino", or one this library
  /// does not read), by variant name, usable or not: what an unusable variant would have been
  /// run by, so that its candidate fails with the cause. Missing where the record names none.
  std::map<std::string, std::string> recorded_families{};
  /// The program's output structure as a pytree TreeSpec (treespec_dumps), as
  /// tools/export_model.py recorded it: what the flat outputs of a converted model are rebuilt
  /// into. Empty for archives made by other tools.
  std::string output_spec{};
  /// Which leaves of output_spec are None, in leaf order: a converted model (ONNX, OpenVINO)
  /// returns no output for them.
  std::vector<std::size_t> output_none_leaves{};
  /// Why the output structure recorded cannot be used (a field of the wrong type): the converted
  /// models' outputs then come back flat, and their check says why. Empty when it can.
  std::string output_spec_problem{};
  /// Why extra/aitune.json, which the archive holds, cannot be read at all (not JSON, not an
  /// object, nested too deep): what it would have described (the compilations' precisions, the
  /// converted models) is unknown, and every candidate made from them fails with this. Empty
  /// when it can, or when the archive has none (made by another tool).
  std::string records_problem{};

  /// The name the native runtime runs: "model" when present, else the first program.
  [[nodiscard]] std::optional<std::string> main_program() const {
    if (programs.empty()) return std::nullopt;
    const bool has_model = std::find(programs.begin(), programs.end(), "model") != programs.end();
    return has_model ? std::string("model") : programs.front();
  }
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
