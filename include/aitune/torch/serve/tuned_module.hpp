// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// TunedModule: the strategy's choice as a ready-to-call module.
///
/// `forward(inputs)` runs the selected backend. It may be called from several threads at once
/// (backends that are not thread-safe are serialised with a mutex). Inputs whose count, dtype
/// or rank differ from the samples it was tuned on are rejected with aitune::Error instead of
/// crashing inside LibTorch; so are other shapes, when any backend of the tuning was made for
/// the samples' shapes only (ShapeCheck::exact), so that what a module accepts does not depend
/// on which backend won. A `.pt2` model exported for a range of sizes on some axes
/// (tools/export_model.py --dynamic), whose every such backend was made for the range, takes
/// any size in it there (ShapeCheck::range), and axes of one exported dimension must agree.
/// The check costs a few comparisons per input. Outputs are
/// inference tensors (the backends run under c10::InferenceMode): clone them outside
/// InferenceMode before changing them in place or using them with autograd.

#include "aitune/core/error.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/strategy/min_latency_strategy.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/model/index_domains.hpp"
#include "aitune/torch/model/input_ranges.hpp"
#include "aitune/torch/model/ivalue_walk.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/wrappers/torch_threads.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// How much of a tensor input's shape a tuned module holds its callers to.
enum class ShapeCheck {
  rank,   ///< the rank only: every backend of the tuning takes any shape the model takes
  exact,  ///< the samples' shapes: some backend of the tuning was made for them only (an
          ///< AOTInductor compilation, an ExportedProgram traced at those shapes)
  range,  ///< the samples' shapes, but any size in its range on an axis exported as a range
          ///< (InputRanges): every backend of the tuning made for fixed shapes takes the range
};

/// What a tuned module accepts: how strictly shapes are held (ShapeCheck) and, for
/// ShapeCheck::range, the ranges; and, whatever the shapes, the values its index inputs may hold.
struct ShapeContract {
  ShapeCheck check = ShapeCheck::rank;
  InputRanges ranges{};
  IndexDomains domains{};

  ShapeContract(ShapeCheck shapes = ShapeCheck::rank, InputRanges input_ranges = {})  // NOLINT
      : check(shapes), ranges(std::move(input_ranges)) {}
};

/// What one input position accepts: the kinds of value seen there in the samples.
struct InputSignature {
  struct Accepted {
    bool is_tensor = false;
    c10::ScalarType dtype = c10::ScalarType::Undefined;  ///< tensors only
    std::int64_t rank = 0;                               ///< tensors only
    std::vector<std::int64_t> shape{};                   ///< tensors, unless ShapeCheck::rank
    std::string kind{};                                  ///< other values: "int", "bool", ...
    bool operator==(const Accepted&) const = default;
  };

  std::vector<std::vector<Accepted>> positions;
  ShapeCheck shapes = ShapeCheck::rank;
  InputRanges ranges{};    ///< under ShapeCheck::range
  IndexDomains domains{};  ///< the values index inputs may hold

  [[nodiscard]] static Accepted describe_value(const c10::IValue& value,
                                               ShapeCheck shapes = ShapeCheck::rank) {
    if (value.isTensor()) {
      const at::Tensor& tensor = value.toTensor();
      if (!tensor.defined()) return {true, c10::ScalarType::Undefined, 0, {}, {}};
      std::vector<std::int64_t> shape;
      if (shapes != ShapeCheck::rank) shape = tensor.sizes().vec();
      return {true, tensor.scalar_type(), tensor.dim(), std::move(shape), {}};
    }
    return {false, c10::ScalarType::Undefined, 0, {}, value.tagKind()};
  }

  /// The signature of the samples; they must all have the same number of inputs.
  [[nodiscard]] static InputSignature of(std::span<const Sample> samples,
                                         ShapeContract contract = {}) {
    if (samples.empty()) throw ConfigError("a tuned module needs the samples it was tuned on");
    InputSignature signature;
    const ShapeCheck shapes = contract.check;
    signature.shapes = shapes;
    if (shapes == ShapeCheck::range) signature.ranges = std::move(contract.ranges);
    signature.domains = std::move(contract.domains);
    signature.positions.resize(samples.front().size());
    for (std::size_t s = 0; s < samples.size(); ++s) {
      if (samples[s].size() != samples.front().size()) {
        throw ConfigError(fmt::format("sample {} has {} inputs, sample 1 has {}", s + 1,
                                      samples[s].size(), samples.front().size()));
      }
      for (std::size_t i = 0; i < samples[s].size(); ++i) {
        auto& accepted = signature.positions[i];
        const Accepted seen = describe_value(samples[s][i], shapes);
        if (std::find(accepted.begin(), accepted.end(), seen) == accepted.end()) {
          accepted.push_back(seen);
        }
      }
    }
    return signature;
  }

  /// What `accepted`, at input `position`, reads as in a message.
  [[nodiscard]] std::string to_text(const Accepted& accepted, std::size_t position = 0) const {
    if (!accepted.is_tensor) return fmt::format("a {}", accepted.kind);
    if (shapes == ShapeCheck::range && accepted.dtype != c10::ScalarType::Undefined) {
      return fmt::format("a {} tensor of shape {}", c10::toString(accepted.dtype),
                         ranges.describe(position, accepted.shape));
    }
    if (shapes == ShapeCheck::exact) {
      return fmt::format("a {} tensor of shape [{}]", c10::toString(accepted.dtype),
                         fmt::join(accepted.shape, ", "));
    }
    return fmt::format("a {} tensor of rank {}", c10::toString(accepted.dtype), accepted.rank);
  }

  /// Throws aitune::Error naming the first input that does not match.
  void check(const Sample& inputs, std::string_view owner) const {
    if (inputs.size() != positions.size()) {
      throw Error(
          fmt::format("{}: expects {} input(s), got {}", owner, positions.size(), inputs.size()));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const auto& accepted = positions[i];
      const c10::IValue& value = inputs[i];
      const bool ok = std::any_of(accepted.begin(), accepted.end(), [&](const Accepted& a) {
        if (a.is_tensor != value.isTensor()) return false;
        if (!a.is_tensor) return a.kind == value.tagKind();
        const at::Tensor& tensor = value.toTensor();
        if (!tensor.defined()) return a.dtype == c10::ScalarType::Undefined;
        if (tensor.scalar_type() != a.dtype || tensor.dim() != a.rank) return false;
        switch (shapes) {
          case ShapeCheck::rank: return true;
          case ShapeCheck::exact: return tensor.sizes() == c10::IntArrayRef(a.shape);
          case ShapeCheck::range: return ranges.fits(i, tensor.sizes(), a.shape);
        }
        return false;
      });
      if (!ok) {
        if (shapes == ShapeCheck::range && value.isTensor() && value.toTensor().defined()) {
          if (std::string why = ranges.out_of_range(i, value.toTensor().sizes()); !why.empty()) {
            throw Error(fmt::format("{}: {}", owner, why));
          }
        }
        std::vector<std::string> wanted;
        for (const auto& a : accepted) {
          std::string text = to_text(a, i);  // shapes in one range read alike: name them once
          if (std::find(wanted.begin(), wanted.end(), text) == wanted.end()) {
            wanted.push_back(std::move(text));
          }
        }
        // What was received, with its own shape (not the ranges).
        const InputSignature as_received{{},
                                         shapes == ShapeCheck::rank ? shapes : ShapeCheck::exact};
        const std::string got = value.isTensor() && !value.toTensor().defined()
                                    ? std::string("an undefined tensor")
                                    : as_received.to_text(describe_value(value, shapes));
        throw Error(fmt::format(
            "{}: input {} is {}; it was tuned with {}{}", owner, i, got, fmt::join(wanted, " or "),
            shapes == ShapeCheck::exact
                ? " (a backend of this tuning was made for these shapes only)"
            : shapes == ShapeCheck::range ? " (an axis shown as MIN..MAX takes any size in it)"
                                          : ""));
      }
    }
    if (shapes == ShapeCheck::range) {
      if (std::string why = ranges.disagreement(inputs); !why.empty()) {
        throw Error(fmt::format("{}: {}", owner, why));
      }
    }
    if (std::string why = domains.outside(inputs); !why.empty()) {
      throw Error(fmt::format("{}: {}", owner, why));
    }
  }
};

/// The dtype a reduced-precision backend's floating outputs come back in.
enum class OutputDtype {
  as_baseline,  ///< cast back to the model's own (the default: tuning never changes a dtype)
  as_computed,  ///< as the backend computed them (bf16, fp16): saves the cast
};

class TunedModule {
 public:
  /// Takes the strategy's result and the samples it was tuned on. `shapes`: how strictly
  /// inputs are held to the samples' shapes; lt::tune passes what the whole tuning needs
  /// (shape_check_for), so that the module accepts the same inputs whichever backend won. By
  /// default, exact when the selected backend is made for the samples' shapes only.
  /// A selected TorchThreads is served as `threads` says (served_backend); the report's decision
  /// says which.
  TunedModule(TuneResult<AnyBackend> result, std::span<const Sample> samples,
              std::optional<ShapeContract> shapes = std::nullopt,
              TunedThreads threads = TunedThreads::recommend)
      // backend_ comes first: served_backend adds its sentence to the decision report_ takes.
      : backend_(std::make_unique<AnyBackend>(
            served_backend(std::move(result.backend), threads, result.report.decision))),
        report_(std::move(result.report)),
        signature_(InputSignature::of(
            samples, shapes.value_or(ShapeContract(
                         backend_->shape_specialised() ? ShapeCheck::exact : ShapeCheck::rank)))),
        name_(fmt::format("tuned module '{}' ({})", report_.module, backend_->describe())),
        reduced_precision_(backend_->output_policy().reduced_precision),
        model_dtype_(floating_dtype_of(samples)) {
    if (!backend_->thread_safe()) serialise_ = std::make_unique<std::mutex>();
    if (backend_->state() != BackendState::active) backend_->activate();
  }

  /// Runs the selected backend. Safe to call from several threads at once. A reduced-precision
  /// backend's floating outputs come back in the model's dtype unless set_output_dtype says
  /// otherwise.
  /// Every failure is an aitune::Error naming the module (LibTorch's own errors included, their
  /// first line kept).
  c10::IValue forward(const Sample& inputs) const {
    signature_.check(inputs, name_);
    try {
      if (serialise_) {
        std::lock_guard lock(*serialise_);
        return restore_dtype(backend_->infer(inputs));
      }
      return restore_dtype(backend_->infer(inputs));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& error) {
      throw Error(fmt::format("{}: forward failed: {}", name_, summarize_error(error)));
    }
  }

  /// Whether a reduced-precision winner's outputs are cast back (the default) or not. Set it
  /// before serving: forward() reads it unsynchronised.
  TunedModule& set_output_dtype(OutputDtype dtype) noexcept {
    output_dtype_ = dtype;
    return *this;
  }
  [[nodiscard]] OutputDtype output_dtype() const noexcept { return output_dtype_; }

  [[nodiscard]] const TuneReport& report() const noexcept { return report_; }
  [[nodiscard]] const std::string& selected() const noexcept { return report_.selected; }
  [[nodiscard]] bool baseline_selected() const noexcept { return report_.baseline_selected; }
  [[nodiscard]] const InputSignature& signature() const noexcept { return signature_; }
  /// The selected backend itself (for direct calls without the input check).
  [[nodiscard]] AnyBackend& backend() const noexcept { return *backend_; }

 private:
  /// The model's own floating dtype, as its samples show it (float32 when they have none).
  static c10::ScalarType floating_dtype_of(std::span<const Sample> samples) {
    for (const Sample& sample : samples) {
      for (const c10::IValue& value : sample) {
        if (value.isTensor() && value.toTensor().is_floating_point()) {
          return value.toTensor().scalar_type();
        }
      }
    }
    return c10::ScalarType::Float;
  }

  c10::IValue restore_dtype(c10::IValue outputs) const {
    if (!reduced_precision_ || output_dtype_ == OutputDtype::as_computed) return outputs;
    return map_tensors(outputs, [this](const at::Tensor& tensor) {
      return tensor.scalar_type() == to_scalar_type(*reduced_precision_) ? tensor.to(model_dtype_)
                                                                         : tensor;
    });
  }

  std::unique_ptr<AnyBackend> backend_;  // stable address; infer is safe to call concurrently
  TuneReport report_;
  InputSignature signature_;
  std::string name_;
  std::unique_ptr<std::mutex> serialise_;  // set for backends that are not thread-safe
  std::optional<Precision> reduced_precision_;
  c10::ScalarType model_dtype_;
  OutputDtype output_dtype_ = OutputDtype::as_baseline;
};

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
