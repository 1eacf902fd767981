// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// OpenVino: runs the OpenVINO IR a `.pt2` archive holds (tools/export_model.py --variants
/// ...,openvino converts it from the same ExportedProgram, with f32 weights) on OpenVINO's CPU
/// device, with the latency hint, computing in f32, or in bf16 where the CPU has it (an
/// inference-precision hint: the weights stay f32 in the archive).
///
/// OpenVINO is linked (AITUNE_WITH_OPENVINO: CMake found its package, `openvino::runtime`; the
/// openvino wheel ships one). Without it the backend is still there and its build fails with
/// that reason. Inputs are the sample's tensors, handed over without a copy; outputs are copied
/// into torch tensors and rebuilt into the program's output structure. An infer request runs one
/// call at a time, so calls are serialised (thread_safe() is false: TunedModule queues them).

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/backends/runtime_variant.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#if AITUNE_WITH_OPENVINO
#include <openvino/openvino.hpp>
#endif

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

#if AITUNE_WITH_OPENVINO
namespace detail {

/// The process's OpenVINO core: it loads the device plugins once.
inline ov::Core& openvino_core() {
  static ov::Core core;
  return core;
}

/// OpenVINO's element type of a torch dtype; dynamic for one it has not.
inline ov::element::Type openvino_element_type(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Float: return ov::element::f32;
    case c10::ScalarType::Double: return ov::element::f64;
    case c10::ScalarType::Half: return ov::element::f16;
    case c10::ScalarType::BFloat16: return ov::element::bf16;
    case c10::ScalarType::Long: return ov::element::i64;
    case c10::ScalarType::Int: return ov::element::i32;
    case c10::ScalarType::Short: return ov::element::i16;
    case c10::ScalarType::Char: return ov::element::i8;
    case c10::ScalarType::Byte: return ov::element::u8;
    case c10::ScalarType::Bool: return ov::element::boolean;
    default: return ov::element::dynamic;
  }
}

/// The torch dtype of an OpenVINO element type; nullopt for one torch has not.
inline std::optional<c10::ScalarType> torch_dtype(const ov::element::Type& type) {
  for (const auto dtype : {c10::ScalarType::Float, c10::ScalarType::Double, c10::ScalarType::Half,
                           c10::ScalarType::BFloat16, c10::ScalarType::Long, c10::ScalarType::Int,
                           c10::ScalarType::Short, c10::ScalarType::Char, c10::ScalarType::Byte,
                           c10::ScalarType::Bool}) {
    if (openvino_element_type(dtype) == type) return dtype;
  }
  return std::nullopt;
}

/// A compiled model and its one infer request, with the weights they may point into (OpenVINO
/// reads a model's weights from the tensor it is given, without copying them).
struct OpenVinoState {
  std::shared_ptr<const std::string> weights;
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::size_t inputs = 0;
  std::size_t outputs = 0;
};

}  // namespace detail
#endif

class OpenVino : public BackendLifecycle<OpenVino> {
 public:
  using model_type = Model;
  using sample_type = Sample;
  using output_type = c10::IValue;

  /// The OpenVINO IR of the archive `package` (empty: the tuned model's own), computed in
  /// `precision` (OpenVINO's inference-precision hint: fp32, or bf16 where the CPU has it), with
  /// OpenVINO's latency hint and its own thread count. ConfigError for another precision.
  explicit OpenVino(std::filesystem::path package = {}, Precision precision = Precision::fp32)
      : package_(std::move(package)), precision_(precision) {
    if (precision != Precision::fp32 && precision != Precision::bf16) {
      throw ConfigError(
          fmt::format("OpenVino computes in fp32 or bf16 here, not {}", to_string(precision)));
    }
  }

  /// The IR a model's own `.pt2` archive holds.
  [[nodiscard]] static OpenVino from_archive(const Pt2Archive& archive,
                                             Precision precision = Precision::fp32) {
    return OpenVino(archive.path, precision);
  }

  /// The threads OpenVINO runs one call on; 0 (the default) lets it pick.
  OpenVino& set_threads(int threads) {
    if (threads < 0) throw ConfigError("OpenVINO's thread count cannot be negative");
    threads_ = threads;
    return *this;
  }

  /// Whether this build has OpenVINO.
  [[nodiscard]] static constexpr bool available() noexcept { return AITUNE_WITH_OPENVINO != 0; }

  /// OpenVINO's version ("2026.4.1"), or empty without it.
  [[nodiscard]] static std::string version() {
#if AITUNE_WITH_OPENVINO
    const std::string build = ov::get_openvino_version().buildNumber;
    return build.substr(0, build.find('-'));
#else
    return {};
#endif
  }

  /// Whether OpenVINO's CPU device computes in bf16 on this machine (AVX-512 BF16, AMX).
  [[nodiscard]] static bool cpu_has_bf16() {
#if AITUNE_WITH_OPENVINO
    try {
      const auto capabilities =
          detail::openvino_core().get_property("CPU", ov::device::capabilities);
      return std::find(capabilities.begin(), capabilities.end(), ov::device::capability::BF16) !=
             capabilities.end();
    } catch (const std::exception&) {
      return false;
    }
#else
    return false;
#endif
  }

  /// "OpenVino(model.pt2, f32, OV 2026.4.1)", with a thread count that is not the default.
  [[nodiscard]] std::string describe() const {
    const std::string loaded = version();
    return fmt::format(
        "OpenVino({}, {}{}{})", package_.filename().string(), to_string(precision_),
        threads_ > 0 ? fmt::format(", {} thread{}", threads_, threads_ == 1 ? "" : "s") : "",
        loaded.empty() ? "" : ", OV " + loaded);
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("openvino:{}:{}:{}:{}", package_.string(), to_string(precision_), threads_,
                       version());
  }
  /// The archive it loads the model from: the tuning cache's key covers its content.
  [[nodiscard]] std::vector<std::filesystem::path> loaded_files() const {
    return package_.empty() ? std::vector<std::filesystem::path>{}
                            : std::vector<std::filesystem::path>{package_};
  }
  /// A compiled graph's tolerance; bf16's where it computes in bf16.
  [[nodiscard]] OutputPolicy output_policy() const {
    OutputPolicy policy{Tolerance::for_precision(precision_)};
    if (precision_ != Precision::fp32) policy.reduced_precision = precision_;
    policy.unknown_structure = unknown_structure_;
    return policy;
  }
  [[nodiscard]] static constexpr bool thread_safe() noexcept {
    return false;
  }
  /// The converted model it runs: every session of it shares its verdict, whatever its threads
  /// or precision (aitune::graph_of).
  [[nodiscard]] std::string graph() const {
    return "openvino:" + package_.string();
  }
  /// Its calls run on the runtime's own threads (set_threads), not LibTorch's.
  [[nodiscard]] static constexpr TorchThreadUse torch_thread_use() noexcept {
    return TorchThreadUse::none;
  }
  /// Converted for the example inputs' shapes.
  [[nodiscard]] static constexpr bool shape_specialised() noexcept {
    return true;
  }

 private:
  friend class BackendLifecycle<OpenVino>;

  /// In the errors of a call (not describe(): that formats a string, and calls must not).
  static constexpr const char* runtime_name = "OpenVINO";

  void do_build(const Model& model, std::span<const Sample> /*samples*/) {
    if (model.archive && !package_.empty() && model.archive->path != package_) {
      throw Error(fmt::format("{} was made for '{}', but the model is '{}'", describe(),
                              package_.string(), model.archive->path.string()));
    }
    if (model.archive) package_ = model.archive->path;
    converted_ = ConvertedModel::read(model, "openvino", runtime_name);
    if (!model.device.is_cpu()) {
      throw Error(fmt::format("OpenVINO runs on the CPU here (its CPU device); the model is "
                              "tuned on {}",
                              model.device.str()));
    }
    if (precision_ == Precision::bf16 && !cpu_has_bf16()) {
      throw Error("OpenVINO's CPU device has no bf16 on this machine (it needs AVX-512 BF16 or "
                  "AMX)");
    }
    model_inputs_ = input_names_of(model);
    open();
  }

  /// Compiles the IR (kept, so that activate() can compile it again).
  void open() {
#if AITUNE_WITH_OPENVINO
    try {
      ov::Core& core = detail::openvino_core();
      if (!weights_)
        weights_ = std::make_shared<const std::string>(std::move(converted_.files.at(1)));
      auto state = std::make_shared<detail::OpenVinoState>();
      state->weights = weights_;  // the model and its compilation may point into them
      const ov::Tensor weight_tensor(ov::element::u8, ov::Shape{weights_->size()},
                                     const_cast<char*>(weights_->data()));
      const std::shared_ptr<ov::Model> graph =
          core.read_model(converted_.files.at(0), weight_tensor);
      ov::AnyMap config{ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY),
                        ov::hint::inference_precision(
                            precision_ == Precision::bf16 ? ov::element::bf16 : ov::element::f32)};
      if (threads_ > 0) config.emplace(ov::inference_num_threads(threads_));
      state->compiled = core.compile_model(graph, "CPU", config);
      state->request = state->compiled.create_infer_request();
      state->inputs = state->compiled.inputs().size();
      state->outputs = state->compiled.outputs().size();
      std::vector<std::string> graph_inputs;
      for (const auto& port : state->compiled.inputs()) {
        const auto& names = port.get_names();
        graph_inputs.push_back(names.empty() ? std::string() : port.get_any_name());
      }
      converted_.place_inputs(graph_inputs, model_inputs_);
      unknown_structure_ = converted_.flat_reason(state->outputs);
      state_ = std::move(state);
    } catch (const ov::Exception& cause) {
      throw Error(fmt::format("OpenVINO {}: {}", version(), summarize_error(cause)));
    }
#else
    throw Error("this build has no OpenVINO (CMake found no OpenVINO package: install the "
                "openvino wheel, which tools/setup-venv.sh does, or set OpenVINO_DIR)");
#endif
  }

  c10::IValue do_infer(const Sample& sample) {
#if AITUNE_WITH_OPENVINO
    detail::OpenVinoState& state = *state_;
    c10::InferenceMode inference_mode;
    std::vector<at::Tensor> inputs;  // alive until the call returns: OpenVINO reads them
    inputs.reserve(state.inputs);
    std::vector<at::Tensor> flat;
    try {
      for (std::size_t i = 0; i < state.inputs; ++i) {
        inputs.push_back(converted_.input(sample, i, runtime_name));
        const at::Tensor& input = inputs.back();
        const auto type = detail::openvino_element_type(input.scalar_type());
        if (type == ov::element::dynamic) {
          throw Error(fmt::format("OpenVINO takes no {} input", dtype_name(input.scalar_type())));
        }
        const auto sizes = input.sizes();
        state.request.set_input_tensor(
            i, ov::Tensor(type, ov::Shape(sizes.begin(), sizes.end()), input.data_ptr()));
      }
      state.request.infer();
      for (std::size_t i = 0; i < state.outputs; ++i) {
        const ov::Tensor output = state.request.get_output_tensor(i);
        const auto dtype = detail::torch_dtype(output.get_element_type());
        if (!dtype) {
          throw Error(fmt::format("OpenVINO returned an output of type {}",
                                  output.get_element_type().get_type_name()));
        }
        const ov::Shape& shape = output.get_shape();
        at::Tensor tensor = at::empty(std::vector<std::int64_t>(shape.begin(), shape.end()),
                                      at::TensorOptions().dtype(*dtype));
        if (tensor.numel() > 0) std::memcpy(tensor.data_ptr(), output.data(), tensor.nbytes());
        flat.push_back(std::move(tensor));
      }
    } catch (const ov::Exception& cause) {
      throw Error(fmt::format("OpenVINO {}: {}", version(), summarize_error(cause)));
    }
    return converted_.outputs(std::move(flat));
#else
    (void)sample;
    throw Error("this build has no OpenVINO");
#endif
  }

  void do_deactivate() {
    state_.reset();
  }
  void do_activate() {
    open();
  }

  std::filesystem::path package_{};
  Precision precision_ = Precision::fp32;
  int threads_ = 0;
  ConvertedModel converted_{};
  std::vector<std::string> model_inputs_{};  ///< the model's input names (input_names_of)
  std::string unknown_structure_{};
  std::shared_ptr<const std::string> weights_{};  ///< the IR's weights, once built
#if AITUNE_WITH_OPENVINO
  std::shared_ptr<detail::OpenVinoState> state_{};
#else
  std::shared_ptr<int> state_{};
#endif
};

static_assert(Backend<OpenVino>);

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
