// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Reads what a torch.export `.pt2` archive holds without loading it (Pt2Archive,
/// model/archive_contents.hpp): its ExportedPrograms, its AOTInductor compilations, and what
/// tools/export_model.py recorded in `extra/aitune.json` (model/archive_records.hpp). Every
/// record is read within a size bound: the archive is untrusted.

#include "aitune/core/error.hpp"
#include "aitune/core/text/format.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/archive_contents.hpp"
#include "aitune/torch/model/archive_records.hpp"

#include <caffe2/serialize/inline_container.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

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

/// Why the record name `record` could write outside the folder a loader unpacks the archive
/// into (empty when it cannot): an absolute name, or one with a `..` component. LibTorch's
/// AOTInductor loader writes each of a compilation's records to its temporary folder + the name,
/// unchecked (a zip slip: 2.11 overwrote a user's file so).
inline std::string escaping_record(std::string_view record) {
  if (record.starts_with('/')) return "it is an absolute path";
  for (std::size_t start = 0; start <= record.size();) {
    const std::size_t end = std::min(record.find('/', start), record.size());
    if (record.substr(start, end - start) == "..") return "it has a '..' component";
    start = end + 1;
  }
  return {};
}

/// Throws Error naming the first record of `records` (the archive at `path`'s) that could write
/// outside an extraction folder: such an archive is refused before any loader sees it.
inline void refuse_escaping_records(const std::filesystem::path& path,
                                    const std::vector<std::string>& records) {
  for (const std::string& record : records) {
    if (const std::string why = escaping_record(record); !why.empty()) {
      throw Error(fmt::format("'{}' is refused: its entry '{}' would be unpacked outside the "
                              "archive's folder ({}); a damaged or hostile archive",
                              path.string(), aitune::detail::printable_excerpt(record, 200), why));
    }
  }
}

/// Reads what a PT2 archive holds; nullopt when `path` is a zip file of another kind (such as a
/// TorchScript file). Throws c10::Error when it is no zip file at all, and Error when an entry's
/// name could write outside the folder it is unpacked into (refuse_escaping_records).
inline std::optional<Pt2Archive> read_pt2_archive(const std::filesystem::path& path) {
  caffe2::serialize::PyTorchStreamReader reader(path.string());
  const std::uint64_t bound = record_size_bound(path);
  if (!reader.hasRecord("archive_format") ||
      read_record(reader, "archive_format", bound) != "pt2") {
    return std::nullopt;
  }
  const std::vector<std::string> records = reader.getAllRecords();
  refuse_escaping_records(path, records);
  Pt2Archive archive{path};
  for (const std::string& record : records) {
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
