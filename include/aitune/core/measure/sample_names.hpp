// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// What a tuning's reasons call its samples (ProfilingConfig::set_sample_names).

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace aitune {

/// What a tuning's reasons call each sample: the caller's as "sample 2 of 3", counted from 1 in
/// the order given, and the samples a layer above put before them (lt::tune: the bounds of the
/// range the tuned module serves, checked and never timed) by the names that layer gives them,
/// so that a reason never names one of the caller's samples by another's number.
class SampleNames {
 public:
  SampleNames() = default;
  /// The first added.size() samples of a tuning are added[i]; the rest are the caller's.
  explicit SampleNames(std::vector<std::string> added) : added_(std::move(added)) {}

  /// Sample `index` of a tuning on `count` samples, the added ones included.
  [[nodiscard]] std::string of(std::size_t index, std::size_t count) const {
    if (index < added_.size()) return added_[index];
    return fmt::format("sample {} of {}", index - added_.size() + 1, given(count));
  }

  /// `text` about sample `index` of `count`, prefixed with which one unless it is the caller's
  /// only sample.
  [[nodiscard]] std::string at(std::size_t index, std::size_t count, std::string text) const {
    if (index >= added_.size() && given(count) <= 1) return text;
    return fmt::format("{}: {}", of(index, count), text);
  }

  [[nodiscard]] const std::vector<std::string>& added() const noexcept { return added_; }

 private:
  [[nodiscard]] std::size_t given(std::size_t count) const noexcept {
    return count > added_.size() ? count - added_.size() : 0;
  }

  std::vector<std::string> added_{};
};

}  // namespace aitune
