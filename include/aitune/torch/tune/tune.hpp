// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// One call from a model to a TunedModule: lt::tune with its TuneOptions. The candidates it tries
/// by default are tune/catalogue.hpp's, the inputs it accepts tune/input_contract.hpp's.

#include "aitune/core/cache/cached_tuning.hpp"
#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/measure/sample_names.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/strategy/min_latency_strategy.hpp"
#include "aitune/core/strategy/strategy_config.hpp"
#include "aitune/torch/backends/any_backend.hpp"
#include "aitune/torch/libtorch_messages.hpp"
#include "aitune/torch/measure/device_timer.hpp"
#include "aitune/torch/model/archive_variants.hpp"
#include "aitune/torch/model/input_spec.hpp"
#include "aitune/torch/model/model.hpp"
#include "aitune/torch/serve/tuned_module.hpp"
#include "aitune/torch/tune/baseline.hpp"
#include "aitune/torch/tune/candidates.hpp"
#include "aitune/torch/tune/catalogue.hpp"
#include "aitune/torch/tune/input_contract.hpp"
#include "aitune/torch/tune/tuning_key.hpp"
#include "aitune/torch/wrappers/torch_threads.hpp"

#include <fmt/format.h>

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

/// What a tuning may be told besides the model and samples. Every field has a default, so
/// `lt::tune(model, samples)` takes them all; name the fields you set:
/// `lt::tune(model, samples, {.config = config, .cache = &cache})`.
struct TuneOptions {
  /// The backends to try, in order of preference for near ties (default: default_candidates,
  /// with the archive's quantised models where the config sets an accuracy budget).
  std::optional<std::vector<AnyBackend>> candidates{};
  /// The strategy's settings (default: the interleaved race, the confident-median rule, a 60 s
  /// budget, progress lines on standard error; `StrategyConfig{}.set_sink(null_sink())`
  /// silences them) and the module's name in the report (StrategyConfig::set_module_name).
  StrategyConfig config{};
  /// A tuning cache, for a server's start-up (not owned: it must outlive the call, and a
  /// BackgroundTunedModule). On a hit the decision it holds for this model, inputs, machine,
  /// candidates and settings (tuning_key) is rebuilt and checked once with no measurement,
  /// against the baseline's outputs stored with it (or, for other sample values, the baseline
  /// built again); on a miss the tuning's decision is stored. A cached choice that fails its
  /// check now is a warning and a tuning that replaces the entry; an unreadable cache file is a
  /// warning (the config's sink) and a tuning. The report says which (TuneReport::cache_hit).
  const TuningCache* cache = nullptr;
  /// The cache key, for a caller that made it already with tuning_key(model, samples,
  /// candidates, config, cache) to look it up itself (default: made here). A key made otherwise
  /// must cover as much, or a hit can hand back a stale decision. Needs `cache`.
  std::optional<nlohmann::json> key{};
  /// What the module does when a TorchThreads won (with_torch_threads): by default it serves
  /// the inner backend at the serving threads' LibTorch count and its report's decision
  /// recommends the winner's count; TunedThreads::apply serves it at that count.
  TunedThreads torch_threads = TunedThreads::recommend;
};

/// `samples` with, first, the samples at the bounds of the range the module serves (none unless
/// `shapes` is a range), weighted 0 in `config` (checked, never timed: the weights given are the
/// user's samples') and named there by what they are (the user's keep their numbers).
[[nodiscard]] inline std::vector<Sample> with_range_bounds(const ShapeContract& shapes,
                                                           const std::vector<Sample>& samples,
                                                           StrategyConfig& config) {
  if (shapes.check != ShapeCheck::range || samples.empty()) return samples;
  std::vector<double> weights = config.profiling().sample_weights();
  if (!weights.empty() && weights.size() != samples.size()) {
    throw ConfigError(
        fmt::format("the sample weights are one per sample: {} weights for {} samples",
                    weights.size(), samples.size()));
  }
  if (weights.empty()) weights.assign(samples.size(), 1.0);
  std::vector<Sample> checked = shapes.ranges.at_bounds(samples.front());
  weights.insert(weights.begin(), checked.size(), 0.0);
  // The reasons number the user's samples as given, and name these by what they are.
  std::vector<std::string> names = config.profiling().sample_names().added();
  for (std::size_t i = checked.size(); i-- > 0;) {
    const char* bound = checked.size() == 1 ? "only" : (i == 0 ? "smallest" : "largest");
    names.insert(names.begin(),
                 fmt::format("the range's {} sample ({})", bound, sample_shape_text(checked[i])));
  }
  checked.insert(checked.end(), samples.begin(), samples.end());
  config.set_profiling(ProfilingConfig(config.profiling())
                           .set_sample_weights(std::move(weights))
                           .set_sample_names(SampleNames(std::move(names))));
  return checked;
}

/// Tunes `model` on its batch-size-1 `samples` with MinLatencyStrategy and returns the tuned
/// module; see TuneOptions for the candidates, settings and cache.
[[nodiscard]] inline TunedModule tune(const Model& model, const std::vector<Sample>& samples,
                                      TuneOptions options = {}) {
  if (options.key && options.cache == nullptr) {
    throw ConfigError("TuneOptions::key is a tuning cache's key: set TuneOptions::cache too");
  }
  // LibTorch's warnings raised while tuning go where the tuning's own messages go.
  const TorchWarningRoute torch_warnings(options.config.logger());
  // What the default candidates leave out of an archive is named, never dropped in silence.
  if (!options.candidates && model.archive) {
    for (const std::string& line : variants_left_out(*model.archive))
      options.config.logger().warn(0, line);
  }
  // Tuned at a server's load, the default sessions include those that serve its callers.
  std::vector<AnyBackend> candidates =
      options.candidates
          ? std::move(*options.candidates)
          : default_candidates_for_callers(model, options.config.profiling().callers(),
                                           options.config.accuracy_budget().has_value());
  const ShapeContract shapes = shape_check_for(model, candidates);
  refuse_samples_outside(shapes, samples);
  // A module that will serve a range is checked at its bounds too (never timed there).
  const std::vector<Sample> checked = with_range_bounds(shapes, samples, options.config);
  const auto served = [&](TuneResult<AnyBackend> result) {
    if (shapes.check == ShapeCheck::range && !samples.empty())
      result.report.measurement.serves = shapes.ranges.describe_inputs(samples.front());
    return TunedModule(std::move(result), samples, shapes, options.torch_threads);
  };
  if (options.cache == nullptr) {
    MinLatencyStrategy<AnyBackend> strategy(std::move(candidates), std::move(options.config));
    return served(strategy.tune(model, checked));
  }
  const nlohmann::json key =
      options.key ? std::move(*options.key)
                  : tuning_key(model, checked, candidates, options.config, *options.cache);
  MinLatencyStrategy<AnyBackend> strategy(std::move(candidates), std::move(options.config));
  return served(
      tune_with_cache(strategy, *options.cache, key, model, std::span<const Sample>(checked)));
}

}  // namespace AITUNE_LT_ABI

// The core names a LibTorch user needs, under lt:: too: one namespace serves from loading a model
// to reading its report (each is the aitune:: name itself, not a copy).
using aitune::AccuracyBudget;
using aitune::CancelledError;
using aitune::CandidateReport;
using aitune::CandidateStatus;
using aitune::ConfigError;
using aitune::DecisionConfig;
using aitune::DecisionRule;
using aitune::default_time_budget_ms;
using aitune::Error;
using aitune::Logger;
using aitune::LogLevel;
using aitune::MessageSink;
using aitune::NoCorrectBackendError;
using aitune::null_sink;
using aitune::parse_precision;
using aitune::Precision;
using aitune::ProfilingConfig;
using aitune::Progress;
using aitune::RaceConfig;
using aitune::render_table;
using aitune::report_from_json;
using aitune::Schedule;
using aitune::stderr_sink;
using aitune::StrategyConfig;
using aitune::to_json;
using aitune::to_label;
using aitune::TopKAgreement;
using aitune::TuneReport;
using aitune::TuningCache;
using aitune::WarmupConfig;
using aitune::write_json_file;

}  // namespace aitune::lt
