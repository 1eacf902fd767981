// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a torch.export `.pt2` archive holds, read without loading it: its ExportedPrograms, its
/// AOTInductor compilations, and what tools/export_model.py recorded in `extra/aitune.json` (each
/// compilation's precision, the inputs' names and shapes, the conversions for other runtimes and
/// the output structure). Everything read from the archive is untrusted: a record that cannot be
/// used says why.

#include "aitune/core/detail/text/format.hpp"
#include "aitune/core/detail/text/json_parse.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/torch/libtorch.hpp"

#include <caffe2/serialize/inline_container.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// One AOTInductor compilation inside a `.pt2` archive, and what `tools/export_model.py`
/// recorded about it (nothing, for archives made by other tools).
struct AotiModelInfo {
  std::string name;                                       ///< the model name inside the archive
  Precision precision = Precision::fp32;                  ///< the precision it computes in
  std::map<std::string, std::string> inductor_configs{};  ///< as given to Inductor, as text
  /// Why the archive's record of it cannot be used (a field of the wrong type or an unknown
  /// precision): its candidate's build fails with this. Empty when it can.
  std::string unusable{};
};

/// The model converted for another runtime (ONNX Runtime, OpenVINO) inside a `.pt2` archive, as
/// tools/export_model.py writes it: the archive records that hold it. (Its inputs' names are the
/// graph's own, which the backend reads from the loaded model.)
struct RuntimeVariantInfo {
  std::string name;                    ///< "onnx" or "openvino"
  std::vector<std::string> records{};  ///< the model's files in the archive, in the runtime's order
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
  /// The models converted for other runtimes, by variant name ("onnx", "openvino").
  std::map<std::string, RuntimeVariantInfo> runtime_variants{};
  /// The variants tools/export_model.py tried and could not make, with the cause it recorded.
  std::map<std::string, std::string> failed_variants{};
  /// The converted models whose records cannot be used (a field of the wrong type, a record the
  /// archive lacks), with why: their candidates fail with it.
  std::map<std::string, std::string> unusable_variants{};
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

namespace detail {

/// The most bytes one record of the archive at `path` may unpack to: 64 MiB, or 16 times the
/// archive's size. PyTorch's writer and tools/export_model.py store records unpacked, so a real
/// record is never larger than its file, while a deflated one can claim a thousand times its
/// packed size (a zip bomb) and the reader would allocate all of it before reading a byte.
inline std::uint64_t record_size_bound(const std::filesystem::path& path) {
  constexpr std::uint64_t floor = std::uint64_t{64} << 20;
  std::error_code error;
  const std::uintmax_t file = std::filesystem::file_size(path, error);
  return error ? floor : std::max<std::uint64_t>(floor, std::uint64_t{16} * file);
}

/// The bytes of the record `name`; throws Error when it would unpack to more than `bound` bytes.
inline std::string read_record(caffe2::serialize::PyTorchStreamReader& reader,
                               const std::string& name, std::uint64_t bound) {
  const std::uint64_t unpacked = reader.getRecordSize(name);
  if (unpacked > bound) {
    throw Error(fmt::format("the archive's record '{}' would unpack to {} bytes, more than the {} "
                            "bytes a record may hold (16 times the archive's size, at least "
                            "64 MiB): a damaged or hostile archive",
                            name, unpacked, bound));
  }
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

/// The model name `record` belongs to when it lies under `prefix` (e.g. "models/"), else "".
inline std::string name_under(std::string_view record, std::string_view prefix,
                              std::string_view suffix) {
  if (!record.starts_with(prefix)) return {};
  record.remove_prefix(prefix.size());
  if (suffix.empty()) return std::string(record.substr(0, record.find('/')));
  if (!record.ends_with(suffix) || record.find('/') != std::string_view::npos) return {};
  record.remove_suffix(suffix.size());
  return std::string(record);
}

/// An input's shape as tools/export_model.py records it (`"shape": [1, 3, 224, 224]`), as
/// `1x3x224x224`; empty when it recorded none.
inline std::string recorded_shape(const nlohmann::json& input) {
  const auto shape = input.is_object() ? input.find("shape") : input.end();
  if (shape == input.end() || !shape->is_array() || shape->empty()) return {};
  std::string text;
  for (const auto& size : *shape) {
    if (!size.is_number_integer()) return {};
    text += (text.empty() ? "" : "x") + std::to_string(size.get<std::int64_t>());
  }
  return text;
}

/// `value` as JSON text for a message, cut to `limit` characters.
inline std::string json_excerpt(const nlohmann::json& value, std::size_t limit = 60) {
  return aitune::detail::cut_text(value.dump(), limit);
}

/// What tools/export_model.py recorded of one AOTInductor compilation (aitune.json's
/// `aoti.<name>`): the precision it computes in and its Inductor options. A record of the wrong
/// type, or a precision that is not a precision's name, makes the compilation unusable with that
/// cause (its candidate's build fails with it), not fp32 by default.
inline void read_aoti_record(const nlohmann::json& record, AotiModelInfo& info) {
  const std::string where = fmt::format("the archive's extra/aitune.json: aoti.{}", info.name);
  if (!record.is_object()) {
    info.unusable = fmt::format("{} is {}, not an object", where, json_excerpt(record));
    return;
  }
  if (const auto precision = record.find("precision"); precision != record.end()) {
    const auto parsed = precision->is_string()
                            ? parse_token<Precision>(precision->get<std::string>())
                            : std::nullopt;
    if (!parsed) {
      info.unusable = fmt::format("{}.precision is {}, not one of fp32, bf16, fp16, fp64", where,
                                  json_excerpt(*precision));
      return;
    }
    info.precision = *parsed;
  }
  if (const auto configs = record.find("inductor_configs"); configs != record.end()) {
    if (!configs->is_object()) {
      info.unusable =
          fmt::format("{}.inductor_configs is {}, not an object", where, json_excerpt(*configs));
      return;
    }
    for (const auto& [key, value] : configs->items())
      info.inductor_configs[key] = value.dump();
  }
}

/// What tools/export_model.py recorded of the converted models (aitune.json's "runtimes",
/// "failed", "out_spec" and "none_leaves"; `has_record` says whether the archive holds a
/// record). Nothing is dropped in silence: a converted model whose record is of the wrong type or
/// missing from the archive is an unusable variant with that cause, and an output structure
/// whose fields are of the wrong type is output_spec_problem.
inline void read_runtime_variants(const nlohmann::json& recorded, Pt2Archive& archive,
                                  const std::function<bool(const std::string&)>& has_record) {
  const std::string where = "the archive's extra/aitune.json";
  if (const auto spec = recorded.find("out_spec"); spec != recorded.end()) {
    if (spec->is_string()) {
      archive.output_spec = spec->get<std::string>();
    } else {
      archive.output_spec_problem =
          fmt::format("{}: out_spec is {}, not a string", where, json_excerpt(*spec));
    }
  }
  if (const auto nones = recorded.find("none_leaves"); nones != recorded.end()) {
    const bool leaves = nones->is_array() &&
                        std::all_of(nones->begin(), nones->end(), [](const nlohmann::json& leaf) {
                          return leaf.is_number_unsigned();
                        });
    if (leaves) {
      for (const auto& leaf : *nones)
        archive.output_none_leaves.push_back(leaf.get<std::size_t>());
    } else if (archive.output_spec_problem.empty()) {
      archive.output_spec_problem = fmt::format("{}: none_leaves is {}, not a list of leaf numbers",
                                                where, json_excerpt(*nones));
    }
  }
  if (const auto failed = recorded.find("failed");
      failed != recorded.end() && failed->is_object()) {
    for (const auto& [name, cause] : failed->items()) {
      // A cause is one line of a report: the export tool writes a few hundred characters at most.
      archive.failed_variants[name] =
          cause.is_string() ? aitune::detail::cut_text(cause.get_ref<const std::string&>(), 500)
                            : json_excerpt(cause, 500);
    }
  }
  const auto runtimes = recorded.find("runtimes");
  if (runtimes == recorded.end() || !runtimes->is_object()) return;
  // Each runtime's files, in the order its backend loads them.
  const std::map<std::string, std::vector<std::string>> layouts{{"onnx", {"record"}},
                                                                {"openvino", {"xml", "bin"}}};
  for (const auto& [name, fields] : layouts) {
    const auto found = runtimes->find(name);
    if (found == runtimes->end()) continue;
    std::string problem;
    RuntimeVariantInfo info{name};
    if (!found->is_object()) {
      problem =
          fmt::format("{}: runtimes.{} is {}, not an object", where, name, json_excerpt(*found));
    }
    for (std::size_t i = 0; i < fields.size() && problem.empty(); ++i) {
      const auto record = found->find(fields[i]);
      if (record == found->end() || !record->is_string()) {
        problem =
            fmt::format("{}: runtimes.{}.{} is {}, not the name of a record", where, name,
                        fields[i], record == found->end() ? "missing" : json_excerpt(*record));
      } else if (!has_record(record->get<std::string>())) {
        problem =
            fmt::format("{} names the record '{}' for {}, which the archive does not hold", where,
                        aitune::detail::cut_text(record->get<std::string>(), 200), name);
      } else {
        info.records.push_back(record->get<std::string>());
      }
    }
    if (problem.empty()) {
      archive.runtime_variants.emplace(name, std::move(info));
    } else {
      archive.unusable_variants[name] = std::move(problem);
    }
  }
}

/// What tools/export_model.py recorded in the archive's extra/aitune.json, whose text is `text`
/// (`has_record` says whether the archive holds a record): each compilation's precision and
/// options, the inputs' names and shapes, and the converted models. A text that cannot be read
/// at all is the archive's records_problem, and every compilation is unusable with it.
inline void read_aitune_json(std::string_view text, Pt2Archive& archive,
                             const std::function<bool(const std::string&)>& has_record) {
  std::string why;
  const nlohmann::json recorded = parse_json_bounded(text, &why);
  if (!recorded.is_object()) {
    if (!recorded.is_discarded()) why = "it is " + json_excerpt(recorded) + ", not an object";
    archive.records_problem = "the archive's extra/aitune.json cannot be read: " + why;
    for (AotiModelInfo& info : archive.aoti_models)
      info.unusable = archive.records_problem;
    return;
  }
  if (const auto aoti = recorded.find("aoti"); aoti != recorded.end() && aoti->is_object()) {
    for (auto& info : archive.aoti_models) {
      if (const auto found = aoti->find(info.name); found != aoti->end()) {
        read_aoti_record(*found, info);
      }
    }
  }
  read_runtime_variants(recorded, archive, has_record);
  if (const auto inputs = recorded.find("inputs"); inputs != recorded.end() && inputs->is_array()) {
    for (const auto& input : *inputs) {
      const bool named = input.is_object() && input.contains("name") && input["name"].is_string();
      archive.input_names.push_back(named ? input["name"].get<std::string>() : std::string());
      archive.input_shapes.push_back(recorded_shape(input));
    }
  }
}

/// Reads what a PT2 archive holds; nullopt when `path` is a zip file of another kind (such as a
/// TorchScript file). Throws c10::Error when it is no zip file at all.
inline std::optional<Pt2Archive> read_pt2_archive(const std::filesystem::path& path) {
  caffe2::serialize::PyTorchStreamReader reader(path.string());
  const std::uint64_t bound = record_size_bound(path);
  if (!reader.hasRecord("archive_format") ||
      read_record(reader, "archive_format", bound) != "pt2") {
    return std::nullopt;
  }
  Pt2Archive archive{path};
  for (const std::string& record : reader.getAllRecords()) {
    if (auto program = name_under(record, "models/", ".json"); !program.empty()) {
      archive.programs.push_back(std::move(program));
    }
    auto aoti = name_under(record, "data/aotinductor/", "");
    const bool known = std::any_of(archive.aoti_models.begin(), archive.aoti_models.end(),
                                   [&](const AotiModelInfo& m) { return m.name == aoti; });
    if (!aoti.empty() && !known) archive.aoti_models.push_back(AotiModelInfo{std::move(aoti)});
  }
  std::sort(archive.programs.begin(), archive.programs.end());
  // tools/export_model.py records each compilation's precision and Inductor options, and more.
  if (reader.hasRecord("extra/aitune.json")) {
    read_aitune_json(read_record(reader, "extra/aitune.json", bound), archive,
                     [&](const std::string& record) { return reader.hasRecord(record); });
  }
  return archive;
}

/// The bytes of the record `name` of the archive at `path` (a converted model's file).
inline std::string read_archive_record(const std::filesystem::path& path, const std::string& name) {
  caffe2::serialize::PyTorchStreamReader reader(path.string());
  if (!reader.hasRecord(name)) {
    throw Error(fmt::format("'{}' has no record '{}'", path.string(), name));
  }
  return read_record(reader, name, record_size_bound(path));
}

/// The names of the main program's inputs, in order, from its serialized signature
/// (`module_call_graph[0].signature.forward_arg_names`); empty when it records none.
inline std::vector<std::string> read_program_input_names(const Pt2Archive& archive) {
  const auto program = archive.main_program();
  if (!program) return {};
  caffe2::serialize::PyTorchStreamReader reader(archive.path.string());
  const std::string record = "models/" + *program + ".json";
  if (!reader.hasRecord(record)) return {};
  const auto json =
      parse_json_bounded(read_record(reader, record, record_size_bound(archive.path)));
  std::vector<std::string> names;
  try {
    for (const auto& name : json.at("graph_module")
                                .at("module_call_graph")
                                .at(0)
                                .at("signature")
                                .at("forward_arg_names")) {
      names.push_back(name.get<std::string>());
    }
  } catch (const nlohmann::json::exception&) {
    return {};
  }
  return names;
}

}  // namespace detail

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
