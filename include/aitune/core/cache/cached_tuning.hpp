// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Tuning through a TuningCache: on a hit the earlier decision is rebuilt and checked once
/// (MinLatencyStrategy::reuse), with no measurement; on a miss, or when the cached choice fails
/// its check now, the model is tuned and the decision stored.
///
/// The file is untrusted: a hit whose own report contradicts its choice is a miss, and a hit's
/// choice is checked against the baseline, built again. Where the cache signs its entries (a
/// key, TuningCache::set_key) and the backend type has an aitune::reference_codec, a signed
/// entry also keeps the baseline's outputs on the samples, with a digest of the samples'
/// values: a hit on the same values then checks its choice against them, and only the selected
/// backend is built. Other samples, an unsigned entry, or stored outputs that cannot be read (a
/// warning) build the baseline; an unsigned entry whose choice passes is signed then.

#include "aitune/core/backend.hpp"
#include "aitune/core/cache/reuse.hpp"
#include "aitune/core/cache/sha256.hpp"
#include "aitune/core/cache/single_flight.hpp"
#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/strategy/min_latency_strategy.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <concepts>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune {

namespace detail {

/// The baseline's outputs of a tuning (TuneResult::reference_outputs), as an entry's
/// `reference`; null when there are none to store: no codec, the check was off, the baseline
/// failed, or the text would be over the cache's limit.
template <Backend B>
[[nodiscard]] nlohmann::json
reference_to_store(const std::vector<typename B::output_type>& outputs, const TuningCache& cache,
                   std::span<const typename B::sample_type> samples, const Logger& log) {
  if constexpr (!reference_codec<B>::available) {
    return nullptr;
  } else {
    if (outputs.size() != samples.size() || cache.max_stored_output_bytes() == 0 ||
        !cache.signs()) {
      return nullptr;  // unsigned outputs are not trusted, so not worth storing
    }
    try {
      const std::optional<std::string> digest = reference_codec<B>::digest(samples);
      std::optional<std::string> text;
      if (digest) text = reference_codec<B>::encode(outputs);
      if (!text) return nullptr;
      if (text->size() > cache.max_stored_output_bytes()) {
        log.info(0, fmt::format("tuning cache '{}': the baseline's outputs ({} KiB as text) are "
                                "over its limit of {} KiB and are not stored; a hit will build "
                                "the baseline to check its choice",
                                cache.name(), text->size() >> 10,
                                cache.max_stored_output_bytes() >> 10));
        return nullptr;
      }
      return {{"samples_digest", *digest},
              {"outputs_sha256", sha256_hex(*text)},
              {"outputs", std::move(*text)}};
    } catch (const std::exception& error) {  // the decision is still worth storing
      log.warn(0, fmt::format("tuning cache '{}': the baseline's outputs are not stored: {}",
                              cache.name(), error.what()));
      return nullptr;
    }
  }
}

/// The baseline's outputs stored with `hit`, when they were stored for these very sample values;
/// none otherwise, and then the hit builds the baseline. Stored outputs that cannot be read are
/// a warning.
template <Backend B>
[[nodiscard]] std::vector<typename B::output_type>
stored_reference(const CachedTuning& hit, const TuningCache& cache,
                 std::span<const typename B::sample_type> samples, const Logger& log) {
  if constexpr (!reference_codec<B>::available) {
    return {};
  } else {
    if (!hit.reference.is_object()) return {};  // stored by an older version, or too large
    try {
      const std::optional<std::string> digest = reference_codec<B>::digest(samples);
      if (!digest || hit.reference.value("samples_digest", std::string()) != *digest) {
        log.info(1, "the baseline's outputs stored with this decision are for other sample "
                    "values: building the baseline to check the choice");
        return {};
      }
      const std::string text = hit.reference.at("outputs").get<std::string>();
      if (sha256_hex(text) != hit.reference.at("outputs_sha256").get<std::string>()) {
        throw Error("their SHA-256 does not match the one stored with them");
      }
      std::vector<typename B::output_type> outputs = reference_codec<B>::decode(text);
      if (outputs.size() != samples.size()) {
        throw Error(fmt::format("{} outputs for {} samples", outputs.size(), samples.size()));
      }
      return outputs;
    } catch (const std::exception& error) {
      log.warn(0, fmt::format("tuning cache '{}': the baseline's outputs stored with this decision "
                              "cannot be read ({}): building the baseline to check the choice",
                              cache.name(), error.what()));
      return {};
    }
  }
}

/// Why the report of a cache entry cannot be the report of a tuning that made its choice (its
/// file was edited, or damaged so that it still parses), or none. `validation`: the settings
/// (which the key covers) keep the baseline unless a candidate beats it.
[[nodiscard]] inline std::optional<std::string> contradiction(const TuneReport& report,
                                                              bool validation) {
  if (report.selected.empty()) return "it selects nothing";
  if (report.baseline_selected) {
    if (report.baseline && (report.selected != report.baseline->backend ||
                            report.selected_key != report.baseline->key)) {
      return fmt::format("it says the baseline was selected, but names {} ({})", report.selected,
                         report.selected_key);
    }
    return std::nullopt;
  }
  const CandidateReport* chosen = report.find(report.selected);
  if (chosen == nullptr) {
    return fmt::format("it selects {}, which is not among its candidates", report.selected);
  }
  if (chosen->status != CandidateStatus::ok) {
    return fmt::format("it selects {}, whose row says {}", report.selected,
                       to_label(chosen->status));
  }
  if (validation && report.baseline && report.baseline->latency && chosen->latency &&
      chosen->latency->median > report.baseline->latency->median) {
    return fmt::format("it selects {}, slower than the baseline in its own figures ({:.3f} ms "
                       "against {:.3f} ms)",
                       report.selected, chosen->latency->median, report.baseline->latency->median);
  }
  return std::nullopt;
}

}  // namespace detail

namespace detail {

/// The tuning `hit` holds, rebuilt and checked; none when its entry cannot be read, contradicts
/// itself or its choice fails the check now (each a warning: the caller tunes).
template <Backend B, Timer T>
requires std::copy_constructible<B>
[[nodiscard]] std::optional<TuneResult<B>>
reuse_hit(MinLatencyStrategy<B, T>& strategy, const TuningCache& cache, const nlohmann::json& key,
          const CachedTuning& hit, const typename B::model_type& model,
          std::span<const typename B::sample_type> samples, const std::string& module_name,
          const Logger& log) {
  std::optional<TuneReport> earlier;
  try {
    earlier = report_from_json(hit.report);
  } catch (const std::exception& error) {
    log.warn(0, fmt::format("tuning cache '{}': the entry for this key cannot be read ({}): "
                            "tuning again, and replacing it",
                            cache.name(), error.what()));
    return std::nullopt;
  }
  if (const auto why = contradiction(*earlier, strategy.config().performance_validation())) {
    log.warn(0, fmt::format("tuning cache '{}': the entry for this key contradicts itself "
                            "({}): tuning again, and replacing it",
                            cache.name(), *why));
    return std::nullopt;
  }
  earlier->module = module_name;
  log.info(0, fmt::format("tuning cache '{}': {} was selected on {}", cache.name(),
                          earlier->selected, hit.created));
  try {
    // A baseline decision rebuilds the baseline alone: it needs no reference.
    std::vector<typename B::output_type> reference;
    if (!earlier->baseline_selected) reference = stored_reference<B>(hit, cache, samples, log);
    TuneResult<B> result =
        strategy.reuse(model, samples, std::move(*earlier), std::move(reference));
    result.report.cache_hit->file = cache.name();
    result.report.cache_hit->created = hit.created;
    if (cache.signs() && !hit.authenticated) {
      try {  // checked against the baseline just now: worth the key's signature
        cache.store(key, hit.report, nullptr, log, hit.created);
      } catch (const std::exception& error) {
        log.warn(0, fmt::format("tuning cache '{}': the checked entry was not signed: {}",
                                cache.name(), error.what()));
      }
    }
    (void)cache.save_digests(log);  // the next start-up need not read the model again
    return result;
  } catch (const NoCorrectBackendError& error) {
    log.warn(0, fmt::format("tuning cache '{}': {}; tuning again, and replacing the entry",
                            cache.name(), error.what()));
    return std::nullopt;
  }
}

}  // namespace detail

/// Tunes `model` with `strategy`, or reuses the decision `cache` holds for `key`. `key` must
/// cover everything that can change the decision (aitune::lt::tuning_key does, for LibTorch).
/// On a miss it tunes under a lease on the key (single_flight.hpp): where another process holds
/// it, this one waits up to TuningCache::leader_wait for that decision (and reuses it), takes
/// the lease over when its holder stops, or tunes too when the wait runs out.
/// Cache trouble is never fatal: an unreadable file or entry, or a cached choice that fails its
/// check now, is a warning and a tuning; a store that fails is a warning. The backend type must
/// be copyable, so that a failed reuse leaves the candidates for the tuning.
template <Backend B, Timer T>
requires std::copy_constructible<B>
[[nodiscard]] TuneResult<B> tune_with_cache(MinLatencyStrategy<B, T>& strategy,
                                            const TuningCache& cache, const nlohmann::json& key,
                                            const typename B::model_type& model,
                                            std::span<const typename B::sample_type> samples,
                                            std::string module_name) {
  const Logger log = strategy.config().logger();  // the cache writes through it too
  if (const std::optional<CachedTuning> hit = cache.find(key, log)) {
    if (auto reused =
            detail::reuse_hit(strategy, cache, key, *hit, model, samples, module_name, log)) {
      return std::move(*reused);
    }
  }
  detail::LeaderWait waited =
      detail::lease_or_wait(cache, key, log, strategy.config().stop_token());
  if (waited.hit) {
    if (auto reused = detail::reuse_hit(strategy, cache, key, *waited.hit, model, samples,
                                        module_name, log)) {
      return std::move(*reused);
    }
  }
  const detail::HeldLease lease(cache.store(), std::move(waited.lease), cache.lease_ttl(), log);
  // The baseline's outputs come back with the tuning only to be stored with the decision: the
  // setting is put back on every way out of here, and the outputs are dropped once stored.
  strategy.keep_reference_outputs(reference_codec<B>::available);
  struct KeepNoReferenceOutputs {
    MinLatencyStrategy<B, T>& strategy;
    ~KeepNoReferenceOutputs() { strategy.keep_reference_outputs(false); }
  } keep_no_reference_outputs{strategy};
  TuneResult<B> result = strategy.tune(model, samples, std::move(module_name));
  const std::vector<typename B::output_type> reference = std::move(result.reference_outputs);
  result.reference_outputs.clear();
  if (result.report.every_candidate_failed()) {
    // Perhaps a passing cause (memory taken by another process): do not make it permanent.
    log.warn(0, fmt::format("tuning cache '{}': not stored, since every candidate failed",
                            cache.name()));
    return result;
  }
  try {
    cache.store(key, to_json(result.report),
                detail::reference_to_store<B>(reference, cache, samples, log), log);
  } catch (const std::exception& error) {  // e.g. a read-only folder: the tuning stands
    log.warn(0, fmt::format("the decision was not stored in the tuning cache: {}", error.what()));
  }
  return result;
}

/// As above, the report naming the module the strategy's StrategyConfig::module_name.
template <Backend B, Timer T>
requires std::copy_constructible<B>
[[nodiscard]] TuneResult<B> tune_with_cache(MinLatencyStrategy<B, T>& strategy,
                                            const TuningCache& cache, const nlohmann::json& key,
                                            const typename B::model_type& model,
                                            std::span<const typename B::sample_type> samples) {
  return tune_with_cache(strategy, cache, key, model, samples, strategy.config().module_name());
}

}  // namespace aitune
