// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Real inputs from Python: a sample saved with `torch.save` (a tensor, or a tuple or list of
/// forward() arguments) read back as a Sample; and outputs saved the same way (what eager
/// PyTorch returned for a sample: tools/export_model.py --save-io), read back as one value to
/// compare a tuned module's outputs with. LibTorch's own loader (torch::pickle_load) reads the
/// file; in front of it stand the limits a file from outside must pass - its size, the zip
/// container torch.save writes - and behind it the structure a Sample may have.

#include "aitune/core/error.hpp"
#include "aitune/core/text/zip_structure.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"
#include "aitune/torch/model/model.hpp"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// What a sample file may hold. The defaults are far above any batch-size-1 input and far below
/// what would exhaust a machine.
struct SampleFileLimits {
  std::uintmax_t max_bytes = std::uintmax_t{1} << 32;  ///< 4 GiB
  std::size_t max_values = 4096;                       ///< leaves: tensors and scalars
  std::size_t max_depth = 8;                           ///< nesting of tuples, lists, dicts
};

namespace detail {

/// Counts the leaves of one argument and refuses what a forward() argument cannot be. `what`
/// names the kind of file in messages ("sample file").
inline void check_sample_value(const c10::IValue& value, const std::string& path, std::size_t depth,
                               std::size_t& leaves, const SampleFileLimits& limits,
                               const std::string& file, std::string_view what = "sample file") {
  const auto refuse = [&](std::string_view why) {
    return ConfigError(fmt::format("{} '{}': {} {}", what, file, path, why));
  };
  if (depth > limits.max_depth) {
    throw refuse(fmt::format("is nested deeper than {} levels", limits.max_depth));
  }
  if (container_of(value) != Container::none) {
    for (const IValueChild& child : children_of(value))
      check_sample_value(child.value, path + child.label, depth + 1, leaves, limits, file, what);
    return;
  }
  if (++leaves > limits.max_values) {
    throw ConfigError(
        fmt::format("{} '{}' holds more than {} values", what, file, limits.max_values));
  }
  if (value.isTensor()) {
    if (value.toTensor().layout() != c10::kStrided) {
      throw refuse(fmt::format("is a {} tensor; only dense tensors are read",
                               c10::str(value.toTensor().layout())));
    }
    return;
  }
  if (value.isInt() || value.isDouble() || value.isBool() || value.isNone() || value.isString()) {
    return;
  }
  throw refuse(
      fmt::format("is a {}, which is not a tensor, number, bool, string or None", value.tagKind()));
}

inline void check_sample_size(const std::string& file, std::uintmax_t bytes,
                              const SampleFileLimits& limits,
                              std::string_view what = "sample file") {
  if (bytes > limits.max_bytes) {
    throw ConfigError(fmt::format("{} '{}' is {} bytes, more than the limit of {}", what, file,
                                  bytes, limits.max_bytes));
  }
}

/// The value torch.save wrote into `data`, once the bytes have passed the limits a file from
/// outside must pass.
inline c10::IValue unpickle_saved(const std::vector<char>& data, const std::string& file,
                                  const SampleFileLimits& limits, std::string_view what) {
  check_sample_size(file, data.size(), limits, what);
  // torch.save has written a zip archive since PyTorch 1.6; the legacy format is a bare pickle
  // that LibTorch's loader does not read.
  if (data.size() < 4 || std::string_view(data.data(), 4) != std::string_view("PK\x03\x04", 4)) {
    throw ConfigError(fmt::format("{} '{}' is not what torch.save writes (a zip "
                                  "archive; save it with PyTorch 1.6 or newer, without "
                                  "_use_new_zipfile_serialization=False)",
                                  what, file));
  }
  // LibTorch's zip reader trusts the offsets in the archive (a damaged one crashed it when
  // fuzzed): every record must lie inside the bytes first.
  if (const auto problem = check_zip_structure(data)) {
    throw ConfigError(fmt::format("{} '{}' is a damaged zip archive: {}", what, file, *problem));
  }
  try {
    return torch::jit::pickle_load(data);
  } catch (const std::exception& failure) {
    throw ConfigError(
        fmt::format("LibTorch cannot read {} '{}': {}", what, file, summarize_error(failure)));
  }
}

/// The bytes of the file at `path`, checked against the size limit before they are read.
inline std::vector<char> read_saved_file(const std::filesystem::path& path,
                                         const SampleFileLimits& limits, std::string_view what) {
  const std::string file = path.string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ConfigError(fmt::format("{} '{}' does not exist or is not a file", what, file));
  }
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  if (error) throw ConfigError(fmt::format("{} '{}': {}", what, file, error.message()));
  check_sample_size(file, bytes, limits, what);  // before anything is read
  std::vector<char> data(static_cast<std::size_t>(bytes));
  std::ifstream stream(path, std::ios::binary);
  if (!stream.read(data.data(), static_cast<std::streamsize>(data.size()))) {
    throw ConfigError(fmt::format("cannot read {} '{}'", what, file));
  }
  return data;
}

}  // namespace detail

/// The forward() arguments in the bytes of a sample file, named `file` in errors:
/// load_sample_file reads the file, a fuzzer feeds bytes directly.
[[nodiscard]] inline Sample load_sample_bytes(const std::vector<char>& data,
                                              const std::string& file, c10::Device device,
                                              const SampleFileLimits& limits = {}) {
  const c10::IValue value = detail::unpickle_saved(data, file, limits, "sample file");
  Sample sample;
  if (value.isTensor()) {
    sample.push_back(value);
  } else if (value.isTuple() || value.isList()) {
    for (const IValueChild& child : children_of(value))
      sample.push_back(child.value);
  } else {
    throw ConfigError(fmt::format("sample file '{}' holds a {}: save a tensor, or a tuple or "
                                  "list of the forward() arguments",
                                  file, value.isGenericDict() ? "dict" : value.tagKind()));
  }
  if (sample.empty()) throw ConfigError(fmt::format("sample file '{}' holds no argument", file));
  std::size_t leaves = 0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    detail::check_sample_value(sample[i], fmt::format("argument {}", i), 1, leaves, limits, file);
    sample[i] = map_tensors(sample[i], [&](const at::Tensor& tensor) { return tensor.to(device); });
  }
  return sample;
}

/// The forward() arguments saved in `path` by `torch.save(x, path)`: x a tensor (one argument)
/// or a tuple or list (its elements are the arguments; each a tensor, number, bool, string,
/// None, or a tuple, list or dict of them). Tensors are moved to `device`. Throws ConfigError for
/// a missing, oversized, non-zip or wrongly structured file, and for one LibTorch cannot read.
[[nodiscard]] inline Sample load_sample_file(const std::filesystem::path& path, c10::Device device,
                                             const SampleFileLimits& limits = {}) {
  return load_sample_bytes(detail::read_saved_file(path, limits, "sample file"), path.string(),
                           device, limits);
}

/// The outputs saved in `path` by `torch.save(outputs, path)` (tools/export_model.py --save-io
/// writes eager PyTorch's): a tensor, or tuples, lists and dicts of tensors, numbers, strings and
/// None, kept as saved (a dict's keys in their order). Tensors come back on the CPU. Throws
/// ConfigError as load_sample_file does.
[[nodiscard]] inline c10::IValue load_outputs_file(const std::filesystem::path& path,
                                                   const SampleFileLimits& limits = {}) {
  constexpr std::string_view what = "outputs file";
  const std::string file = path.string();
  c10::IValue value =
      detail::unpickle_saved(detail::read_saved_file(path, limits, what), file, limits, what);
  std::size_t leaves = 0;
  detail::check_sample_value(value, "output", 0, leaves, limits, file, what);
  return map_tensors(value, [](const at::Tensor& tensor) { return tensor.to(c10::kCPU); });
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
