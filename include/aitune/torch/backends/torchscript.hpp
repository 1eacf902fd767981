// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// TorchScript backends: the model as loaded (TorchEager), frozen, optimize_for_inference,
/// channels-last, and reduced-precision variants. One class, ScriptModuleBackend, runs a
/// ScriptRecipe; the named types only choose the recipe.
///
/// Every backend works on its own clone of the user's module (never changing it), moves it to
/// its device and dtype before freezing (frozen weights become constants a later `.to()` would
/// not move), gives modules built in C++ the `training` attribute `eval()` and `freeze` need,
/// runs under c10::InferenceMode, and adapts each input to its device, dtype and memory format.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/report/backend_identity.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/backends/family.hpp"
#include "aitune/torch/backends/input_mutation.hpp"
#include "aitune/torch/check/compare_outputs.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/model.hpp"

#include <ATen/Parallel.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// What a ScriptModuleBackend does to the module, in this order: cast to `dtype`, move to the
/// device, channels-last weights, then optimize_for_inference (which freezes) or freeze.
struct ScriptRecipe {
  std::string name = "TorchEager";
  bool freeze = false;
  bool optimize_for_inference = false;
  bool channels_last = false;
  std::optional<c10::ScalarType> dtype{};
};

namespace detail {

/// Held while a TorchScript module is cloned, frozen or optimised (see ScriptModuleBackend).
inline std::mutex& compilation_unit_mutex() {
  static std::mutex mutex;
  return mutex;
}

/// Modules defined in C++ have no `training` attribute; eval() and freeze need one.
inline void ensure_training_attributes(torch::jit::Module& module) {
  for (auto submodule : module.modules()) {
    if (!submodule.hasattr("training")) {
      submodule.register_attribute("training", c10::BoolType::get(), false);
    }
  }
}

inline void weights_to_channels_last(torch::jit::Module& module) {
  for (const auto& parameter : module.parameters()) {
    if (parameter.dim() == 4) {
      parameter.set_data(parameter.contiguous(c10::MemoryFormat::ChannelsLast));
    }
  }
  for (const auto& buffer : module.buffers()) {
    if (buffer.dim() == 4) buffer.set_data(buffer.contiguous(c10::MemoryFormat::ChannelsLast));
  }
}

}  // namespace detail

class ScriptModuleBackend : public BackendLifecycle<ScriptModuleBackend> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  static constexpr RuntimeFamily family{"torchscript", "TorchScript", "", "torchscript"};

  explicit ScriptModuleBackend(ScriptRecipe recipe) : recipe_(std::move(recipe)) {}

  /// The baseline of every LibTorch strategy: the model as loaded.
  [[nodiscard]] static ScriptModuleBackend make_baseline(const Model&) {
    return ScriptModuleBackend(ScriptRecipe{});
  }

  /// Overrides the default tolerance of the correctness check for this backend.
  ScriptModuleBackend& set_tolerance(Tolerance tolerance) {
    tolerance_ = tolerance.checked();
    return *this;
  }

  [[nodiscard]] OutputPolicy output_policy() const {
    const auto dtype = recipe_.dtype.value_or(c10::ScalarType::Float);
    const c10::Device device = model_ ? model_->device : c10::Device(c10::kCPU);
    return OutputPolicy{tolerance_.value_or(Tolerance::for_compute(dtype, device)),
                        recipe_.dtype ? precision_of(*recipe_.dtype) : std::nullopt};
  }

  /// TorchScript methods may be called from several threads at once.
  [[nodiscard]] static constexpr bool thread_safe() noexcept { return true; }

  [[nodiscard]] const ScriptRecipe& recipe() const noexcept { return recipe_; }

  [[nodiscard]] std::string describe() const {
    std::vector<std::string> options;
    if (recipe_.dtype) options.push_back("dtype=" + short_dtype_name(*recipe_.dtype));
    return fmt::format("{}({})", recipe_.name, fmt::join(options, ", "));
  }

  /// What the key says, by field: the family, the recipe ("TorchScriptFrozen") and the dtype
  /// it computes in.
  [[nodiscard]] BackendIdentity identity() const {
    return {{"family", std::string(family.name)},
            {"variant", recipe_.name},
            {"precision", recipe_.dtype ? short_dtype_name(*recipe_.dtype) : "fp32"}};
  }

  [[nodiscard]] std::string key() const {
    return fmt::format("{}:{}{}{}:{}", family.key, recipe_.freeze ? "freeze," : "",
                       recipe_.optimize_for_inference ? "optimize," : "",
                       recipe_.channels_last ? "channels_last," : "",
                       recipe_.dtype ? short_dtype_name(*recipe_.dtype) : "fp32");
  }

 private:
  friend class BackendLifecycle<ScriptModuleBackend>;

  void do_build(const Model& model, std::span<const Sample> samples) {
    if (!model.has_torchscript) {
      throw Error(fmt::format("TorchScript backends need a TorchScript model; '{}' is a "
                              "torch.export archive (its candidates are AOTInductor models)",
                              model.archive ? model.archive->path.filename().string() : ""));
    }
    reject_unsupported(model.device);
    model_ = model;
    samples_.assign(samples.begin(), samples.end());
    load(model);
    // Run one sample now, so a model this backend cannot execute fails at build, with the
    // cause, rather than in the middle of the measurement.
    if (!samples_.empty()) {
      try {
        // On a copy: a model that writes to its inputs must not change the caller's samples.
        // If it does write, every later call gets copies of its tensors.
        (void)input_writes_.detect([this](const Sample& s) { return run(s); }, samples_.front());
      } catch (const std::exception& error) {
        do_deactivate();
        throw Error(fmt::format("running the first sample failed: {}",
                                aitune::lt::detail::summarize_error(error)));
      }
    }
  }

  c10::IValue do_infer(const Sample& sample) { return run(sample); }

  void do_activate() {
    load(*model_);
    for (int round = 0; round < 2; ++round) {  // let the profiling executor specialise
      for (const auto& sample : samples_)
        (void)run(sample);
    }
  }

  void do_deactivate() {
    forward_.reset();
    prepared_.reset();
  }

  void load(const Model& model) {
    prepared_ = prepare(model);
    forward_ = prepared_->get_method("forward");
  }

  void reject_unsupported(c10::Device device) const {
    if (recipe_.dtype == c10::ScalarType::Half && device.is_cpu() && !AITUNE_TORCH_AT_LEAST(2, 6)) {
      throw Error(fmt::format(
          "fp16 on the CPU is not supported by LibTorch {}.{} (its convolution and matmul "
          "kernels have no Half version); use bf16 on the CPU",
          TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR));
    }
  }

  [[nodiscard]] torch::jit::Module prepare(const Model& model) const {
    torch::NoGradGuard no_grad;
    // Cloning, freezing and optimising add types and methods to the CompilationUnit the model's
    // clones share, which LibTorch does not guard: two tunings of one model at once raced there
    // (ThreadSanitizer, tools/sanitize.sh thread). Builds are rare; one at a time is cheap.
    const std::lock_guard<std::mutex> one_at_a_time(detail::compilation_unit_mutex());
    torch::jit::Module module = model.module.clone();
    detail::ensure_training_attributes(module);
    module.eval();
    if (recipe_.dtype) {
      module.to(model.device, *recipe_.dtype);
    } else {
      module.to(model.device);
    }
    if (recipe_.channels_last) detail::weights_to_channels_last(module);
    if (recipe_.optimize_for_inference) return torch::jit::optimize_for_inference(module);
    if (recipe_.freeze) return torch::jit::freeze(module);
    return module;
  }

  [[nodiscard]] c10::IValue run(const Sample& sample) {
    // A server's request thread that never ran a parallel op would run the BLAS calls (matmul
    // goes to MKL, not through ATen's parallel_for) at OpenMP's default, every core per call:
    // apply LibTorch's intra-op thread count to this thread first, once.
    at::internal::lazy_init_num_threads();
    c10::InferenceMode inference_mode;
    std::vector<c10::IValue> inputs;
    inputs.reserve(sample.size());
    for (const auto& value : sample) {
      if (!value.isTensor()) {
        inputs.push_back(input_writes_.protect(value));
        continue;
      }
      at::Tensor tensor = value.toTensor();
      if (tensor.device() != model_->device) tensor = tensor.to(model_->device);
      if (recipe_.dtype && tensor.is_floating_point() && tensor.scalar_type() != *recipe_.dtype) {
        tensor = tensor.to(*recipe_.dtype);
      }
      if (recipe_.channels_last && tensor.dim() == 4) {
        tensor = tensor.contiguous(c10::MemoryFormat::ChannelsLast);
      }
      inputs.emplace_back(input_writes_.protect(std::move(tensor), value.toTensor()));
    }
    return (*forward_)(std::move(inputs));
  }

  ScriptRecipe recipe_;
  std::optional<Tolerance> tolerance_{};
  std::optional<Model> model_{};
  std::vector<Sample> samples_{};
  std::optional<torch::jit::Module> prepared_{};
  std::optional<torch::jit::Method> forward_{};  ///< looked up once, not on every call
  InputWrites input_writes_{};  ///< the model writes to its inputs: each call gets copies
};

static_assert(Backend<ScriptModuleBackend>);

/// The model as loaded, run under InferenceMode: the baseline.
class TorchEager : public ScriptModuleBackend {
 public:
  TorchEager() : ScriptModuleBackend(ScriptRecipe{}) {}
};

/// `torch::jit::freeze`: weights and attributes become constants, conv+BN folded. With a dtype,
/// this is the precision variant (bf16 on the CPU; fp16 or bf16 on CUDA).
class TorchScriptFrozen : public ScriptModuleBackend {
 public:
  explicit TorchScriptFrozen(std::optional<c10::ScalarType> dtype = std::nullopt)
      : ScriptModuleBackend(ScriptRecipe{"TorchScriptFrozen", true, false, false, dtype}) {}
};

/// `torch::jit::optimize_for_inference`: frozen, then MKLDNN ops on the CPU (fp32) and fused
/// conv+add+relu on CUDA.
class TorchScriptOptimized : public ScriptModuleBackend {
 public:
  explicit TorchScriptOptimized(std::optional<c10::ScalarType> dtype = std::nullopt)
      : ScriptModuleBackend(ScriptRecipe{"TorchScriptOptimized", true, true, false, dtype}) {}
};

/// 4-D weights and inputs in channels-last memory format, then frozen.
class ChannelsLast : public ScriptModuleBackend {
 public:
  explicit ChannelsLast(std::optional<c10::ScalarType> dtype = std::nullopt)
      : ScriptModuleBackend(ScriptRecipe{"ChannelsLast", true, false, true, dtype}) {}
};

/// A TorchScript model's candidate by name (the catalogue's names for such a model).
struct ScriptCandidate {
  std::string_view name;
  AnyBackend (*make)();
};

/// The names a TorchScript model's candidates answer to, in the order help text lists them.
inline const ScriptCandidate script_candidates[] = {
    {"eager", [] { return AnyBackend(TorchEager()); }},
    {"frozen", [] { return AnyBackend(TorchScriptFrozen()); }},
    {"optimized", [] { return AnyBackend(TorchScriptOptimized()); }},
    {"channels_last", [] { return AnyBackend(ChannelsLast()); }},
    {"bf16", [] { return AnyBackend(TorchScriptFrozen(c10::ScalarType::BFloat16)); }},
    {"fp16", [] { return AnyBackend(TorchScriptFrozen(c10::ScalarType::Half)); }},
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
