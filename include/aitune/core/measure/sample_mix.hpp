// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The mix of input shapes a tuning decides on: its samples grouped by shape
/// (aitune::sample_shape), each shape weighted by how much of the server's traffic it stands for
/// (ProfilingConfig::set_sample_weights). The race times every shape in each block and ranks the
/// backends by the weighted mean of their per-shape medians - what the mix costs the server - not
/// by one median over calls of mixed shapes. A sample of weight 0 is checked, never timed (the
/// range's smallest and largest shapes, say).
///
/// Measurement calls are numbered; call `k` runs shape `k % S` (S timed shapes) on that shape's
/// sample `k / S` (cycled). With one shape that is sample `k` (cycled), as before shapes existed.

#include "aitune/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace aitune {

/// One shape of the mix: its samples (their indices) and its share of the traffic.
struct SampleShape {
  std::string label;  ///< aitune::sample_shape's text; empty: not told apart
  std::vector<std::size_t> samples{};
  double weight = 0.0;  ///< its share of the timed traffic (they sum to 1); 0: checked only
};

/// `weight`, sample `index`'s, when it is a finite number, 0 or more; else a ConfigError.
inline double require_weight(std::size_t index, double weight) {
  if (!(weight >= 0.0) || !std::isfinite(weight)) {
    throw ConfigError(fmt::format(
        "sample {}'s weight is {}: a weight is a finite number, 0 or more", index, weight));
  }
  return weight;
}

class SampleMix {
 public:
  /// One shape holding samples 0 to `samples` - 1, each weighing the same: the mix of a tuning
  /// whose samples are not told apart by shape. None: an empty mix, which maps a call to its own
  /// number.
  explicit SampleMix(std::size_t samples = 0) {
    if (samples == 0) return;
    SampleShape all{{}, {}, 1.0};
    for (std::size_t i = 0; i < samples; ++i)
      all.samples.push_back(i);
    timed_.push_back(std::move(all));
  }

  /// Sample `i` has shape `labels[i]` and weight `weights[i]` (none given: 1 each); a shape
  /// weighs the sum of its samples' weights, normalised over the shapes timed.
  [[nodiscard]] static SampleMix of(std::span<const std::string> labels,
                                    std::span<const double> weights) {
    if (!weights.empty() && weights.size() != labels.size()) {
      throw ConfigError(fmt::format("the sample weights are one per sample: {} weights for {} "
                                    "samples",
                                    weights.size(), labels.size()));
    }
    SampleMix mix;
    // Each weight is taken relative to the largest, so their sum is at most the count: two
    // weights of 1e308 summed to inf, and every shape then weighed 0 (nothing was timed).
    double largest = 0.0;
    for (std::size_t i = 0; i < weights.size(); ++i)
      largest = std::max(largest, require_weight(i, weights[i]));
    double total = 0.0;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const double weight = weights.empty() ? 1.0 : weights[i] > 0.0 ? weights[i] / largest : 0.0;
      std::vector<SampleShape>& shapes = weight > 0.0 ? mix.timed_ : mix.checked_only_;
      auto shape = std::find_if(shapes.begin(), shapes.end(),
                                [&](const SampleShape& s) { return s.label == labels[i]; });
      if (shape == shapes.end()) shape = shapes.insert(shapes.end(), SampleShape{labels[i]});
      shape->samples.push_back(i);
      shape->weight += weight;
      total += weight;
    }
    if (!labels.empty() && mix.timed_.empty()) {
      throw ConfigError("every sample weighs 0: at least one must be timed");
    }
    for (SampleShape& shape : mix.timed_)
      shape.weight /= total;
    return mix;
  }

  /// The shapes timed, in the order of their first sample.
  [[nodiscard]] const std::vector<SampleShape>& timed() const noexcept { return timed_; }
  /// The shapes of weight 0: checked, not timed.
  [[nodiscard]] const std::vector<SampleShape>& checked_only() const noexcept {
    return checked_only_;
  }
  /// More than one shape is timed: each block times each, and ranks by their weighted mean.
  [[nodiscard]] bool mixed() const noexcept { return timed_.size() > 1; }
  /// Shapes told apart, or samples left untimed: the report shows the mix.
  [[nodiscard]] bool worth_showing() const noexcept { return mixed() || !checked_only_.empty(); }

  /// The number of measurement call `item` of timed shape `shape` (see the file's comment).
  [[nodiscard]] std::size_t call_of(std::size_t shape, std::size_t item) const noexcept {
    return item * std::max<std::size_t>(timed_.size(), 1) + shape;
  }
  /// The timed shape measurement call `call` runs.
  [[nodiscard]] std::size_t shape_of_call(std::size_t call) const noexcept {
    return timed_.empty() ? 0 : call % timed_.size();
  }
  /// The sample measurement call `call` runs (the call itself for an empty mix).
  [[nodiscard]] std::size_t sample_of_call(std::size_t call) const noexcept {
    if (timed_.empty()) return call;
    const SampleShape& shape = timed_[call % timed_.size()];
    return shape.samples[(call / timed_.size()) % shape.samples.size()];
  }

  /// How many of the first samples the reference pass checks however short the time budget: up
  /// to every shape's first sample and every untimed one, so no shape goes unchecked.
  [[nodiscard]] std::size_t must_check() const noexcept {
    std::size_t last = 0;
    for (const SampleShape& shape : timed_)
      last = std::max(last, shape.samples.front() + 1);
    for (const SampleShape& shape : checked_only_)
      last = std::max(last, shape.samples.back() + 1);
    return last;
  }

  /// The mix's cost from each timed shape's value (`per_shape`, in timed() order): their mean
  /// weighted by the shapes' weights, over the shapes that have a value (NaN: none), renormalised.
  [[nodiscard]] double weighted(std::span<const double> per_shape) const {
    double sum = 0.0;
    double weights = 0.0;
    for (std::size_t s = 0; s < per_shape.size() && s < timed_.size(); ++s) {
      if (std::isnan(per_shape[s])) continue;
      sum += timed_[s].weight * per_shape[s];
      weights += timed_[s].weight;
    }
    return weights > 0.0 ? sum / weights : std::nan("");
  }

 private:
  std::vector<SampleShape> timed_{};
  std::vector<SampleShape> checked_only_{};
};

}  // namespace aitune
