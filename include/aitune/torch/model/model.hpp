// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The model the LibTorch backends are built from, its samples, and loading from disk: a
/// TorchScript file, or a torch.export `.pt2` archive (what it holds: model/pt2_archive.hpp).

#include "aitune/core/error.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/libtorch_messages.hpp"
#include "aitune/torch/model/pt2_archive.hpp"

#include <caffe2/serialize/inline_container.h>

#include <fmt/format.h>

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
