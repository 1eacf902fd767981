// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The model the LibTorch backends are built from, its samples, and loading from disk.

#include "aitune/core/error.hpp"
#include "aitune/torch/config.hpp"

#include <torch/cuda.h>

#include <fmt/format.h>

#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune::lt {

/// One batch-size-1 call: the positional arguments of `forward`.
using Sample = std::vector<c10::IValue>;

/// A TorchScript module and the device it is tuned for. The backends clone the module; they
/// never change it.
struct Model {
  torch::jit::Module module;
  c10::Device device = c10::Device(c10::kCPU);
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

/// Loads a TorchScript file for `device`. Errors name the file and the cause: a missing file,
/// a folder, or a file that is not a TorchScript model.
[[nodiscard]] inline Model load_model(const std::filesystem::path& path,
                                      c10::Device device = c10::Device(c10::kCPU)) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw Error(fmt::format("model file '{}' does not exist", path.string()));
  }
  if (!std::filesystem::is_regular_file(path, error)) {
    throw Error(fmt::format("model path '{}' is not a file", path.string()));
  }
  try {
    return Model{torch::jit::load(path.string(), c10::Device(c10::kCPU)), device};
  } catch (const c10::Error& cause) {
    throw Error(fmt::format("'{}' is not a TorchScript model LibTorch {}.{} can load: {}",
                            path.string(), TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR,
                            detail::summarize_error(cause)));
  } catch (const std::exception& cause) {
    throw Error(
        fmt::format("'{}' could not be loaded: {}", path.string(), detail::summarize_error(cause)));
  }
}

}  // namespace aitune::lt
