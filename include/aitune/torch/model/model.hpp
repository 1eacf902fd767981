// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The model the LibTorch backends are built from, its samples, and loading from disk: a
/// TorchScript file, or a torch.export `.pt2` archive (ExportedPrograms that the native runtime
/// runs, and AOTInductor compilations of them).

#include "aitune/core/detail/text/json_parse.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/torch/libtorch.hpp"

#include <caffe2/serialize/inline_container.h>
#include <torch/cuda.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// One batch-size-1 call: the positional arguments of `forward`.
using Sample = std::vector<c10::IValue>;

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
  /// The program's output structure as a pytree TreeSpec (treespec_dumps), as
  /// tools/export_model.py recorded it: what the flat outputs of a converted model are rebuilt
  /// into. Empty for archives made by other tools.
  std::string output_spec{};
  /// Which leaves of output_spec are None, in leaf order: a converted model (ONNX, OpenVINO)
  /// returns no output for them.
  std::vector<std::size_t> output_none_leaves{};

  /// The name the native runtime runs: "model" when present, else the first program.
  [[nodiscard]] std::optional<std::string> main_program() const {
    if (programs.empty()) return std::nullopt;
    const bool has_model = std::find(programs.begin(), programs.end(), "model") != programs.end();
    return has_model ? std::string("model") : programs.front();
  }
};

/// A model and the device it is tuned for: a TorchScript module (`module`), a torch.export
/// archive (`archive`), or both (the same model in both forms, to race the two families side by
/// side: its baseline is then the native runtime). The backends clone the module or load from
/// the archive; they never change either.
struct Model {
  torch::jit::Module module{};
  c10::Device device = c10::Device(c10::kCPU);
  std::optional<Pt2Archive> archive{};
  /// False when `module` is empty: a model loaded from a `.pt2` archive alone.
  bool has_torchscript = true;
  /// The file it was loaded from (load_model); empty for a module made in memory.
  std::filesystem::path source{};

  [[nodiscard]] bool is_exported() const noexcept { return archive.has_value(); }
};

namespace detail {
/// The line of a (often long, multi-line) LibTorch error message that says what went wrong:
/// the last line of a TorchScript interpreter traceback, else the first line.
inline std::string summarize_error(std::string_view text) {
  if (text.find("Traceback of TorchScript") != std::string_view::npos) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.remove_suffix(1);
    const auto start = text.rfind('\n');
    return std::string(start == std::string_view::npos ? text : text.substr(start + 1));
  }
  return std::string(text.substr(0, text.find('\n')));
}

/// summarize_error of any exception, without LibTorch's C++ backtrace.
inline std::string summarize_error(const std::exception& error) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) {
    return summarize_error(torch_error->what_without_backtrace());
  }
  return summarize_error(error.what());
}
}  // namespace detail

/// The line of a LibTorch error that says what went wrong (the last line of a TorchScript
/// traceback, else the first line), without LibTorch's C++ backtrace: for messages to people.
using detail::summarize_error;

/// Parses `cpu`, `cuda` or `cuda:N` and checks that the device exists in this build.
[[nodiscard]] inline c10::Device parse_device(std::string_view text) {
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(std::string(text));
  } catch (const c10::Error&) {
    throw ConfigError(fmt::format("unknown device '{}': expected cpu, cuda or cuda:N", text));
  }
  if (device.is_cpu()) return device;
  if (!device.is_cuda()) {
    throw ConfigError(fmt::format("device '{}' is not supported: expected cpu or cuda", text));
  }
  if (!torch::cuda::is_available()) {
    throw ConfigError(fmt::format("device '{}' was asked for, but {}", text,
                                  AITUNE_WITH_CUDA ? "no CUDA device is visible"
                                                   : "this LibTorch was built without CUDA"));
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (device.has_index() && device.index() >= count) {
    throw ConfigError(
        fmt::format("device '{}' does not exist: {} CUDA device(s) are visible", text, count));
  }
  if (!device.has_index()) device = c10::Device(c10::kCUDA, 0);
  return device;
}

namespace detail {

inline std::string read_record(caffe2::serialize::PyTorchStreamReader& reader,
                               const std::string& name) {
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

namespace detail {

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

/// `value` as JSON text for a message: cut to `limit` characters (a record may be of any size).
inline std::string json_excerpt(const nlohmann::json& value, std::size_t limit = 60) {
  std::string text = value.dump();
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return text;
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
/// "failed" and "out_spec"). A converted model whose record is missing from the archive is left
/// out, as is anything of the wrong type.
inline void read_runtime_variants(const nlohmann::json& recorded, Pt2Archive& archive) {
  if (const auto spec = recorded.find("out_spec"); spec != recorded.end() && spec->is_string()) {
    archive.output_spec = spec->get<std::string>();
  }
  if (const auto nones = recorded.find("none_leaves");
      nones != recorded.end() && nones->is_array()) {
    for (const auto& leaf : *nones) {
      if (leaf.is_number_unsigned()) archive.output_none_leaves.push_back(leaf.get<std::size_t>());
    }
  }
  if (const auto failed = recorded.find("failed");
      failed != recorded.end() && failed->is_object()) {
    for (const auto& [name, cause] : failed->items()) {
      archive.failed_variants[name] = cause.is_string() ? cause.get<std::string>() : cause.dump();
    }
  }
  const auto runtimes = recorded.find("runtimes");
  if (runtimes == recorded.end() || !runtimes->is_object()) return;
  // Each runtime's files, in the order its backend loads them.
  const std::map<std::string, std::vector<std::string>> layouts{{"onnx", {"record"}},
                                                                {"openvino", {"xml", "bin"}}};
  for (const auto& [name, fields] : layouts) {
    const auto found = runtimes->find(name);
    if (found == runtimes->end() || !found->is_object()) continue;
    RuntimeVariantInfo info{name};
    for (const auto& field : fields) {
      const auto record = found->find(field);
      if (record == found->end() || !record->is_string()) break;
      info.records.push_back(record->get<std::string>());
    }
    if (info.records.size() != fields.size()) continue;
    archive.runtime_variants.emplace(name, std::move(info));
  }
}

}  // namespace detail

/// Reads what a PT2 archive holds; nullopt when `path` is a zip file of another kind (such as a
/// TorchScript file). Throws c10::Error when it is no zip file at all.
inline std::optional<Pt2Archive> read_pt2_archive(const std::filesystem::path& path) {
  caffe2::serialize::PyTorchStreamReader reader(path.string());
  if (!reader.hasRecord("archive_format") || read_record(reader, "archive_format") != "pt2") {
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
  // tools/export_model.py records each compilation's precision and Inductor options.
  if (reader.hasRecord("extra/aitune.json")) {
    const auto variants = parse_json_bounded(read_record(reader, "extra/aitune.json"));
    if (variants.is_object() && variants.contains("aoti") && variants["aoti"].is_object()) {
      for (auto& info : archive.aoti_models) {
        const auto found = variants["aoti"].find(info.name);
        if (found != variants["aoti"].end()) detail::read_aoti_record(*found, info);
      }
    }
    if (variants.is_object()) detail::read_runtime_variants(variants, archive);
    std::erase_if(archive.runtime_variants, [&](const auto& entry) {
      return !std::all_of(entry.second.records.begin(), entry.second.records.end(),
                          [&](const std::string& record) { return reader.hasRecord(record); });
    });
    if (variants.is_object() && variants.contains("inputs") && variants["inputs"].is_array()) {
      for (const auto& input : variants["inputs"]) {
        const bool named = input.is_object() && input.contains("name") && input["name"].is_string();
        archive.input_names.push_back(named ? input["name"].get<std::string>() : std::string());
        archive.input_shapes.push_back(detail::recorded_shape(input));
      }
    }
  }
  return archive;
}

/// The bytes of the record `name` of the archive at `path` (a converted model's file).
inline std::string read_archive_record(const std::filesystem::path& path, const std::string& name) {
  caffe2::serialize::PyTorchStreamReader reader(path.string());
  if (!reader.hasRecord(name)) {
    throw Error(fmt::format("'{}' has no record '{}'", path.string(), name));
  }
  return read_record(reader, name);
}

/// The names of the main program's inputs, in order, from its serialized signature
/// (`module_call_graph[0].signature.forward_arg_names`); empty when it records none.
inline std::vector<std::string> read_program_input_names(const Pt2Archive& archive) {
  const auto program = archive.main_program();
  if (!program) return {};
  caffe2::serialize::PyTorchStreamReader reader(archive.path.string());
  const std::string record = "models/" + *program + ".json";
  if (!reader.hasRecord(record)) return {};
  const auto json = parse_json_bounded(read_record(reader, record));
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

/// The names of the model's forward() inputs, in order: for a `.pt2` archive those
/// tools/export_model.py recorded, else those the program's signature records; for a TorchScript
/// model those of its forward method. Empty when unknown.
[[nodiscard]] inline std::vector<std::string> input_names_of(const Model& model) {
  if (model.archive) {
    if (!model.archive->input_names.empty()) return model.archive->input_names;
    try {
      return detail::read_program_input_names(*model.archive);
    } catch (const c10::Error&) {
      return {};
    }
  }
  if (!model.has_torchscript) return {};
  const auto method = model.module.find_method("forward");
  if (!method) return {};
  std::vector<std::string> names;
  for (const auto& argument : method->function().getSchema().arguments()) {
    if (argument.name() != "self") names.push_back(argument.name());
  }
  return names;
}

/// Loads a model file for `device`: a torch.export `.pt2` archive (recognised by its content,
/// whatever its name) or a TorchScript file. Errors name the file and the cause: a missing
/// file, a folder, or a file that is neither.
[[nodiscard]] inline Model load_model(const std::filesystem::path& path,
                                      c10::Device device = c10::Device(c10::kCPU)) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw Error(fmt::format("model file '{}' does not exist", path.string()));
  }
  if (!std::filesystem::is_regular_file(path, error)) {
    throw Error(fmt::format("model path '{}' is not a file", path.string()));
  }
  std::optional<Pt2Archive> archive;
  try {
    archive = detail::read_pt2_archive(path);
  } catch (const c10::Error&) {  // not a zip file: let the TorchScript loader say why
  }
  if (archive) {
    if (archive->programs.empty() && archive->aoti_models.empty()) {
      throw Error(fmt::format("'{}' is a PT2 archive with neither an ExportedProgram nor an "
                              "AOTInductor model in it",
                              path.string()));
    }
    Model model;
    model.device = device;
    model.archive = std::move(archive);
    model.has_torchscript = false;
    model.source = path;
    return model;
  }
  try {
    Model model{torch::jit::load(path.string(), c10::Device(c10::kCPU)), device};
    model.source = path;
    return model;
  } catch (const c10::Error& cause) {
    throw Error(fmt::format("'{}' is neither a torch.export .pt2 archive nor a TorchScript model "
                            "LibTorch {}.{} can load: {}",
                            path.string(), TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR,
                            detail::summarize_error(cause)));
  } catch (const std::exception& cause) {
    throw Error(
        fmt::format("'{}' could not be loaded: {}", path.string(), detail::summarize_error(cause)));
  }
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
