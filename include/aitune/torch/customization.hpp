// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The LibTorch family's answers to the core's customisation points, in one place. Every
/// LibTorch backend header includes this one, so whichever headers a translation unit includes,
/// a strategy over a LibTorch backend (AnyBackend or a concrete one) sees the same answers:
///
/// - output_checker: compare_outputs with the backend's output policy (check/compare_outputs.hpp);
/// - error_summary: a LibTorch error in one line (summarize_error, model/model.hpp);
/// - reference_codec: the baseline's outputs kept in a tuning cache entry
/// (check/stored_reference.hpp);
/// - device_memory: what LibTorch's CUDA allocator holds on the model's GPU
/// (measure/device_memory.hpp);
/// - default_timer: DeviceTimer, CUDA events on a GPU (measure/device_timer.hpp);
/// - sample_shape: each argument's shape and dtype (sample_shape_text, model/input_spec.hpp).
///
/// The baseline (baseline_traits) is each type's own `make_baseline`; AnyBackend's is in
/// tune/baseline.hpp, which picks the native runtime for a `.pt2` and TorchEager for TorchScript.
///
/// Beside them, the LibTorch family's own properties a backend may declare: `torch_thread_use()`
/// (how its calls use LibTorch's intra-op threads, TorchThreadUse).

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/measure/memory_use.hpp"
#include "aitune/torch/check/compare_outputs.hpp"
#include "aitune/torch/check/stored_reference.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/measure/device_memory.hpp"
#include "aitune/torch/measure/device_timer.hpp"
#include "aitune/torch/model/input_spec.hpp"
#include "aitune/torch/model/model.hpp"

#include <concepts>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// A type that declares the LibTorch model, sample and output types (model_type = lt::Model,
/// sample_type = lt::Sample, output_type = c10::IValue): what AnyBackend's constructor asks
/// before it checks the rest of TorchBackend.
template <class B>
concept DeclaresTorchTypes =
    std::same_as<typename B::model_type, Model> && std::same_as<typename B::sample_type, Sample> &&
    std::same_as<typename B::output_type, c10::IValue>;

/// A Backend over the LibTorch model, sample and output types.
template <class B>
concept TorchBackend = DeclaresTorchTypes<B> && Backend<B>;

/// How a backend's calls use LibTorch's intra-op threads: what with_torch_threads asks of a
/// candidate before it adds the same one at another count. A backend declares it with a member
/// `torch_thread_use()`; without one, it runs on them at the process's count.
enum class TorchThreadUse {
  process_count,  ///< on LibTorch's threads at the process's count (LibTorch's own backends)
  own_count,      ///< on LibTorch's threads at a count of its own (TorchThreads)
  none,           ///< not at all: a runtime with threads of its own (ONNX Runtime, OpenVINO)
};

/// A backend's use of LibTorch's threads: its own `torch_thread_use()`, or the process's count.
template <class B>
[[nodiscard]] TorchThreadUse torch_thread_use_of(const B& backend) {
  if constexpr (requires { backend.torch_thread_use(); }) {
    return backend.torch_thread_use();
  } else {
    return TorchThreadUse::process_count;
  }
}

/// A backend's output policy: its own `output_policy()`, or float32 tolerances.
template <class B>
[[nodiscard]] OutputPolicy output_policy_of(const B& backend) {
  if constexpr (requires { backend.output_policy(); }) {
    return backend.output_policy();
  } else {
    return OutputPolicy{};
  }
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt

namespace aitune {

template <lt::TorchBackend B>
struct output_checker<B> {
  [[nodiscard]] static OutputCheck check(const B& candidate, const c10::IValue* reference,
                                         const c10::IValue& actual) {
    return lt::compare_outputs(reference, actual, lt::output_policy_of(candidate));
  }
  [[nodiscard]] static OutputCheck check(const B& candidate, const c10::IValue* reference,
                                         const c10::IValue& actual, const AccuracyBudget& budget) {
    return lt::compare_outputs(reference, actual, lt::output_policy_of(candidate), &budget);
  }
  [[nodiscard]] static std::string reference_warning(const c10::IValue& reference) {
    return lt::reference_warning(reference);
  }
};

template <lt::TorchBackend B>
struct error_summary<B> {
  [[nodiscard]] static std::string of(const std::exception& error) {
    return lt::summarize_error(error);
  }
};

template <lt::TorchBackend B>
struct reference_codec<B> {
  static constexpr bool available = true;

  [[nodiscard]] static std::optional<std::string> digest(std::span<const lt::Sample> samples) {
    return lt::digest_samples(samples);
  }
  [[nodiscard]] static std::optional<std::string> encode(const std::vector<c10::IValue>& outputs) {
    return lt::encode_outputs(outputs);
  }
  [[nodiscard]] static std::vector<c10::IValue> decode(const std::string& text) {
    return lt::decode_outputs(text);
  }
};

template <lt::TorchBackend B>
struct device_memory<B> {
  static constexpr bool available = true;

  [[nodiscard]] static std::optional<DeviceMemoryReading> read(const lt::Model& model) {
    return lt::read_device_memory(model.device);
  }
  static void reset_peak(const lt::Model& model) { lt::reset_device_memory_peak(model.device); }
};

template <lt::TorchBackend B>
struct default_timer<B> {
  using type = lt::DeviceTimer;
};

template <lt::TorchBackend B>
struct sample_shape<B> {
  [[nodiscard]] static std::string of(const lt::Sample& sample) {
    return lt::sample_shape_text(sample);
  }
};

}  // namespace aitune
