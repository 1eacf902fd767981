// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// OnnxRuntime: runs the ONNX model a `.pt2` archive holds (tools/export_model.py --variants
/// ...,onnx converts it from the same ExportedProgram) with ONNX Runtime's CPU provider.
///
/// ONNX Runtime is loaded at run time (dlopen), through its versioned C API: the headers of one
/// release (AITUNE_WITH_ONNXRUNTIME: CMake finds `onnxruntime_c_api.h`) run any newer library,
/// and a missing or unusable library is a candidate whose build fails with the cause, never a
/// program that does not link or start. The library is the one CMake found at configure time
/// (the onnxruntime wheel's, in the project's venv), or the one the environment variable
/// AITUNE_ONNXRUNTIME_LIBRARY names at run time.
///
/// Inputs are the sample's tensors, handed to ONNX Runtime without a copy (float, integer and
/// bool); outputs are copied into torch tensors and rebuilt into the program's output structure.
/// A session runs calls from several threads at once (OrtApi::Run is thread-safe).

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/torch/backends/family.hpp"
#include "aitune/torch/backends/runtime_variant.hpp"
#include "aitune/torch/check/tolerance.hpp"
#include "aitune/torch/customization.hpp"
#include "aitune/torch/libtorch.hpp"
#include "aitune/torch/model/dtype_names.hpp"
#include "aitune/torch/model/input_gate.hpp"
#include "aitune/torch/model/model.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#if AITUNE_WITH_ONNXRUNTIME
#include <dlfcn.h>
#include <onnxruntime_c_api.h>
#endif

/// The ONNX Runtime library loaded when the environment sets no AITUNE_ONNXRUNTIME_LIBRARY:
/// CMake sets it to the library it found; otherwise the dynamic loader's search finds it.
#ifndef AITUNE_ONNXRUNTIME_LIBRARY_PATH
#define AITUNE_ONNXRUNTIME_LIBRARY_PATH "libonnxruntime.so.1"
#endif

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// ONNX Runtime's graph optimisation level (GraphOptimizationLevel of its C API).
enum class OnnxOptimization { disabled, basic, extended, all };

/// The family's names (OnnxRuntime::family), here so that the library's loader can say them.
inline constexpr RuntimeFamily onnx_runtime_family{"onnx", "ONNX Runtime", "its CPU provider",
                                                   "onnxruntime"};

#if AITUNE_WITH_ONNXRUNTIME
namespace detail {

/// The loaded ONNX Runtime: its C API and one environment for the process (never unloaded: its
/// thread pools and allocators may outlive any one session). `error` says why there is none.
struct OrtLibrary {
  const OrtApi* api = nullptr;
  OrtEnv* env = nullptr;
  std::string version{};
  std::string path{};
  std::string error{};

  /// Loads the library at `path` (a fresh load every call: for the process's one, use get()).
  [[nodiscard]] static OrtLibrary load(const std::string& path) {
    OrtLibrary library;
    library.path = path;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      library.error =
          fmt::format("{} could not be loaded from '{}' ({}): install the "
                      "onnxruntime wheel (tools/setup-venv.sh does), or set "
                      "AITUNE_ONNXRUNTIME_LIBRARY (in the environment, or as the CMake "
                      "variable) to its libonnxruntime.so",
                      onnx_runtime_family.runtime, path, why != nullptr ? why : "unknown error");
      return library;
    }
    using GetApiBase = const OrtApiBase* (*)();
    auto* get_api_base = reinterpret_cast<GetApiBase>(::dlsym(handle, "OrtGetApiBase"));
    const OrtApiBase* base = get_api_base != nullptr ? get_api_base() : nullptr;
    if (base == nullptr) {
      library.error = fmt::format("'{}' is no {} library (it has no OrtGetApiBase)", path,
                                  onnx_runtime_family.runtime);
      ::dlclose(handle);
      return library;
    }
    library.version = base->GetVersionString();
    library.api = base->GetApi(ORT_API_VERSION);
    if (library.api == nullptr) {
      library.error =
          fmt::format("{} {} at '{}' does not offer C API version {}, which these "
                      "headers need (a library older than the headers)",
                      onnx_runtime_family.runtime, library.version, path, ORT_API_VERSION);
      ::dlclose(handle);
      return library;
    }
    if (OrtStatus* status =
            library.api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "aitune", &library.env)) {
      library.error =
          fmt::format("{} {} could not make its environment: {}", onnx_runtime_family.runtime,
                      library.version, library.api->GetErrorMessage(status));
      library.api->ReleaseStatus(status);
      library.api = nullptr;
    }
    return library;
  }

  /// The process's ONNX Runtime, loaded on first use from AITUNE_ONNXRUNTIME_LIBRARY (the
  /// environment variable) or else the library CMake found.
  [[nodiscard]] static const OrtLibrary& get() {
    static const OrtLibrary library = [] {
      const char* chosen = std::getenv("AITUNE_ONNXRUNTIME_LIBRARY");
      return load(chosen != nullptr && *chosen != '\0' ? chosen : AITUNE_ONNXRUNTIME_LIBRARY_PATH);
    }();
    return library;
  }

  /// Throws an aitune::Error with the message of a failed call.
  void check(OrtStatus* status, const char* what) const {
    if (status == nullptr) return;
    std::string message = api->GetErrorMessage(status);
    api->ReleaseStatus(status);
    throw Error(fmt::format("{} {}: {}: {}", onnx_runtime_family.runtime, version, what,
                            message.substr(0, message.find('\n'))));
  }
};

/// ONNX's element type of a torch dtype; UNDEFINED for one it has not.
inline ONNXTensorElementDataType onnx_element_type(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::Float: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case c10::ScalarType::Double: return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case c10::ScalarType::Half: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case c10::ScalarType::BFloat16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
    case c10::ScalarType::Long: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case c10::ScalarType::Int: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case c10::ScalarType::Short: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case c10::ScalarType::Char: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case c10::ScalarType::Byte: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case c10::ScalarType::Bool: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    default: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  }
}

/// One ONNX Runtime session and the names of its graph's inputs and outputs. Released with it.
struct OrtSessionState {
  const OrtLibrary* ort = nullptr;
  /// What releases the session: the API itself, which outlives the process's OrtLibrary object
  /// (a module destroyed at exit, after that static, still releases its session).
  const OrtApi* api = nullptr;
  OrtSession* session = nullptr;
  OrtMemoryInfo* cpu = nullptr;
  std::vector<std::string> input_names{};
  std::vector<std::string> output_names{};
  std::vector<const char*> input_name_pointers{};
  std::vector<const char*> output_name_pointers{};

  OrtSessionState() = default;
  OrtSessionState(const OrtSessionState&) = delete;
  OrtSessionState& operator=(const OrtSessionState&) = delete;
  ~OrtSessionState() {
    if (api == nullptr) return;
    if (cpu != nullptr) api->ReleaseMemoryInfo(cpu);
    if (session != nullptr) api->ReleaseSession(session);
  }
};

}  // namespace detail
#endif

class OnnxRuntime : public RuntimeSession<OnnxRuntime> {
 public:
  static constexpr RuntimeFamily family = onnx_runtime_family;

  /// The ONNX model of the archive `package` (empty: the tuned model's own), with ONNX
  /// Runtime's defaults: every graph optimisation, and as many intra-op threads as ONNX Runtime
  /// picks (its physical cores); but its threads stop spinning after each call
  /// (set_spinning_stop).
  explicit OnnxRuntime(std::filesystem::path package = {}) : RuntimeSession(std::move(package)) {}

  /// The ONNX model a model's own `.pt2` archive holds: its "onnx" variant, or another of the
  /// family, such as its int8 quantisation "onnx_int8" (a reduced-precision candidate).
  [[nodiscard]] static OnnxRuntime from_archive(const Pt2Archive& archive,
                                                std::string variant = std::string(family.name)) {
    OnnxRuntime session(archive.path);
    session.variant_ = VariantChoice::of(archive, std::move(variant));
    return session;
  }

  /// The sessions a tuning tries of the archive's ONNX model `variant` (default_sessions): one at
  /// each of the plan's thread counts. Each runs a call on its caller's thread, so callers at
  /// once need no copies.
  [[nodiscard]] static std::vector<OnnxRuntime>
  sessions_of(const Pt2Archive& archive, const std::string& variant, const CandidatePlan& plan) {
    std::vector<OnnxRuntime> sessions;
    at_thread_counts(archive, variant, plan, sessions,
                     [&] { return from_archive(archive, variant); });
    return sessions;
  }
  /// A session at a thread count needs nothing else, whatever the plan.
  [[nodiscard]] static std::optional<OnnxRuntime> at_count(OnnxRuntime&, int,
                                                           const CandidatePlan&) {
    return std::nullopt;
  }

  /// The names `variant`'s sessions answer to (names, named): the variant's own ("onnx", every
  /// graph optimisation), and at each lower level ("onnx_extended", "onnx_basic",
  /// "onnx_disabled").
  [[nodiscard]] static std::vector<std::pair<std::string, OnnxRuntime>>
  named_forms(const Pt2Archive& archive, const std::string& variant) {
    std::vector<std::pair<std::string, OnnxRuntime>> forms{
        {variant, from_archive(archive, variant)}};
    for (const OnnxOptimization level :
         {OnnxOptimization::extended, OnnxOptimization::basic, OnnxOptimization::disabled}) {
      forms.emplace_back(fmt::format("{}_{}", variant, optimization_name(level)),
                         from_archive(archive, variant).set_optimization(level));
    }
    return forms;
  }

  /// The graph optimisation level (default: all).
  OnnxRuntime& set_optimization(OnnxOptimization level) {
    optimization_ = level;
    return *this;
  }
  /// Whether the session's threads stop spinning when a call returns (default: true).
  /// ONNX Runtime's own default keeps them spinning for a while after each call, waiting for
  /// more work: on a machine with few cores they then slow whatever runs next on those cores -
  /// another backend in a race (eager PyTorch's calls on the transformer encoder were twice as
  /// slow interleaved with a spinning session as alone, and 3-4 % slower with one that stops:
  /// docs/runtimes.md), or the rest of a server. Stopping costs the next call the threads'
  /// wake-up (up to 9 % there), measured and served alike; false suits a server calling this
  /// one session back to back. ONNX Runtime's "session.force_spinning_stop".
  OnnxRuntime& set_spinning_stop(bool stop) {
    spinning_stop_ = stop;
    return *this;
  }
  /// Whether this build has ONNX Runtime's headers (the library is loaded at build).
  [[nodiscard]] static constexpr bool available() noexcept { return AITUNE_WITH_ONNXRUNTIME != 0; }

  /// The loaded library's version ("1.32.0"), or empty where it cannot be loaded.
  [[nodiscard]] static std::string version() {
#if AITUNE_WITH_ONNXRUNTIME
    return detail::OrtLibrary::get().error.empty() ? detail::OrtLibrary::get().version : "";
#else
    return {};
#endif
  }

  /// "OnnxRuntime(model.pt2, ORT 1.32.0)", with the settings that are not the defaults.
  [[nodiscard]] std::string describe() const {
    std::string settings;
    if (optimization_ != OnnxOptimization::all) {
      settings += fmt::format(", optimization {}", optimization_name(optimization_));
    }
    if (threads_ > 0) settings += fmt::format(", {} thread{}", threads_, threads_ == 1 ? "" : "s");
    if (!spinning_stop_) settings += ", spinning after calls";
    const std::string loaded = version();
    return fmt::format("OnnxRuntime({}{}{}{}{})", package_.filename().string(),
                       variant_.named(family.name), variant_.described(), settings,
                       loaded.empty() ? "" : ", ORT " + loaded);
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("{}:{}{}:{}:{}:{}:{}", family.key, package_.string(),
                       variant_.keyed(family.name), optimization_name(optimization_), threads_,
                       spinning_stop_ ? "spinning-stop" : "spinning", version());
  }
  /// What the key says, by field: the session's (RuntimeSession), its graph optimisation level,
  /// whether its threads stop spinning after a call, and ONNX Runtime's version.
  [[nodiscard]] BackendIdentity identity() const {
    BackendIdentity identity = session_identity();
    identity["optimization"] = std::string(optimization_name(optimization_));
    identity["spinning"] = std::string(spinning_stop_ ? "stop" : "keep");
    identity["version"] = version();
    return identity;
  }
  /// ONNX Runtime fuses and reorders float work: the compiled variants' tolerance.
  [[nodiscard]] OutputPolicy output_policy() const {
    return with_variant(
        OutputPolicy{Tolerance::for_compute(c10::ScalarType::Float, c10::Device(c10::kCPU))});
  }

  /// The level's name in reports and keys.
  [[nodiscard]] static const char* optimization_name(OnnxOptimization level) noexcept {
    switch (level) {
      case OnnxOptimization::disabled: return "disabled";
      case OnnxOptimization::basic: return "basic";
      case OnnxOptimization::extended: return "extended";
      case OnnxOptimization::all: break;
    }
    return "all";
  }

 private:
  friend class RuntimeSession<OnnxRuntime>;

  static constexpr const char* missing_runtime =
      "CMake found no onnxruntime_c_api.h: run tools/fetch-onnxruntime-headers.sh, or set "
      "ONNXRUNTIME_INCLUDE_DIR";

#if AITUNE_WITH_ONNXRUNTIME
  /// Makes the session from the model's bytes (kept, so that activate() can make it again).
  void open() {
    const detail::OrtLibrary& ort = detail::OrtLibrary::get();
    if (!ort.error.empty()) throw Error(ort.error);
    auto state = std::make_shared<detail::OrtSessionState>();
    state->ort = &ort;
    state->api = ort.api;
    OrtSessionOptions* options = nullptr;
    ort.check(ort.api->CreateSessionOptions(&options), "session options");
    const std::unique_ptr<OrtSessionOptions, void (*)(OrtSessionOptions*)> owned_options(
        options, ort.api->ReleaseSessionOptions);
    static constexpr GraphOptimizationLevel levels[] = {ORT_DISABLE_ALL, ORT_ENABLE_BASIC,
                                                        ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL};
    ort.check(
        ort.api->SetSessionGraphOptimizationLevel(options, levels[static_cast<int>(optimization_)]),
        "graph optimisation level");
    if (threads_ > 0) {
      ort.check(ort.api->SetIntraOpNumThreads(options, threads_), "intra-op threads");
    }
    if (spinning_stop_) {
      ort.check(ort.api->AddSessionConfigEntry(options, "session.force_spinning_stop", "1"),
                "stopping the threads' spinning after each call");
    }
    const std::string& bytes = converted_.files.front();
    ort.check(ort.api->CreateSessionFromArray(ort.env, bytes.data(), bytes.size(), options,
                                              &state->session),
              "loading the ONNX model");
    ort.check(ort.api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &state->cpu),
              "CPU memory info");
    OrtAllocator* allocator = nullptr;
    ort.check(ort.api->GetAllocatorWithDefaultOptions(&allocator), "allocator");
    const auto names = [&](bool inputs) {
      std::size_t count = 0;
      ort.check(inputs ? ort.api->SessionGetInputCount(state->session, &count)
                       : ort.api->SessionGetOutputCount(state->session, &count),
                "graph signature");
      std::vector<std::string> result;
      for (std::size_t i = 0; i < count; ++i) {
        char* name = nullptr;
        ort.check(inputs ? ort.api->SessionGetInputName(state->session, i, allocator, &name)
                         : ort.api->SessionGetOutputName(state->session, i, allocator, &name),
                  "graph signature");
        const auto free_name = [&](char* text) {
          if (OrtStatus* status = ort.api->AllocatorFree(allocator, text)) {
            ort.api->ReleaseStatus(status);
          }
        };
        const std::unique_ptr<char, decltype(free_name)> owned_name(name, free_name);
        result.emplace_back(name);
      }
      return result;
    };
    state->input_names = names(true);
    state->output_names = names(false);
    for (const auto& name : state->input_names)
      state->input_name_pointers.push_back(name.c_str());
    for (const auto& name : state->output_names)
      state->output_name_pointers.push_back(name.c_str());
    converted_.place_inputs(state->input_names, model_inputs_);
    unknown_structure_ = converted_.flat_reason(state->output_names.size());
    state_ = std::move(state);
  }

  /// One call, past the gate (RuntimeSession::do_infer).
  c10::IValue run(const Sample& sample) {
    const detail::OrtSessionState& state = *state_;
    const detail::OrtLibrary& ort = *state.ort;
    c10::InferenceMode inference_mode;
    const std::size_t count = state.input_names.size();
    std::vector<at::Tensor> inputs;
    inputs.reserve(count);
    // Released on every path, the outputs too.
    std::vector<OrtValue*> values(count + state.output_names.size(), nullptr);
    struct Release {
      const OrtApi* api;
      std::vector<OrtValue*>* values;
      ~Release() {
        for (OrtValue* value : *values)
          if (value != nullptr) api->ReleaseValue(value);
      }
    } release{ort.api, &values};
    for (std::size_t i = 0; i < count; ++i) {
      inputs.push_back(converted_.input(sample, i, family.runtime));
      const at::Tensor& input = inputs.back();
      const auto type = detail::onnx_element_type(input.scalar_type());
      if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
        throw Error(
            fmt::format("{} takes no {} input", family.runtime, dtype_name(input.scalar_type())));
      }
      const auto sizes = input.sizes();
      ort.check(ort.api->CreateTensorWithDataAsOrtValue(state.cpu, input.data_ptr(), input.nbytes(),
                                                        sizes.data(), sizes.size(), type,
                                                        &values[i]),
                "an input");
    }
    OrtValue** outputs = values.data() + count;
    ort.check(ort.api->Run(state.session, nullptr, state.input_name_pointers.data(), values.data(),
                           count, state.output_name_pointers.data(), state.output_names.size(),
                           outputs),
              "running the model");
    std::vector<at::Tensor> flat;
    for (std::size_t i = 0; i < state.output_names.size(); ++i) {
      flat.push_back(to_tensor(ort, outputs[i]));
    }
    return converted_.outputs(std::move(flat));
  }

  /// An output as a torch tensor of its own (a copy: ONNX Runtime's buffer is its allocator's).
  static at::Tensor to_tensor(const detail::OrtLibrary& ort, OrtValue* value) {
    OrtTensorTypeAndShapeInfo* info = nullptr;
    ort.check(ort.api->GetTensorTypeAndShape(value, &info), "an output's shape");
    const std::unique_ptr<OrtTensorTypeAndShapeInfo, void (*)(OrtTensorTypeAndShapeInfo*)> owned(
        info, ort.api->ReleaseTensorTypeAndShapeInfo);
    ONNXTensorElementDataType type{};
    std::size_t rank = 0;
    ort.check(ort.api->GetTensorElementType(info, &type), "an output's type");
    ort.check(ort.api->GetDimensionsCount(info, &rank), "an output's shape");
    std::vector<std::int64_t> sizes(rank);
    ort.check(ort.api->GetDimensions(info, sizes.data(), rank), "an output's shape");
    const auto dtype = torch_dtype_of(type, detail::onnx_element_type);
    if (!dtype)
      throw Error(fmt::format("{} returned an output of element type {}", family.runtime, +type));
    at::Tensor tensor = at::empty(sizes, at::TensorOptions().dtype(*dtype));
    if (tensor.numel() > 0) {
      void* data = nullptr;
      ort.check(ort.api->GetTensorMutableData(value, &data), "an output's data");
      std::memcpy(tensor.data_ptr(), data, tensor.nbytes());
    }
    return tensor;
  }
#endif

  void close() {
    state_.reset();
  }

  OnnxOptimization optimization_ = OnnxOptimization::all;
  bool spinning_stop_ = true;
#if AITUNE_WITH_ONNXRUNTIME
  std::shared_ptr<const detail::OrtSessionState> state_{};
#else
  std::shared_ptr<const int> state_{};
#endif
};

static_assert(Backend<OnnxRuntime>);

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
