// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The refusal every quantised model makes (a converted int8 model, an int8 AOTInductor
/// compilation): its accuracy is never judged on an input it was calibrated on.

#include "aitune/core/error.hpp"
#include "aitune/torch/check/stored_reference.hpp"
#include "aitune/torch/libtorch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// Throws SampleError, naming the first, when one of `samples` is an input the model `name` was
/// calibrated on (`digests`: its archive's record of them, digest_samples of each alone): the
/// accuracy of a quantised model must be checked on held-out inputs. Nothing to refuse where no
/// digests are recorded.
inline void refuse_calibration_inputs(const std::vector<std::string>& digests,
                                      const std::string& name, std::span<const Sample> samples) {
  if (digests.empty()) return;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::optional<std::string> digest = digest_samples(samples.subspan(i, 1));
    if (digest && std::find(digests.begin(), digests.end(), *digest) != digests.end()) {
      throw SampleError(i, samples.size(),
                        fmt::format("it is one of the {} inputs the '{}' model was calibrated "
                                    "on: its accuracy must be checked on held-out inputs",
                                    digests.size(), name));
    }
  }
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
