// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// aitune-tune's tuning run: the candidates and samples from the options, the tuning itself,
// its report on the standard streams and in the files asked for, and the --expect check.
#pragma once

#include "options.hpp"
#include "output.hpp"
#include <aitune/torch.hpp>
#if AITUNE_TUNE_WITH_REDIS
#include <aitune/redis.hpp>
#endif

#include <ATen/Parallel.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace aitune_tune {

/// The candidates --backends names (lt::candidates_named; default: the model's default
/// candidates, lt::default_candidates, for the plan of --runtime-threads, --callers and
/// --accuracy).
inline std::vector<aitune::lt::AnyBackend>
make_candidates(const std::vector<std::string>& names, const aitune::lt::Model& model,
                const std::optional<std::vector<int>>& runtime_threads, int callers,
                bool quantized) {
  if (!model.is_exported() && runtime_threads) {
    throw UsageError{fmt::format("--runtime-threads sets a .pt2 archive's {} and {} sessions; a "
                                 "TorchScript model has none",
                                 aitune::lt::OnnxRuntime::family.runtime,
                                 aitune::lt::OpenVino::family.runtime)};
  }
  if (names.empty()) {
    aitune::lt::CandidatePlan plan = aitune::lt::CandidatePlan::for_callers(callers, quantized);
    if (runtime_threads) plan.runtime_threads = *runtime_threads;
    return aitune::lt::default_candidates(model, plan);
  }
  try {
    return aitune::lt::candidates_named(model, names, quantized);
  } catch (const aitune::ConfigError& error) {
    throw UsageError{fmt::format("--backends: {}", error.what())};
  }
}

/// The --input specs in the order the model takes its inputs (lt::inputs_in_model_order).
inline std::vector<aitune::lt::InputSpec> inputs_in_model_order(const Options& options,
                                                                const aitune::lt::Model& model) {
  std::vector<aitune::lt::NamedInputSpec> given;
  for (std::size_t i = 0; i < options.inputs.size(); ++i)
    given.push_back({options.input_names[i], options.inputs[i]});
  try {
    return aitune::lt::inputs_in_model_order(given, model, options.model.string());
  } catch (const aitune::ConfigError& error) {
    throw UsageError{error.what()};
  }
}

/// The samples to tune on: random ones from `inputs` (--input, in the model's order), at each
/// of --lengths on the model's dynamic axes (lt::samples_at_lengths), or those --sample files
/// hold.
inline std::vector<aitune::lt::Sample>
make_samples(const Options& options, const std::vector<aitune::lt::InputSpec>& inputs,
             const aitune::lt::Model& model, c10::Device device) {
  std::vector<aitune::lt::Sample> samples;
  const int per_shape = options.samples.value_or(1);
  if (!options.lengths.empty()) {
    try {
      samples = aitune::lt::samples_at_lengths(model, inputs, options.lengths, device, per_shape);
    } catch (const aitune::ConfigError& error) {
      throw UsageError{fmt::format("--lengths: '{}': {}", options.model.string(), error.what())};
    }
  } else if (options.sample_files.empty()) {
    for (int i = 0; i < per_shape; ++i)
      samples.push_back(aitune::lt::make_random_sample(inputs, device, static_cast<unsigned>(i)));
  }
  for (const auto& file : options.sample_files) {
    samples.push_back(aitune::lt::load_sample_file(file, device));
    // As for --input: the tuning is at batch size 1, and the report says so.
    const aitune::lt::Sample& sample = samples.back();
    for (std::size_t i = 0; i < sample.size(); ++i) {
      if (sample[i].isTensor() && sample[i].toTensor().dim() > 0 &&
          sample[i].toTensor().size(0) != 1) {
        throw UsageError{fmt::format("--sample {}: argument {} has shape {}; the first dimension "
                                     "is the batch, and tuning is at batch size 1",
                                     file.string(), i, sample[i].toTensor().sizes())};
      }
    }
  }
  return samples;
}

/// The largest share of its tolerance any output's worst element used (0 when none was compared).
inline double worst_error_ratio(const aitune::OutputCheck& check) {
  double worst = 0.0;
  for (const auto& output : check.accuracy)
    worst = std::max(worst, output.worst_error_ratio);
  return worst;
}

/// A command line's seconds as the cache's milliseconds, rounded.
inline std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000.0)));
}

/// The store `--cache` names: a file, or a Redis (with `--cache-local` in front of it).
inline std::unique_ptr<aitune::CacheStore> cache_store(const Options& options) {
  const auto timeout = milliseconds_of(options.cache_timeout_s);
#if AITUNE_TUNE_WITH_REDIS
  return aitune::redis::open_cache_store(*options.cache, options.cache_local.value_or(""),
                                         std::max(timeout, std::chrono::milliseconds(1)));
#else
  (void)timeout;
  if (names_redis(*options.cache)) {
    throw aitune::ConfigError("this aitune-tune was built without hiredis: a Redis cache needs it "
                              "(Debian: libhiredis-dev, then build again)");
  }
  return std::make_unique<aitune::FileStore>(*options.cache);
#endif
}

/// --expect: the tuned module's outputs for `sample` against `expected` (read from `file`), with

/// the selected backend's tolerance; prints the verdict.
inline aitune::OutputCheck check_expected_outputs(const aitune::lt::TunedModule& tuned,
                                                  const aitune::lt::Sample& sample,
                                                  const c10::IValue& expected,
                                                  const std::filesystem::path& file) {
  namespace lt = aitune::lt;
  const lt::OutputPolicy policy = tuned.backend().output_policy();
  aitune::OutputCheck check;
  try {
    check = lt::compare_outputs(&expected, tuned.forward(sample), policy);
  } catch (const std::exception& error) {
    check = aitune::OutputCheck::failed(
        fmt::format("the tuned module failed on the sample: {}", lt::summarize_error(error)));
  }
  if (check.passed) {
    print_report("outputs: equal to those in '{}' within the tolerance of {} ({}; worst element "
                 "{:.0f} % of it)\n",
                 file.string(), tuned.selected(), policy.tolerance.describe(),
                 100.0 * worst_error_ratio(check));
  } else {
    print_report("outputs: differ from those in '{}': {}\n", file.string(), check.reason);
  }
  return check;
}

inline int run(const Options& options, Environment& environment, std::stop_token stop) {
  using namespace aitune;
  const auto display = std::make_shared<ProgressDisplay>(
      isatty(STDERR_FILENO) != 0 &&
          std::string_view(std::getenv("TERM") ? std::getenv("TERM") : "") != "dumb",
      options.quiet);
  // Whatever ends the tuning, the progress line is ended before the report or the error.
  const std::unique_ptr<ProgressDisplay, void (*)(ProgressDisplay*)> close_display(
      display.get(), [](ProgressDisplay* shown) { shown->close(); });
  const auto log_line = [display](std::string_view line) { display->log(line); };
  const LogLevel log_level = options.quiet ? LogLevel::warning : LogLevel::info;
  const Logger log(log_line, log_level);
  // LibTorch's warnings go to the log too; its log lines (the native runtime's list of ops
  // without static kernels, at every build) only with --verbose: they cannot be routed.
  const lt::TorchWarningRoute torch_warnings(log);
  if (!options.verbose) lt::set_libtorch_log_level(LogLevel::off);
  // An output that cannot be written fails now, not after the whole tuning.
  if (options.json) check_report_writable(*options.json);
  if (options.json && is_stdout(*options.json)) report_stream = stderr;
  if (options.report_dir) {
    std::error_code error;
    std::filesystem::create_directories(*options.report_dir, error);
    if (error) {
      throw Error(fmt::format("cannot create the report folder '{}': {}",
                              options.report_dir->string(), error.message()));
    }
    check_writable(*options.report_dir / "report.json");
  }
  // So does an outputs file that cannot be read.
  std::optional<c10::IValue> expected;
  if (options.expect) expected = lt::load_outputs_file(*options.expect);
  std::vector<std::string> sample_files;
  for (const auto& file : options.sample_files)
    sample_files.push_back(file.string());
  environment = {{"model", options.model.string()},
                 {"sample_files", sample_files},
                 {"device", options.device},
                 {"libtorch", lt::libtorch_version()},
                 {"aitune", aitune::version},
                 {"date", utc_now_iso8601()},
                 {"cuda_timing", AITUNE_WITH_CUDA != 0},
                 {"intra_op_threads", at::get_num_threads()},
                 {"hardware_threads", std::thread::hardware_concurrency()}};
  const c10::Device device = lt::parse_device(options.device);
  environment["device"] = device.str();
  environment["machine"] = lt::describe_machine(device);
  // Loading is the model's cost, outside the time budget: the report says what it took.
  const auto load_start = std::chrono::steady_clock::now();
  const lt::Model model = lt::load_model(options.model, device);
  environment["model_load_ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  environment["model_format"] = model.is_exported() ? "torch.export" : "torchscript";
  // The other runtimes whose models the archive holds, and the versions that ran them.
  if (model.is_exported()) {
    // Named, never dropped in silence: what no candidate is made from (cleaned, a few lines).
    for (const std::string& line : lt::variants_left_out(*model.archive))
      log.warn(0, line);
    const auto version_of = [&](const auto& family, const std::string& version, const char* none) {
      if (model.archive->runtime_variants.contains(std::string(family.name)))
        environment[std::string(family.key)] = version.empty() ? none : version;
    };
    version_of(lt::OnnxRuntime::family, lt::OnnxRuntime::version(), "not loaded");
    version_of(lt::OpenVino::family, lt::OpenVino::version(), "not in this build");
  }
  std::vector<lt::AnyBackend> candidates =
      make_candidates(options.backends, model, options.runtime_threads, options.callers,
                      options.accuracy.has_value());
  for (const auto& package : options.aoti_packages)
    candidates.emplace_back(lt::AOTInductor(package));
  // An archive whose only AOTInductor model is its baseline (no native runtime) still tunes: the
  // report and --expect say how that model runs.
  if (candidates.empty() && lt::aoti_baseline_of(model) == nullptr) {
    throw Error(fmt::format("'{}' holds no AOTInductor model to try against its baseline {}: "
                            "make some with tools/export_model.py, or pass --aoti PACKAGE.pt2",
                            options.model.string(), lt::make_baseline(model).describe()));
  }
  if (options.tune_threads) {
    const std::vector<int> counts = lt::torch_thread_counts();
    if (device.is_cuda()) {
      log.warn(0, "--tune-threads: LibTorch's CPU thread count does not change a CUDA model's "
                  "kernels: no candidate added");
    } else if (counts.empty()) {
      log.warn(0, fmt::format("--tune-threads: this machine has no other LibTorch thread count "
                              "worth trying than the process's {}",
                              at::get_num_threads()));
    }
    candidates = lt::with_torch_threads(model, std::move(candidates), counts);
  }
  const std::vector<lt::InputSpec> inputs = inputs_in_model_order(options, model);
  const std::vector<lt::Sample> samples = make_samples(options, inputs, model, device);
  // The precision a candidate computes in, as the report will name it: a precision variant's
  // own, else the model's (read off its inputs or weights).
  const aitune::Precision native = lt::model_precision(model, samples.front());
  if (!options.precisions.empty()) {
    try {
      candidates = lt::keep_precisions(std::move(candidates), options.precisions, device, native);
    } catch (const ConfigError& error) {
      throw UsageError{fmt::format("--precision: {}", error.what())};
    }
  }
  lt::apply_tolerances(candidates, options.tolerances, native);
  std::vector<std::string> shapes;
  for (const auto& input : inputs)
    shapes.push_back(input.describe());
  if (options.inputs.empty()) shapes = lt::describe_sample(samples.front());
  environment["inputs"] = shapes;

  if (model.is_exported() && !lt::NativeRuntime::available()) {
    const lt::AotiModelInfo* compiled = lt::AOTInductor::baseline_of(model);
    const char* aoti = lt::AOTInductor::family.runtime;
    if (compiled == nullptr && !lt::AOTInductor::available()) {
      throw Error(fmt::format("'{}' is a torch.export archive: LibTorch {} runs neither its "
                              "ExportedProgram (the native runtime is in 2.9 to 2.11) nor "
                              "{} models (2.6 and newer)",
                              options.model.string(), lt::libtorch_version(), aoti));
    }
    if (compiled == nullptr) {
      throw Error(fmt::format(
          "'{0}' is a torch.export archive with no {2} model, and its ExportedProgram runs on "
          "LibTorch's native runtime, which LibTorch {1} does not have (2.9 to 2.11 do): add {2} "
          "models with tools/export_model.py --variants",
          options.model.string(), lt::libtorch_version(), aoti));
    }
    log.warn(0,
             fmt::format("LibTorch {} has no native runtime to run the ExportedProgram: the "
                         "baseline is the archive's first {} model, {}, and the "
                         "candidates are checked against it, not against eager PyTorch (--expect "
                         "checks against eager PyTorch's outputs: tools/export_model.py "
                         "--save-io)",
                         lt::libtorch_version(), aoti, compiled->name));
  }
  // With no candidate (an archive whose only AOTInductor model is its baseline) the baseline is
  // the answer, which only a measured baseline can be: --no-validation has nothing to skip.
  const bool validation = options.validation || candidates.empty();
  if (validation != options.validation) {
    log.info(0, "--no-validation: there is no candidate to hand back instead of the baseline, so "
                "the baseline is measured");
  }
  ProfilingConfig profiling;
  profiling.set_time_budget_ms(options.time_budget_s * 1000.0);
  if (options.sequential) profiling.set_schedule(Schedule::sequential);
  profiling.set_callers(options.callers);
  if (!options.weights.empty()) {
    // One weight per length weighs each of its samples; else one per sample.
    std::vector<double> weights;
    const std::size_t each = options.lengths.empty() ? 1 : samples.size() / options.lengths.size();
    for (const double weight : options.weights)
      weights.insert(weights.end(), each, weight);
    profiling.set_sample_weights(std::move(weights));
  }
  if (options.stable) profiling.set_stop_rule(StableWindow());
  if (options.switch_warmup_ms) {
    profiling.set_race(
        RaceConfig{profiling.race()}.set_switch_warmup_ms(*options.switch_warmup_ms));
  }
  if (options.screening_rounds) {
    profiling.set_screening(
        ScreeningConfig{profiling.screening()}.set_rounds(*options.screening_rounds));
  }
  if (options.steady_final_rounds) {
    const RaceConfig& race = profiling.race();
    profiling.set_race(
        RaceConfig{race}.set_steady_final(*options.steady_final_rounds, race.final_settle_ms(),
                                          race.final_settle_calls(), race.final_timed_calls()));
  }
  auto config =
      StrategyConfig{}
          .enable_performance_validation(validation)
          .set_accuracy_budget(options.accuracy)
          .set_decision(DecisionConfig{}.set_rule(
              options.aitune_rule ? DecisionRule::aitune_mean : DecisionRule::confident_median))
          .set_profiling(profiling)
          .enable_full_errors(options.verbose)
          .enable_peak_reset(true)  // its own process: every backend's peak is worth knowing
          .set_stop_token(stop)
          .set_sink(log_line)
          .set_log_level(log_level)
          .set_progress([display](const Progress& progress) { display->show(progress); })
          .set_module_name(options.model.stem().string());
  std::optional<TuningCache> cache;
  if (options.cache) {
    cache.emplace(cache_store(options));
    cache->set_stop_token(stop);
    cache->set_lock_timeout(milliseconds_of(options.cache_lock_timeout_s));
    cache->set_leader_wait(milliseconds_of(options.cache_wait_s));
    cache->set_lease_ttl(milliseconds_of(options.cache_lease_ttl_s));
  }

  // Check the inputs before a tuning: a shape the model cannot take is the user's mistake, and
  // should not surface as every candidate failing in turn. (An archive of AOTInductor models
  // only has no baseline to ask: its candidates' builds check the inputs.) Not before a cache
  // hit, nor while another process tunes this key: a decision the cache holds was tuned on these
  // very shapes (the key covers them), and its rebuilt choice is checked on the samples.
  const bool has_baseline = !model.is_exported() || lt::aoti_baseline_of(model) != nullptr ||
                            model.archive->main_program().has_value();
  if (has_baseline) {
    config.set_before_tuning([&] {
      std::string probed = "baseline";
      try {
        lt::AnyBackend probe = lt::make_baseline(model);
        probed = fmt::format("baseline {}", probe.describe());
        probe.build(model, samples);
      } catch (const std::exception& error) {
        // Loading (a weight missing from the archive) and running fail alike here: the cause
        // says which, and the message blames neither the inputs nor the file.
        throw Error(fmt::format("model '{}' with the inputs {}: its {} failed to load or run: {}",
                                options.model.string(), fmt::join(shapes, " "), probed,
                                lt::summarize_error(error)));
      }
    });
  }
  std::optional<nlohmann::json> key;
  if (cache) key = lt::tuning_key(model, samples, candidates, config, *cache);

  const lt::TunedModule tuned = lt::tune(model, samples,
                                         {.candidates = std::move(candidates),
                                          .config = config,
                                          .cache = cache ? &*cache : nullptr,
                                          .key = std::move(key)});
  const TuneReport& report = tuned.report();

  print_report("\n{}", render_table(report));
  const CandidateReport* selected = report.selected_candidate();
  const std::string baseline =
      report.baseline ? report.baseline->backend : lt::make_baseline(model).describe();
  environment["baseline"] = baseline;
  // A machine busy with other work is named on the summary line too (the report's why has it).
  const std::optional<aitune::BusyMachine>& busy = report.measurement.busy;
  const std::string busy_note = busy ? "; " + busy->text : "";
  if (busy && busy->undecided) {
    print_report("selected {}: undecided, the baseline {} kept{}\n", report.selected, baseline,
                 busy_note);
  } else if (report.baseline_selected &&
             std::none_of(report.candidates.begin(), report.candidates.end(),
                          [](const CandidateReport& row) { return row.latency.has_value(); })) {
    // Nothing raced it: say why (every candidate failed, or the time budget ran out first).
    print_report("selected {}: the baseline, since {}\n", report.selected, report.decision);
  } else if (report.baseline_selected &&
             report.measurement.stop_reason == aitune::StopReason::time_budget) {
    // The race was cut short: not "no candidate beat it", which it had no time to learn.
    const auto raced = std::count_if(report.candidates.begin(), report.candidates.end(),
                                     [](const CandidateReport& row) { return row.latency; });
    print_report("selected {}: the baseline, since the time budget ran out before a candidate was "
                 "shown faster ({} of {} candidate(s) raced, over {} round(s)); give the tuning "
                 "more time{}\n",
                 report.selected, raced, report.candidates.size(), report.measurement.rounds,
                 busy_note);
  } else if (report.baseline_selected) {
    print_report("selected {}: no candidate beat the baseline {}{}\n", report.selected, baseline,
                 busy_note);
  } else if (selected != nullptr && selected->speedup) {
    print_report("selected {}: {} faster than the baseline {}{}\n", report.selected,
                 format_speedup(*selected->speedup), baseline, busy_note);
  } else {
    print_report("selected {} (the baseline {} was not measured)\n", report.selected, baseline);
  }

  nlohmann::json json = to_json(report, {.raw_samples = options.raw_samples});
  std::optional<std::string> differs;
  if (options.expect) {
    const aitune::OutputCheck check =
        check_expected_outputs(tuned, samples.front(), *expected, *options.expect);
    json["expected_outputs"] = {{"file", options.expect->string()},
                                {"equal", check.passed},
                                {"reason", check.reason},
                                {"worst_error_ratio", worst_error_ratio(check)}};
    if (!check.passed) {
      differs = fmt::format("the tuned module's outputs differ from those in '{}': {}",
                            options.expect->string(), check.reason);
      json["error"] = *differs;
    }
  }
  if (options.json) write_report(*options.json, json, environment);
  if (options.report_dir) {
    write_report_dir(*options.report_dir, report, environment, options.raw_samples);
  }
  if (differs) {  // the reports above keep the tuning and say this too
    print_to_stderr("aitune-tune: error: {}\n", *differs);
    return 1;
  }
  return 0;
}

}  // namespace aitune_tune
