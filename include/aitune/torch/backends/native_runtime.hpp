// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// NativeRuntime: runs the ExportedProgram of a torch.export `.pt2` archive with LibTorch's
/// native runtime (`torch::nativert`, through its public `ModelRunnerHandle`), which interprets
/// the exported graph op by op as eager PyTorch does. It is the baseline of every `.pt2` model,
/// as TorchEager is of a TorchScript one, where LibTorch has it: the PyPI wheels of 2.9 to 2.11
/// (AITUNE_TORCH_HAS_NATIVE_RUNTIME); elsewhere its build fails with that reason.

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/report/backend_identity.hpp"
#include "aitune/torch/backends/family.hpp"
#include "aitune/torch/backends/input_mutation.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/libtorch_messages.hpp"
#include "aitune/torch/model/model.hpp"

#include <c10/core/DeviceGuard.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if AITUNE_TORCH_HAS_NATIVE_RUNTIME
#include <torch/nativert/ModelRunnerHandle.h>
#endif

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

class NativeRuntime : public BackendLifecycle<NativeRuntime> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  static constexpr RuntimeFamily family{"nativert", "LibTorch's native runtime", "", "nativert"};

  /// Runs the archive's ExportedProgram `program`; by default its main program ("model", the
  /// name torch.export.save and tools/export_model.py give it, else the first).
  explicit NativeRuntime(std::optional<std::string> program = std::nullopt)
      : program_(std::move(program)) {}

  /// The main program of a model's own archive, which takes the archive's input ranges where it
  /// was exported with them.
  [[nodiscard]] static NativeRuntime from_archive(const Pt2Archive& archive) {
    NativeRuntime runtime;
    runtime.takes_range_ = !archive.dynamic_axes.empty();
    return runtime;
  }

  /// Whether this build can run ExportedPrograms at all.
  [[nodiscard]] static constexpr bool available() noexcept {
    return AITUNE_TORCH_HAS_NATIVE_RUNTIME != 0;
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format("NativeRuntime({})", program_.value_or("model"));
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("{}:{}", family.key, program_.value_or("model"));
  }
  /// What the key says, by field: the family and the program it runs.
  [[nodiscard]] BackendIdentity identity() const {
    return {{"family", std::string(family.name)}, {"variant", program_.value_or("model")}};
  }
  [[nodiscard]] static OutputPolicy output_policy() { return OutputPolicy{}; }
  /// LibTorch's native runtime runs each call in its own execution frame (a pool of them), so
  /// calls from several threads run at the same time (a test checks that they overlap).
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return true; }
  /// torch.export traces the program at the example inputs' shapes and specialises it to them
  /// but on the dimensions exported as a range (takes_range); another shape may fail or compute
  /// wrong values.
  [[nodiscard]] static constexpr bool shape_specialised() noexcept { return true; }
  [[nodiscard]] bool takes_range() const noexcept { return takes_range_; }

 private:
  friend class BackendLifecycle<NativeRuntime>;

  void do_build(const Model& model, std::span<const Sample> samples) {
#if AITUNE_TORCH_HAS_NATIVE_RUNTIME
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
    // the cause, rather than in the middle of the measurement. On copies: a program that writes
    // to its inputs must not change the caller's samples; it gets copies on every later call.
    if (!samples.empty()) {
      try {
        check_device(
            input_writes_.detect([this](const Sample& s) { return run(s); }, samples.front()));
      } catch (const std::exception& error) {
        runner_.reset();
        throw Error(
            fmt::format("running the first sample failed: {}", detail::summarize_error(error)));
      }
    }
#else
    (void)model;
    (void)samples;
    throw Error(fmt::format("the native runtime (torch::nativert) is in LibTorch 2.9 to 2.11 "
                            "only; this build has LibTorch {}",
                            libtorch_version()));
#endif
  }

  c10::IValue do_infer(const Sample& sample) {
    return run(sample);
  }

  void do_activate() {
    load();
  }
  void do_deactivate() {
#if AITUNE_TORCH_HAS_NATIVE_RUNTIME
    runner_.reset();
#endif
  }

  void load() {
#if AITUNE_TORCH_HAS_NATIVE_RUNTIME
    const c10::DeviceGuard device_guard(device_);
    try {
      const detail::SignaturePrintGuard no_signature_on_stdout;
      runner_ = std::make_unique<torch::nativert::ModelRunnerHandle>(archive_.string(), *program_);
    } catch (const std::exception& cause) {
      const std::string why = detail::summarize_error(cause);
      throw Error(fmt::format("the native runtime cannot load program '{}' of '{}': {}{}",
                              *program_, archive_.string(), why, unknown_output_type_advice(why)));
    }
#endif
  }

  /// What to do when the program returns a Python type the native runtime cannot rebuild (a
  /// Hugging Face ModelOutput, a namedtuple, a dataclass): LibTorch says "Unknown pytree node
  /// type: NAME".
  static std::string unknown_output_type_advice(const std::string& why) {
    constexpr std::string_view marker = "Unknown pytree node type: ";
    const auto at = why.find(marker);
    if (at == std::string::npos) return {};
    const std::string rest = why.substr(at + marker.size());
    const std::string type = rest.substr(0, rest.find_first_of(" \t\n"));
    return fmt::format(". The program returns a {}, a Python type that LibTorch's native runtime "
                       "cannot rebuild in C++; export it again with tools/export_model.py, which "
                       "returns such outputs as plain dicts, or make forward() return tensors in "
                       "tuples, lists or dicts",
                       type);
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
#if AITUNE_TORCH_HAS_NATIVE_RUNTIME
    c10::InferenceMode inference_mode;
    const c10::DeviceGuard device_guard(device_);
    std::vector<c10::IValue> inputs;
    inputs.reserve(sample.size());
    for (const auto& value : sample) {
      inputs.push_back(value.isTensor() ? c10::IValue(input_writes_.protect(
                                              value.toTensor().to(device_), value.toTensor()))
                                        : input_writes_.protect(value));
    }
    return runner_->run(inputs, {});
#else
    (void)sample;
    throw Error("the native runtime is not available in this build");
#endif
  }

  std::optional<std::string> program_;
  bool takes_range_ = false;  ///< the archive was exported with input ranges
  std::filesystem::path archive_{};
  c10::Device device_ = c10::Device(c10::kCPU);
  InputWrites input_writes_{};  ///< the program writes to its inputs: each call gets copies
#if AITUNE_TORCH_HAS_NATIVE_RUNTIME
  std::shared_ptr<torch::nativert::ModelRunnerHandle> runner_;  // shared: the backend copies
#endif
};

static_assert(Backend<NativeRuntime>);

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
