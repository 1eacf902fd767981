// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// NativeRuntime: runs the ExportedProgram of a torch.export `.pt2` archive with LibTorch's
/// native runtime (`torch::nativert`, through its public `ModelRunnerHandle`), which interprets
/// the exported graph op by op as eager PyTorch does. It is the baseline of every `.pt2` model,
/// as TorchEager is of a TorchScript one. The wheels of PyTorch 2.x ship it; with an older
/// LibTorch its build fails with that reason.

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/config.hpp"
#include "aitune/torch/model.hpp"
#include "aitune/torch/tolerance.hpp"

#include <c10/core/DeviceGuard.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#if AITUNE_TORCH_AT_LEAST(2, 9) && __has_include(<torch/nativert/ModelRunnerHandle.h>)
#include <torch/nativert/ModelRunnerHandle.h>
#define AITUNE_HAS_NATIVE_RUNTIME 1
#else
#define AITUNE_HAS_NATIVE_RUNTIME 0
#endif

namespace aitune::lt {

class NativeRuntime : public BackendLifecycle<NativeRuntime> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  /// Runs the archive's ExportedProgram `program`; by default its main program ("model", the
  /// name torch.export.save and tools/export_model.py give it, else the first).
  explicit NativeRuntime(std::optional<std::string> program = std::nullopt)
      : program_(std::move(program)) {}

  /// Whether this build can run ExportedPrograms at all.
  [[nodiscard]] static constexpr bool available() noexcept {
    return AITUNE_HAS_NATIVE_RUNTIME != 0;
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format("NativeRuntime({})", program_.value_or("model"));
  }
  [[nodiscard]] std::string key() const { return "nativert:" + program_.value_or("model"); }
  [[nodiscard]] static OutputPolicy output_policy() { return OutputPolicy{}; }
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return false; }

 private:
  friend class BackendLifecycle<NativeRuntime>;

  void do_build(const Model& model, std::span<const Sample> samples) {
#if AITUNE_HAS_NATIVE_RUNTIME
    if (!model.archive) {
      throw Error("NativeRuntime runs torch.export .pt2 archives; this model is TorchScript");
    }
    const auto& programs = model.archive->programs;
    if (program_ && std::find(programs.begin(), programs.end(), *program_) == programs.end()) {
      throw Error(fmt::format(
          "'{}' has no ExportedProgram '{}' (it has: {})", model.archive->path.string(), *program_,
          programs.empty() ? "none" : fmt::format("{}", fmt::join(programs, ", "))));
    }
    if (!program_) program_ = model.archive->main_program();
    if (!program_) {
      throw Error(fmt::format("'{}' holds no ExportedProgram (only AOTInductor models), so the "
                              "native runtime has nothing to run",
                              model.archive->path.string()));
    }
    archive_ = model.archive->path;
    device_ = model.device;
    load();
    // Run one sample now: a program made for another device or other inputs fails here, with
    // the cause, rather than in the middle of the measurement.
    if (!samples.empty()) {
      try {
        check_device(run(samples.front()));
      } catch (const std::exception& error) {
        runner_.reset();
        throw Error(
            fmt::format("running the first sample failed: {}", detail::summarize_error(error)));
      }
    }
#else
    (void)model;
    (void)samples;
    throw Error(fmt::format("the native runtime (torch::nativert) needs LibTorch 2.9 or newer; "
                            "this build has LibTorch {}.{}",
                            TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR));
#endif
  }

  c10::IValue do_infer(const Sample& sample) {
    return run(sample);
  }

  void do_activate() {
    load();
  }
  void do_deactivate() {
#if AITUNE_HAS_NATIVE_RUNTIME
    runner_.reset();
#endif
  }

  void load() {
#if AITUNE_HAS_NATIVE_RUNTIME
    const c10::DeviceGuard device_guard(device_);
    try {
      runner_ = std::make_unique<torch::nativert::ModelRunnerHandle>(archive_.string(), *program_);
    } catch (const std::exception& cause) {
      throw Error(fmt::format("the native runtime cannot load program '{}' of '{}': {}", *program_,
                              archive_.string(), detail::summarize_error(cause)));
    }
#endif
  }

  /// The graph's weights live on the device it was exported for; outputs elsewhere mean the
  /// archive was made for another device than the model is tuned on.
  void check_device(const c10::IValue& output) const {
    if (!output.isTensor()) return;
    const c10::Device computed = output.toTensor().device();
    const bool same =
        computed.type() == device_.type() &&
        (!device_.has_index() || !computed.has_index() || computed.index() == device_.index());
    if (!same) {
      throw Error(fmt::format("the program computes on {} but the model is tuned for {}: export it "
                              "on the device it is to run on",
                              computed.str(), device_.str()));
    }
  }

  c10::IValue run(const Sample& sample) {
#if AITUNE_HAS_NATIVE_RUNTIME
    c10::InferenceMode inference_mode;
    const c10::DeviceGuard device_guard(device_);
    std::vector<c10::IValue> inputs;
    inputs.reserve(sample.size());
    for (const auto& value : sample) {
      inputs.push_back(value.isTensor() ? c10::IValue(value.toTensor().to(device_)) : value);
    }
    return runner_->run(inputs, {});
#else
    (void)sample;
    throw Error("the native runtime is not available in this build");
#endif
  }

  std::optional<std::string> program_;
  std::filesystem::path archive_{};
  c10::Device device_ = c10::Device(c10::kCPU);
#if AITUNE_HAS_NATIVE_RUNTIME
  std::shared_ptr<torch::nativert::ModelRunnerHandle> runner_;  // shared: the backend copies
#endif
};

static_assert(Backend<NativeRuntime>);

}  // namespace aitune::lt
