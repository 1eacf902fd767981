// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// AOTInductor: runs a `.pt2` package compiled ahead of time in Python
/// (`torch._inductor.aoti_compile_and_package`, with the same torch version as this LibTorch)
/// through `torch::inductor::AOTIModelPackageLoader`, which LibTorch has from 2.6 on. With an
/// older LibTorch the backend is still there but its build fails with that reason, so a tuning
/// that lists it goes on with the other candidates.

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/config.hpp"
#include "aitune/torch/model.hpp"
#include "aitune/torch/tolerance.hpp"

#include <c10/core/DeviceGuard.h>

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#if AITUNE_TORCH_AT_LEAST(2, 6) &&                                                                 \
    __has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#define AITUNE_HAS_AOTI 1
#else
#define AITUNE_HAS_AOTI 0
#endif

namespace aitune::lt {

class AOTInductor : public BackendLifecycle<AOTInductor> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  explicit AOTInductor(std::filesystem::path package, std::string model_name = "model")
      : package_(std::move(package)), model_name_(std::move(model_name)) {}

  /// Whether this build can run AOTInductor packages at all.
  [[nodiscard]] static constexpr bool available() noexcept { return AITUNE_HAS_AOTI != 0; }

  [[nodiscard]] std::string describe() const {
    return fmt::format("AOTInductor({})", package_.filename().string());
  }
  [[nodiscard]] std::string key() const { return "aoti:" + package_.string(); }
  /// Inductor fuses and reorders float32 work like the other compiled variants.
  [[nodiscard]] static OutputPolicy output_policy() { return OutputPolicy{}; }
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return false; }

 private:
  friend class BackendLifecycle<AOTInductor>;

  void do_build(const Model& model, std::span<const Sample>) {
#if AITUNE_HAS_AOTI
    std::error_code error;
    if (!std::filesystem::is_regular_file(package_, error)) {
      throw Error(fmt::format("AOTInductor package '{}' does not exist", package_.string()));
    }
    device_ = model.device;
    try {
      loader_ =
          std::make_shared<torch::inductor::AOTIModelPackageLoader>(package_.string(), model_name_);
    } catch (const std::exception& cause) {
      throw Error(fmt::format("'{}' is not an AOTInductor package this LibTorch can load: {}",
                              package_.string(), detail::summarize_error(cause)));
    }
#else
    (void)model;
    throw Error(fmt::format(
        "AOTInductor needs LibTorch 2.6 or newer (torch::inductor::AOTIModelPackageLoader); this "
        "build has LibTorch {}.{}",
        TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR));
#endif
  }

  c10::IValue do_infer(const Sample& sample) {
#if AITUNE_HAS_AOTI
    c10::InferenceMode inference_mode;
    const c10::DeviceGuard device_guard(device_);
    std::vector<at::Tensor> inputs;
    for (const auto& value : sample) {
      if (!value.isTensor()) {
        throw Error("AOTInductor packages take tensors only; an input is a " +
                    std::string(value.tagKind()));
      }
      inputs.push_back(value.toTensor().to(device_));
    }
    std::vector<at::Tensor> outputs = loader_->run(inputs);
    if (outputs.size() == 1) return outputs.front();
    std::vector<c10::IValue> elements(outputs.begin(), outputs.end());
    return c10::ivalue::Tuple::create(std::move(elements));
#else
    (void)sample;
    throw Error("AOTInductor is not available in this build");
#endif
  }

  void do_deactivate() {
#if AITUNE_HAS_AOTI
    loader_.reset();
#endif
  }

  void do_activate() {
#if AITUNE_HAS_AOTI
    loader_ =
        std::make_shared<torch::inductor::AOTIModelPackageLoader>(package_.string(), model_name_);
#endif
  }

  std::filesystem::path package_;
  std::string model_name_;
  c10::Device device_ = c10::Device(c10::kCPU);
#if AITUNE_HAS_AOTI
  std::shared_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
#endif
};

static_assert(Backend<AOTInductor>);

}  // namespace aitune::lt
