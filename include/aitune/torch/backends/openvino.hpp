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
/// into torch tensors and rebuilt into the program's output structure.
///
/// Calls from several threads run at once, each on an infer request of its own (a pool that
/// grows to the callers' number), up to the compiled model's streams: OpenVINO's CPU device runs
/// one request at a time per stream. The latency hint (the default) makes one stream, which
/// gives one call every core and makes the others take turns. Two ways past it, each part of
/// the candidate (its name and its key), so that what the race measured is what is served:
/// `set_streams(n)` compiles n streams, each with its share of the threads (a call is handed to
/// a stream's thread: slower alone, measured 20-30 % on small models); `set_copies(n)` compiles
/// up to n copies of one stream as calls come at once (each runs on its caller's thread: as
/// fast alone; each holds the weights).

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

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
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

/// The compiled copies of a model and their idle infer requests, with the weights they may
/// point into (OpenVINO reads a model's weights from the tensor it is given, without copying
/// them). A request runs one call at a time: each call takes an idle one, or a new one when all
/// are busy - on a copy compiled for it while there are fewer than `max_copies`, else on the
/// copies there are, in turn - and gives it back; the pool holds as many requests as calls have
/// run at once.
struct OpenVinoState {
  std::shared_ptr<const std::string> weights;
  std::shared_ptr<const ov::Model> graph;
  ov::AnyMap config;
  std::size_t max_copies = 1;
  std::vector<ov::CompiledModel> copies;  ///< the first made at build; the others on demand
  std::size_t inputs = 0;
  std::size_t outputs = 0;

  [[nodiscard]] ov::InferRequest take_request() {
    const std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      ov::InferRequest request = std::move(idle_.back());
      idle_.pop_back();
      return request;
    }
    // Compiled under the lock: the calls that find every request busy meanwhile would
    // otherwise compile copies of their own.
    if (copies.size() < max_copies) {
      copies.push_back(openvino_core().compile_model(graph, "CPU", config));
      return copies.back().create_infer_request();
    }
    return copies[requests_++ % copies.size()].create_infer_request();
  }
  void give_back(ov::InferRequest request) {
    const std::lock_guard lock(mutex_);
    idle_.push_back(std::move(request));
  }

 private:
  std::mutex mutex_;
  std::vector<ov::InferRequest> idle_;
  std::size_t requests_ = 0;
};

/// A call's infer request, given back to the pool when the call ends, whichever way.
class BorrowedRequest {
 public:
  explicit BorrowedRequest(OpenVinoState& state) : state_(state), request_(state.take_request()) {}
  BorrowedRequest(const BorrowedRequest&) = delete;
  BorrowedRequest& operator=(const BorrowedRequest&) = delete;
  ~BorrowedRequest() {
    try {
      state_.give_back(std::move(request_));
    } catch (...) {  // NOLINT(bugprone-empty-catch): a request not pooled is only made again
    }
  }
  ov::InferRequest& operator*() noexcept { return request_; }
  ov::InferRequest* operator->() noexcept { return &request_; }

 private:
  OpenVinoState& state_;
  ov::InferRequest request_;
};

}  // namespace detail
#endif

class OpenVino : public RuntimeSession<OpenVino> {
 public:
  static constexpr RuntimeFamily family{"openvino", "OpenVINO", "its CPU device", "openvino"};

  /// The OpenVINO IR of the archive `package` (empty: the tuned model's own), computed in
  /// `precision` (OpenVINO's inference-precision hint: fp32, or bf16 where the CPU has it), with
  /// OpenVINO's latency hint and its own thread count. ConfigError for another precision.
  explicit OpenVino(std::filesystem::path package = {}, Precision precision = Precision::fp32)
      : RuntimeSession(std::move(package)), precision_(precision) {
    if (precision != Precision::fp32 && precision != Precision::bf16) {
      throw ConfigError(
          fmt::format("OpenVino computes in fp32 or bf16 here, not {}", to_string(precision)));
    }
  }

  /// The IR a model's own `.pt2` archive holds: its "openvino" variant, or another of the
  /// family, such as its int8 quantisation "openvino_int8" (a reduced-precision candidate).
  [[nodiscard]] static OpenVino from_archive(const Pt2Archive& archive,
                                             Precision precision = Precision::fp32,
                                             std::string variant = std::string(family.name)) {
    OpenVino session(archive.path, precision);
    session.variant_ = VariantChoice::of(archive, std::move(variant));
    return session;
  }

  /// The sessions a tuning tries of the archive's IR `variant` (default_sessions): in f32, and in
  /// bf16 too where the CPU has it and the archive holds the IR (for a quantised IR, its float
  /// layers in bf16: OpenVINO's own default there, so what a user who quantised by hand with NNCF
  /// runs; on a Zen 4 EPYC, SqueezeNet 1.1's int8 IR took 0.85x the time of its fp32 run), each
  /// at every thread count of the plan. A session on fewer threads than the cores serves that
  /// many more callers at once on copies of its own (cores / threads); tuned for callers at once,
  /// the session at the runtime's default threads is listed again with a stream per caller (up to
  /// the cores), each with its share of them.
  [[nodiscard]] static std::vector<OpenVino>
  sessions_of(const Pt2Archive& archive, const std::string& variant, const CandidatePlan& plan) {
    std::vector<OpenVino> sessions;
    const auto in = [&](Precision precision) {
      at_thread_counts(archive, variant, plan, sessions,
                       [&] { return from_archive(archive, precision, variant); });
    };
    in(Precision::fp32);
    if (archive.runtime_variants.contains(variant) && cpu_has_bf16()) in(Precision::bf16);
    return sessions;
  }

  /// `session` at `count` threads as a tuning for `plan` sets it: on fewer threads than the
  /// cores, with copies for as many more callers at once (cores / threads); at the runtime's
  /// default threads, for callers at once, it returns the same session again with a stream per
  /// caller (up to the cores), to try after it.
  [[nodiscard]] static std::optional<OpenVino> at_count(OpenVino& session, int count,
                                                        const CandidatePlan& plan) {
    if (count > 0 && plan.cores / static_cast<unsigned>(count) > 1)
      session.set_copies(static_cast<int>(plan.cores / static_cast<unsigned>(count)));
    if (count != 0 || plan.callers <= 1 || plan.cores <= 1) return std::nullopt;
    OpenVino streams = session;
    streams.set_streams(std::min(plan.callers, static_cast<int>(plan.cores)));
    return streams;
  }

  /// The names `variant`'s sessions answer to (names, named): the variant's own ("openvino", in
  /// f32) and in bf16 ("openvino_bf16").
  [[nodiscard]] static std::vector<std::pair<std::string, OpenVino>>
  named_forms(const Pt2Archive& archive, const std::string& variant) {
    return {{variant, from_archive(archive, Precision::fp32, variant)},
            {variant + "_bf16", from_archive(archive, Precision::bf16, variant)}};
  }

  /// The calls that run at once (OpenVINO's streams), each on set_threads() threads (with 0
  /// threads OpenVINO shares the cores among the streams); 0 (the default) is the latency hint's
  /// one stream. Set it before build.
  OpenVino& set_streams(int streams) {
    if (streams < 0) {
      throw ConfigError(fmt::format("{}'s stream count cannot be negative", family.runtime));
    }
    streams_ = streams;
    return *this;
  }
  /// The compiled copies calls may run on at once (each with its own streams): one is made at
  /// build, the others when a call finds every request busy (a compilation, once). A copy of one
  /// stream runs a call on the caller's thread, as fast alone as the only copy; more streams hand
  /// each call to a stream's thread. 1 (the default): calls beyond the streams take turns.
  /// Copies run unpinned (OpenVINO's CPU pinning would put them on the same cores). Each holds
  /// the model's weights. Set it before build; at least 1.
  OpenVino& set_copies(int copies) {
    if (copies < 1) {
      throw ConfigError(fmt::format("an {} session needs at least 1 copy", family.runtime));
    }
    copies_ = copies;
    return *this;
  }
  [[nodiscard]] int streams() const noexcept { return streams_; }
  [[nodiscard]] int copies() const noexcept { return copies_; }

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

  /// "OpenVino(model.pt2, f32, OV 2026.4.1)", with the thread, stream and copy counts that are
  /// not the default ("OpenVino(model.pt2, bf16, 1 thread, up to 2 copies, OV 2026.4.1)").
  [[nodiscard]] std::string describe() const {
    const std::string loaded = version();
    const auto count = [](int n, const char* what) {
      return n > 0 ? fmt::format(", {} {}{}", n, what, n == 1 ? "" : "s") : std::string();
    };
    return fmt::format("OpenVino({}{}, {}{}{}{}{}{})", package_.filename().string(),
                       variant_.named(family.name), to_string(precision_), variant_.described(),
                       count(threads_, "thread"), count(streams_, "stream"),
                       copies_ > 1 ? fmt::format(", up to {} copies", copies_) : "",
                       loaded.empty() ? "" : ", OV " + loaded);
  }
  [[nodiscard]] std::string key() const {
    return fmt::format("{}:{}{}:{}:{}:{}:{}:{}", family.key, package_.string(),
                       variant_.keyed(family.name), to_string(precision_), threads_, streams_,
                       copies_, version());
  }
  /// What the key says, by field: the session's (RuntimeSession), the precision it computes in,
  /// its streams and copies, and OpenVINO's version.
  [[nodiscard]] BackendIdentity identity() const {
    BackendIdentity identity = session_identity();
    identity["precision"] = std::string(to_string(precision_));
    identity["streams"] = streams_;
    identity["copies"] = copies_;
    identity["version"] = version();
    return identity;
  }
  /// A compiled graph's tolerance; bf16's where it computes in bf16. (Calls run at once up to
  /// streams(), one with the latency hint, times copies(); more take turns.)
  [[nodiscard]] OutputPolicy output_policy() const {
    OutputPolicy policy{Tolerance::for_precision(precision_)};
    if (precision_ != Precision::fp32) policy.reduced_precision = precision_;
    return with_variant(policy);
  }

 private:
  friend class BackendLifecycle<OpenVino>;
  friend class RuntimeSession<OpenVino>;

  /// RuntimeSession's build, with the bf16 check before the IR is compiled.
  void do_build(const Model& model, std::span<const Sample> samples) {
    read_converted(model, samples);
    if (precision_ == Precision::bf16 && !cpu_has_bf16()) {
      throw Error(fmt::format("{}'s CPU device has no bf16 on this machine (it needs AVX-512 BF16 "
                              "or AMX)",
                              family.runtime));
    }
    open_session();
  }

  static constexpr const char* missing_runtime =
      "CMake found no {0} package: install the openvino wheel, which tools/setup-venv.sh does, "
      "or set OpenVINO_DIR";

#if AITUNE_WITH_OPENVINO
  /// Compiles the IR (kept, so that activate() can compile it again).
  void open() {
    try {
      ov::Core& core = detail::openvino_core();
      if (!weights_)
        weights_ = std::make_shared<const std::string>(std::move(converted_.files.at(1)));
      auto state = std::make_shared<detail::OpenVinoState>();
      state->weights = weights_;  // the model and its compilation may point into them
      const ov::Tensor weight_tensor(ov::element::u8, ov::Shape{weights_->size()},
                                     const_cast<char*>(weights_->data()));
      state->graph = core.read_model(converted_.files.at(0), weight_tensor);
      ov::AnyMap config{ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY),
                        ov::hint::inference_precision(
                            precision_ == Precision::bf16 ? ov::element::bf16 : ov::element::f32)};
      // OpenVINO's thread count is the compiled model's, shared by its streams.
      if (streams_ > 0) config.emplace(ov::num_streams(streams_));
      if (threads_ > 0) config.emplace(ov::inference_num_threads(threads_ * std::max(streams_, 1)));
      // Pinned, every copy's threads would take the same cores: the copies would take turns.
      if (copies_ > 1) config.emplace(ov::hint::enable_cpu_pinning(false));
      state->config = config;
      state->max_copies = static_cast<std::size_t>(copies_);
      state->copies.push_back(core.compile_model(state->graph, "CPU", config));
      ov::CompiledModel& compiled = state->copies.front();
      state->give_back(compiled.create_infer_request());  // the first call's, made now
      state->inputs = compiled.inputs().size();
      state->outputs = compiled.outputs().size();
      std::vector<std::string> graph_inputs;
      for (const auto& port : compiled.inputs()) {
        const auto& names = port.get_names();
        graph_inputs.push_back(names.empty() ? std::string() : port.get_any_name());
      }
      converted_.place_inputs(graph_inputs, model_inputs_);
      unknown_structure_ = converted_.flat_reason(state->outputs);
      state_ = std::move(state);
    } catch (const ov::Exception& cause) {
      throw Error(fmt::format("{} {}: {}", family.runtime, version(), summarize_error(cause)));
    }
  }

  /// One call, past the gate (RuntimeSession::do_infer), on a free request.
  c10::IValue run(const Sample& sample) {
    detail::OpenVinoState& state = *state_;
    c10::InferenceMode inference_mode;
    try {
      detail::BorrowedRequest request(state);
      return infer_on(*request, state, sample);
    } catch (const ov::Exception& cause) {
      throw Error(fmt::format("{} {}: {}", family.runtime, version(), summarize_error(cause)));
    }
  }

  c10::IValue infer_on(ov::InferRequest& request, const detail::OpenVinoState& state,
                       const Sample& sample) {
    std::vector<at::Tensor> inputs;  // alive until the call returns: OpenVINO reads them
    inputs.reserve(state.inputs);
    std::vector<at::Tensor> flat;
    for (std::size_t i = 0; i < state.inputs; ++i) {
      inputs.push_back(converted_.input(sample, i, family.runtime));
      const at::Tensor& input = inputs.back();
      const auto type = detail::openvino_element_type(input.scalar_type());
      if (type == ov::element::dynamic) {
        throw Error(
            fmt::format("{} takes no {} input", family.runtime, dtype_name(input.scalar_type())));
      }
      const auto sizes = input.sizes();
      request.set_input_tensor(
          i, ov::Tensor(type, ov::Shape(sizes.begin(), sizes.end()), input.data_ptr()));
    }
    request.infer();
    for (std::size_t i = 0; i < state.outputs; ++i) {
      const ov::Tensor output = request.get_output_tensor(i);
      const auto dtype = torch_dtype_of(output.get_element_type(), detail::openvino_element_type);
      if (!dtype) {
        throw Error(fmt::format("{} returned an output of type {}", family.runtime,
                                output.get_element_type().get_type_name()));
      }
      const ov::Shape& shape = output.get_shape();
      at::Tensor tensor = at::empty(std::vector<std::int64_t>(shape.begin(), shape.end()),
                                    at::TensorOptions().dtype(*dtype));
      if (tensor.numel() > 0) std::memcpy(tensor.data_ptr(), output.data(), tensor.nbytes());
      flat.push_back(std::move(tensor));
    }
    return converted_.outputs(std::move(flat));
  }
#endif

  void close() {
    state_.reset();
  }

  Precision precision_ = Precision::fp32;
  int streams_ = 0;
  int copies_ = 1;
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
