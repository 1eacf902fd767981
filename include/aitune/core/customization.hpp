// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Customisation points through which a backend family plugs into the torch-free core.
///
/// - aitune::baseline_traits<B>: how to make the baseline (TorchEager for LibTorch) from a
///   model. By default it calls the static member `B::make_baseline(model)`.
/// - aitune::output_checker<B>: how a candidate's outputs are compared with the baseline's. By
///   default it calls the static member `B::check_outputs(candidate, reference, actual)`, or
///   falls back to `==` when the output type has it. Under an accuracy budget it is given the
///   budget too (`B::check_outputs(candidate, reference, actual, budget)`, where B has it), to
///   measure what the budget judges (core/decision/accuracy_budget.hpp).
/// - aitune::default_timer<B>: the Timer a strategy uses unless told otherwise (HostTimer).
/// - aitune::error_summary<B>: the one line a failure in B's code is reported as. By default it
///   calls the static member `B::summarize_error(error)`, or takes `error.what()`.
/// - aitune::reference_codec<B>: how the baseline's outputs on the samples are kept as text in
///   a tuning cache entry, so that a cache hit checks its choice without building the baseline.
///   Available when B has the static members `digest_samples(samples)`, `encode_outputs(outputs)`
///   and `decode_outputs(text)`; without them a hit builds the baseline, as before.
/// - aitune::after_calls<B>: what follows a run of calls to one backend, before any other
///   backend is called. By default `backend.after_calls()`, if B has it, else nothing.
/// - aitune::graph_of<B>: the graph a backend runs, which its variants in other precisions share,
///   and with it their verdict. By default `backend.graph()`, if B has it, else its own.
/// - aitune::identity_of<B>: what a backend's key says, as named fields (BackendIdentity), for
///   the report. By default `backend.identity()`, if B has it, else none.
/// - aitune::sample_shape<B>: the shape of a sample, as text: samples of one shape are timed
///   together and weighed as one (core/measure/sample_mix.hpp). By default the static member
///   `B::shape_of(sample)`, if B has it, else none: every sample of one shape.
///
/// Specialise the traits for a backend type you do not own.

#include "aitune/core/decision/accuracy_budget.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/precision.hpp"
#include "aitune/core/report/backend_identity.hpp"

#include <concepts>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune {

/// The verdict of comparing one output with the reference output.
struct OutputCheck {
  bool passed = true;
  std::string reason{};
  /// Per compared output, how close it came to failing (empty when the checker does not say).
  std::vector<OutputAccuracy> accuracy{};
  /// The precision the candidate computes in; none when unknown.
  std::optional<Precision> precision{};
  /// It computes in a lower precision than the reference.
  bool reduced_precision = false;
  /// How it was quantised ("int8"), when it was: a reduced precision beside `precision`, which
  /// stays that of its outputs.
  std::string quantization{};
  /// It failed only because values were outside the tolerance (structure, shapes, dtypes and
  /// non-finite values agreed): where an accuracy budget judges the candidate, the budget decides.
  bool outside_tolerance_only = false;

  [[nodiscard]] static OutputCheck ok() { return {}; }
  [[nodiscard]] static OutputCheck failed(std::string why) { return {false, std::move(why)}; }
};

template <class B>
struct baseline_traits {
  static constexpr bool available = requires(const typename B::model_type& model) {
    { B::make_baseline(model) } -> std::convertible_to<B>;
  };

  [[nodiscard]] static B make(const typename B::model_type& model) requires available {
    return B::make_baseline(model);
  }
};

template <class B>
struct output_checker {
  using output_type = typename B::output_type;

  /// `reference` is null when no baseline output exists (the baseline failed, or there is no
  /// baseline): the check can then only look at `actual` itself.
  [[nodiscard]] static OutputCheck check(const B& candidate, const output_type* reference,
                                         const output_type& actual) {
    if constexpr (requires { B::check_outputs(candidate, reference, actual); }) {
      return B::check_outputs(candidate, reference, actual);
    } else {
      static_assert(std::equality_comparable<output_type>,
                    "define B::check_outputs(candidate, reference, actual) or specialise "
                    "aitune::output_checker<B> to say how outputs are compared");
      if (reference == nullptr || *reference == actual) return OutputCheck::ok();
      return OutputCheck::failed("output differs from the baseline's");
    }
  }

  /// The same, under an accuracy `budget`: the check also measures what the budget judges of
  /// each output (OutputAccuracy). By default `B::check_outputs(candidate, reference, actual,
  /// budget)`, if B has it, else the check above.
  [[nodiscard]] static OutputCheck check(const B& candidate, const output_type* reference,
                                         const output_type& actual, const AccuracyBudget& budget) {
    if constexpr (requires { B::check_outputs(candidate, reference, actual, budget); }) {
      return B::check_outputs(candidate, reference, actual, budget);
    } else {
      return check(candidate, reference, actual);
    }
  }

  /// What a baseline output leaves the check unable to see (say, NaN, which candidates can only
  /// match); empty when nothing. By default `B::reference_warning(reference)`, if B has it.
  [[nodiscard]] static std::string reference_warning(const output_type& reference) {
    if constexpr (requires {
                    { B::reference_warning(reference) } -> std::convertible_to<std::string>;
                  }) {
      return B::reference_warning(reference);
    } else {
      return {};
    }
  }
};

template <class B>
struct error_summary {
  [[nodiscard]] static std::string of(const std::exception& error) {
    if constexpr (requires {
                    { B::summarize_error(error) } -> std::convertible_to<std::string>;
                  }) {
      return B::summarize_error(error);
    } else {
      return error.what();
    }
  }
};

template <class B>
struct reference_codec {
  using sample_type = typename B::sample_type;
  using output_type = typename B::output_type;

  static constexpr bool available =
      requires(std::span<const sample_type> samples, const std::vector<output_type>& outputs,
               const std::string& text) {
    { B::digest_samples(samples) } -> std::convertible_to<std::optional<std::string>>;
    { B::encode_outputs(outputs) } -> std::convertible_to<std::optional<std::string>>;
    { B::decode_outputs(text) } -> std::convertible_to<std::vector<output_type>>;
  };

  /// A digest of the samples' values (not only their shapes): outputs stored for other values
  /// must not be the reference. Nothing when the samples cannot be digested.
  [[nodiscard]] static std::optional<std::string>
  digest(std::span<const sample_type> samples) requires available {
    return B::digest_samples(samples);
  }

  /// The outputs as text (JSON-safe), or nothing when they cannot be stored.
  [[nodiscard]] static std::optional<std::string>
  encode(const std::vector<output_type>& outputs) requires available {
    return B::encode_outputs(outputs);
  }

  /// The outputs `encode` wrote; throws when `text` is not such a text.
  [[nodiscard]] static std::vector<output_type> decode(const std::string& text) requires available {
    return B::decode_outputs(text);
  }
};

/// The identity of the computation graph `backend` runs, shared by the variants that run the same
/// graph in another precision (the same ONNX model or OpenVINO IR in fp32 and bf16): their
/// verdicts are shared (a reduced-precision run of a graph whose full-precision run is incorrect
/// is incorrect too). By default `backend.graph()`, if B has it, else none (empty): a graph of
/// its own.
template <class B>
struct graph_of {
  [[nodiscard]] static std::string of(const B& backend) {
    if constexpr (requires {
                    { backend.graph() } -> std::convertible_to<std::string>;
                  }) {
      return backend.graph();
    } else {
      return {};
    }
  }
};

/// What `backend` is, as named fields (BackendIdentity): its family, variant, precision, thread
/// counts, ... By default `backend.identity()`, if B has it, else none (empty).
template <class B>
struct identity_of {
  [[nodiscard]] static BackendIdentity of(const B& backend) {
    if constexpr (requires {
                    { backend.identity() } -> std::convertible_to<BackendIdentity>;
                  }) {
      return backend.identity();
    } else {
      return {};
    }
  }
};

/// Called after each run of calls to one backend - its correctness check, its warm-up, each block
/// of the interleaved race, its measurement under the sequential schedule - and outside any
/// timed call, before another backend is called. A backend whose calls change what the whole
/// process shares (LibTorch's intra-op thread count: lt::TorchThreads) puts it back here, so
/// that the next backend, the baseline too, runs as it would alone. It may also be called when
/// no call was made (after a failed build, or a warm-up the deadline cut short): it then has
/// nothing to put back. What it throws counts as that backend's failure.
template <class B>
struct after_calls {
  static void run(B& backend) {
    if constexpr (requires { backend.after_calls(); }) backend.after_calls();
  }
};

template <class B>
struct sample_shape {
  [[nodiscard]] static std::string of(const typename B::sample_type& sample) {
    if constexpr (requires {
                    { B::shape_of(sample) } -> std::convertible_to<std::string>;
                  }) {
      return B::shape_of(sample);
    } else {
      return {};
    }
  }
};

template <class B>
struct default_timer {
  using type = HostTimer;
};

template <class B>
using default_timer_t = typename default_timer<B>::type;

}  // namespace aitune
