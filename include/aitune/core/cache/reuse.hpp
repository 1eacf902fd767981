// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// MinLatencyStrategy::reuse: a tuning cache's hit, checked rather than measured. It runs the
/// strategy's own pre_tune and build-and-check steps on the one backend an earlier tuning chose,
/// and lives here, beside the cache it serves (core/cache/cached_tuning.hpp), to keep the tuning
/// flow's header to the flow.

#include "aitune/core/error.hpp"
#include "aitune/core/strategy/detail/graph_verdicts.hpp"
#include "aitune/core/strategy/min_latency_strategy.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune {

/// Hands back the backend an earlier tuning selected, without measuring anything: `earlier` is
/// that tuning's report (e.g. from a TuningCache). The selected candidate, found by its key among
/// this strategy's candidates, is built and checked once against the reference, then activated.
/// The reference is `stored_reference` (the baseline's outputs on these samples, kept with the
/// decision: one per sample) when given, so the baseline is not built; else the baseline is
/// prepared and its outputs are the reference. The report is `earlier`, with the check's accuracy
/// on the selected row and cache_hit's `check_time_ms` and `stored_reference` set (the caller
/// fills in the rest). Throws NoCorrectBackendError, saying why, when the selected backend is not
/// among the candidates, fails its build or check, or cannot be activated: the caller then tunes
/// afresh.
template <Backend B, Timer T>
TuneResult<B>
MinLatencyStrategy<B, T>::reuse(const model_type& model, std::span<const sample_type> samples,
                                TuneReport earlier, std::vector<output_type> stored_reference) {
  if (!stored_reference.empty() && stored_reference.size() != samples.size()) {
    throw ConfigError(fmt::format("reuse: {} stored reference outputs for {} samples",
                                  stored_reference.size(), samples.size()));
  }
  const TuneInputs in = begin(model, samples, "reuse");
  const TuneReport report = open_report(earlier.module, "reusing the earlier choice for");
  const auto refuse = [&](std::string_view why) {
    log_.warn(1, fmt::format("{}: {}", earlier.selected, why));
    throw NoCorrectBackendError(
        fmt::format("module '{}': the earlier choice {} cannot be reused: {}", earlier.module,
                    earlier.selected, why),
        std::make_shared<const TuneReport>(report));
  };
  const auto reused = [&](B backend) {
    earlier.cache_hit = CacheHit{"", "", timer_.now_ms() - in.start_ms};
    // Named now, by the backend handed back: an entry stored before identities were has none.
    earlier.selected_identity = guard_.name_of(backend, "the earlier choice").identity;
    log_.info(0, fmt::format("{}: reused {}{}, checked in {:.1f} s", earlier.module,
                             earlier.selected, earlier.baseline_selected ? " (the baseline)" : "",
                             earlier.cache_hit->check_time_ms / 1000.0));
    return TuneResult<B>{std::move(backend), std::move(earlier)};
  };

  if (earlier.baseline_selected) {
    if constexpr (!baseline_traits<B>::available) {
      refuse("this backend type defines no baseline");
    } else {
      TuneReport checked = report;
      PreTuned pre = pre_tune(in, guard_.make_baseline(in.model, checked), checked);
      if (!pre.baseline || !guard_.try_activate(*pre.baseline, *checked.baseline)) {
        refuse(checked.baseline->reason);
      }
      return reused(std::move(*pre.baseline));
    }
  }
  std::optional<std::size_t> index;
  for (std::size_t i = 0; i < candidates_.size() && !index; ++i) {
    if (guard_.name_of(candidates_[i], guard_.position_of(i)).key == earlier.selected_key)
      index = i;
  }
  CandidateReport* row = earlier.selected_candidate();
  if (!index || row == nullptr) refuse("it is not among the candidates");
  const bool stored = !stored_reference.empty() && config_.correctness_check();
  Reference reference{.checked = samples.size()};
  if (stored) {
    reference.outputs = std::move(stored_reference);
  } else if (needs_baseline()) {
    TuneReport checked = report;
    PreTuned pre = pre_tune(in, guard_.make_baseline(in.model, checked), checked);
    release(pre.baseline);
    reference = std::move(pre.reference);
    if (!reference.missing.empty()) refuse(reference.missing);
  }
  B candidate = take_candidate(*index);
  CandidateReport entry{row->backend, row->key};
  entry.graph = guard_.name_of(candidates_[*index], guard_.position_of(*index)).graph;
  log_.info(1, fmt::format("{}: rebuilding and checking the earlier choice{}", entry.backend,
                           stored ? " against the baseline's outputs stored with it" : ""));
  if (!build_and_check(in, reference, candidate, entry, /*check_now=*/true)) {
    guard_.release(candidate);
    refuse(fmt::format("{}: {}", to_label(entry.status), entry.reason));
  }
  // A reduced-precision run passes a wider check than its graph's full-precision run, which a
  // tuning consults (strategy/detail/graph_verdicts.hpp): a hit consults it too.
  if (const std::string why = graph_refusal_on_reuse(in, reference, *index, entry); !why.empty()) {
    guard_.release(candidate);
    refuse("incorrect: " + why);
  }
  if (!guard_.try_activate(candidate, entry)) {
    guard_.release(candidate);
    refuse(fmt::format("{}: {}", to_label(entry.status), entry.reason));
  }
  row->accuracy = entry.accuracy;
  TuneResult<B> result = reused(std::move(candidate));
  result.report.cache_hit->stored_reference = stored;
  return result;
}

/// Why `selected` (the reused choice, checked: `entry`) is refused for its graph, as a tuning
/// refuses it (detail::graph_refusal): it computes in a reduced precision and the first
/// full-precision run of its graph among the candidates, built and checked here against
/// `reference`, is incorrect. Empty when it stands (a full-precision run that cannot be built or
/// run is no verdict on the graph: the next one is tried).
template <Backend B, Timer T>
std::string MinLatencyStrategy<B, T>::graph_refusal_on_reuse(const TuneInputs& in,
                                                             const Reference& reference,
                                                             std::size_t selected,
                                                             const CandidateReport& entry) {
  if (!entry.reduced_precision || entry.graph.empty()) return {};
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    if (i == selected) continue;
    const detail::Name name = guard_.name_of(candidates_[i], guard_.position_of(i));
    if (name.failure || name.graph != entry.graph) continue;
    B sibling = take_candidate(i);
    CandidateReport row = name.row();
    log_.info(1, fmt::format("{}: checking the full-precision run of its graph, {}", entry.backend,
                             row.backend));
    const bool passed = build_and_check(in, reference, sibling, row, /*check_now=*/true);
    guard_.release(sibling);
    if (row.reduced_precision || (!passed && row.status != CandidateStatus::incorrect)) continue;
    TuneReport both;
    both.candidates = {entry, row};
    return detail::graph_refusal(both, both.candidates[0]);
  }
  return {};
}

}  // namespace aitune
