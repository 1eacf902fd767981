// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Tuning through a TuningCache: on a hit the earlier decision is rebuilt and checked once
/// (MinLatencyStrategy::reuse), with no measurement; on a miss, or when the cached choice fails
/// its check now, the model is tuned and the decision stored.

#include "aitune/core/backend.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/min_latency_strategy.hpp"
#include "aitune/core/report.hpp"
#include "aitune/core/tuning_cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <concepts>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace aitune {

/// Tunes `model` with `strategy`, or reuses the decision `cache` holds for `key`. `key` must
/// cover everything that can change the decision (aitune::lt::tuning_key does, for LibTorch).
/// Cache trouble is never fatal: an unreadable file or entry, or a cached choice that fails its
/// check now, is a warning and a tuning; a store that fails is a warning. The backend type must
/// be copyable, so that a failed reuse leaves the candidates for the tuning.
template <Backend B, Timer T>
requires std::copy_constructible<B>
[[nodiscard]] TuneResult<B> tune_with_cache(MinLatencyStrategy<B, T>& strategy,
                                            const TuningCache& cache, const nlohmann::json& key,
                                            const typename B::model_type& model,
                                            std::span<const typename B::sample_type> samples,
                                            std::string module_name = "model") {
  const Logger log(strategy.config().sink());
  if (const std::optional<CachedTuning> hit = cache.find(key)) {
    std::optional<TuneReport> earlier;
    try {
      earlier = report_from_json(hit->report);
    } catch (const std::exception& error) {
      log.warn(0, fmt::format("tuning cache '{}': the entry for this key cannot be read ({}): "
                              "tuning again, and replacing it",
                              cache.path().string(), error.what()));
    }
    if (earlier) {
      earlier->module = module_name;
      log.info(0, fmt::format("tuning cache '{}': {} was selected on {}", cache.path().string(),
                              earlier->selected, hit->created));
      try {
        TuneResult<B> result = strategy.reuse(model, samples, std::move(*earlier));
        result.report.cache_hit->file = cache.path().string();
        result.report.cache_hit->created = hit->created;
        (void)cache.save_digests();  // the next start-up need not read the model again
        return result;
      } catch (const NoCorrectBackendError& error) {
        log.warn(0, fmt::format("tuning cache '{}': {}; tuning again, and replacing the entry",
                                cache.path().string(), error.what()));
      }
    }
  }
  TuneResult<B> result = strategy.tune(model, samples, std::move(module_name));
  if (result.report.every_candidate_failed()) {
    // Perhaps a passing cause (memory taken by another process): do not make it permanent.
    log.warn(0, fmt::format("tuning cache '{}': not stored, since every candidate failed",
                            cache.path().string()));
    return result;
  }
  try {
    cache.store(key, to_json(result.report));
  } catch (const std::exception& error) {  // e.g. a read-only folder: the tuning is still good
    log.warn(0, fmt::format("the decision was not stored in the tuning cache: {}", error.what()));
  }
  return result;
}

}  // namespace aitune
