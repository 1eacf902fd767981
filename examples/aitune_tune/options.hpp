// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// aitune-tune's command line: the options, their help, the backend names --backends accepts,
// the parsing and the checks of what was given (paths that must not name the same file).
#pragma once

#include <aitune/torch.hpp>

#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace aitune_tune {

inline constexpr std::string_view usage_lines =
    "usage: aitune-tune MODEL.pt2|MODEL.pt --input SHAPE [--input SHAPE ...] [options]\n"
    "       aitune-tune MODEL.pt2|MODEL.pt --sample FILE [--sample FILE ...] [options]\n";

inline constexpr std::string_view description =
    "Tunes a model for the lowest latency at batch size 1 and prints the report. MODEL is a\n"
    "torch.export .pt2 archive (baseline: the native runtime; candidates: the AOTInductor models\n"
    "in it, see tools/export_model.py) or a TorchScript file (baseline: TorchEager).";

/// A mistake in the command line: exit code 2 with the usage text.
struct UsageError {
  std::string message;  ///< empty: --help was asked for
  std::string help{};   ///< the --help text
};

struct Options {
  std::filesystem::path model;
  std::vector<aitune::lt::InputSpec> inputs;
  std::vector<std::string> input_names;  ///< per --input: its NAME= (empty: by position)
  std::vector<std::filesystem::path> sample_files;
  std::string device = "cpu";
  std::vector<std::string> backends;  ///< empty: the default candidates for the device
  /// The default candidates' runtime sessions' thread counts (0: the runtime's default); none
  /// given: the library's (default_runtime_threads).
  std::optional<std::vector<int>> runtime_threads;
  /// Also every LibTorch candidate, the baseline's way included, at the other LibTorch thread
  /// counts (lt::with_torch_threads).
  bool tune_threads = false;
  std::vector<std::filesystem::path> aoti_packages;
  std::vector<aitune::Precision> precisions;  ///< empty: every precision of the candidates
  std::vector<aitune::lt::ToleranceOverride> tolerances;
  /// --accuracy: how far a reduced-precision candidate's outputs may move (none: each precision's
  /// tolerance decides).
  std::optional<aitune::AccuracyBudget> accuracy;
  std::optional<int> samples;
  /// --lengths: the sizes the model's dynamic axes take in the --input samples, one shape each.
  std::vector<std::int64_t> lengths;
  /// --weights: each length's (or sample's) share of the server's traffic; empty: equal.
  std::vector<double> weights;
  bool stable = false;
  bool sequential = false;
  std::optional<double> switch_warmup_ms;  ///< not given: the library's (RaceConfig)
  std::optional<int> steady_final_rounds;  ///< not given: the library's (RaceConfig)
  std::optional<int> screening_rounds;     ///< not given: the library's (ScreeningConfig)
  int callers = 1;                         ///< the server's load to tune at
  bool aitune_rule = false;
  double time_budget_s = aitune::default_time_budget_ms / 1000.0;
  bool validation = true;
  bool verbose = false;
  bool quiet = false;
  std::optional<std::filesystem::path> json;
  std::optional<std::filesystem::path> report_dir;
  bool raw_samples = false;
  /// A cache file, or a Redis URL (redis://host:port/db).
  std::optional<std::string> cache;
  /// A local file in front of a Redis cache (read through, written through).
  std::optional<std::filesystem::path> cache_local;
  double cache_lock_timeout_s = 10.0;
  double cache_timeout_s = 0.5;     ///< the bound on one request to a Redis cache
  double cache_wait_s = 300.0;      ///< how long to wait for another process tuning the same key
  double cache_lease_ttl_s = 30.0;  ///< how long this process's lease lives without a renewal
  std::optional<std::filesystem::path> expect;
};

/// Whether a `--cache` value names a Redis rather than a file.
[[nodiscard]] inline bool names_redis(const std::string& cache) {
  return cache.starts_with("redis://");
}

/// Whether `a` and `b` name the same file: the same inode where both exist, else the same
/// absolute, normalised path (an output not made yet).
inline bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code error;
  if (std::filesystem::exists(a, error) && std::filesystem::exists(b, error)) {
    return std::filesystem::equivalent(a, b, error);
  }
  return std::filesystem::weakly_canonical(a, error) == std::filesystem::weakly_canonical(b, error);
}

/// `--json -`: the JSON report goes to standard output.
inline bool is_stdout(const std::filesystem::path& path) {
  return path == "-";
}

/// A path that exists and is not a regular file (a FIFO, a character device such as
/// /dev/stdout): written directly, since it cannot be replaced by a rename.
inline bool is_stream_file(const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  return !error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

/// No output may name an input or another output: `--json MODEL` would overwrite the model,
/// `--cache MODEL` move it aside, and `--json` equal to `--cache` replace the cache with a
/// report. A usage error (exit 2) before anything runs.
inline void check_paths_apart(const Options& options) {
  std::vector<std::pair<std::string, std::filesystem::path>> inputs{{"the model", options.model}};
  for (const auto& file : options.sample_files)
    inputs.emplace_back("--sample", file);
  for (const auto& file : options.aoti_packages)
    inputs.emplace_back("--aoti", file);
  if (options.expect) inputs.emplace_back("--expect", *options.expect);
  std::vector<std::pair<std::string, std::filesystem::path>> outputs;
  if (options.json && !is_stdout(*options.json)) outputs.emplace_back("--json", *options.json);
  if (options.cache && !names_redis(*options.cache))
    outputs.emplace_back("--cache", *options.cache);
  if (options.cache_local) outputs.emplace_back("--cache-local", *options.cache_local);
  if (options.report_dir) {
    for (const char* file : {"report.json", "report.md", "report.svg"})
      outputs.emplace_back(fmt::format("--report-dir's {}", file), *options.report_dir / file);
    inputs.emplace_back("--report-dir", *options.report_dir);  // a folder: not a file to replace
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [name, path] = outputs[i];
    for (const auto& [input_name, input] : inputs) {
      if (same_file(path, input)) {
        throw UsageError{
            fmt::format("{} '{}' is {}: it would be overwritten", name, path.string(), input_name)};
      }
    }
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (same_file(path, outputs[j].second)) {
        throw UsageError{fmt::format("{} and {} name the same file '{}'", name, outputs[j].first,
                                     path.string())};
      }
    }
  }
}

/// `text` broken into lines of at most `width` characters, for the help (CLI11 indents the lines
/// after the first under the option's description).
inline std::string wrapped(std::string_view text, std::size_t width = 66) {
  std::vector<std::string_view> words;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::string out;
  std::size_t line = 0;
  for (const std::string_view word : words) {
    if (line > 0 && line + 1 + word.size() > width) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
  }
  return out;
}

/// A validator of a number that `accepts`, else the error "must be `what`, got 'TEXT'".
template <class Accepts>
CLI::Validator number_validator(Accepts accepts, std::string what) {
  return CLI::Validator(
      [accepts, what = std::move(what)](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !accepts(value)) {
          return fmt::format("must be {}, got '{}'", what, text);
        }
        return {};
      },
      "");
}

/// --time-budget: a positive number of seconds, at most 10^6.
inline const CLI::Validator seconds_validator = number_validator(
    [](double s) { return s > 0.0 && s <= 1e6; }, "a positive number of seconds (at most 1e6)");

/// --cache-wait: seconds, 0 (never wait) to 1e6.
inline const CLI::Validator wait_seconds_validator = number_validator(
    [](double s) { return s >= 0.0 && s <= 1e6; }, "a number of seconds from 0 to 1e6");

/// --cache-lease-ttl: seconds, 0.3 (TuningCache::set_lease_ttl's least) to 1e6.
inline const CLI::Validator lease_seconds_validator = number_validator(
    [](double s) { return s >= 0.3 && s <= 1e6; }, "a number of seconds from 0.3 to 1e6");

/// --switch-warmup-ms: milliseconds from 0 to 1000 (RaceConfig::set_switch_warmup_ms's range).
inline const CLI::Validator milliseconds_validator = number_validator(
    [](double ms) { return ms >= 0.0 && ms <= 1000.0; }, "a number of milliseconds from 0 to 1000");

/// CLI11's help with our usage lines in place of its one-line usage.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(26); }
  std::string make_usage(const CLI::App*, std::string) const override {
    return std::string(usage_lines);
  }
};

using aitune::lt::max_session_threads;

/// The intra-op threads a --backends runtime name asks for after an @ (onnx@2), or 0 (the
/// runtime's default) without one (lt::session_threads_of).
inline int runtime_threads_of(const std::string& name) {
  try {
    return aitune::lt::session_threads_of(name);
  } catch (const aitune::ConfigError&) {
    throw UsageError{fmt::format(
        "'{}' in --backends: after the @ comes the session's thread count, from 1 to {} (this "
        "machine's hardware threads)",
        name, max_session_threads())};
  }
}

/// --lengths: sizes from 1, comma-separated, each once.
inline std::vector<std::int64_t> parse_lengths(const std::string& text) {
  std::vector<std::int64_t> lengths;
  for (const std::string_view part : aitune::comma_separated(text)) {
    std::int64_t length = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), length);
    if (error != std::errc() || end != part.data() + part.size() || length < 1 ||
        length > aitune::max_input_dimension) {
      throw UsageError{
          fmt::format("--lengths takes sizes from 1, comma-separated; got '{}'", text)};
    }
    if (std::find(lengths.begin(), lengths.end(), length) != lengths.end()) {
      throw UsageError{fmt::format("--lengths gives {} twice", length)};
    }
    lengths.push_back(length);
  }
  return lengths;
}

/// --weights: numbers from 0, comma-separated, at least one above 0.
inline std::vector<double> parse_weights(const std::string& text) {
  std::vector<double> weights;
  for (const std::string_view part : aitune::comma_separated(text)) {
    double weight = 0.0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), weight);
    if (error != std::errc() || end != part.data() + part.size() || !(weight >= 0.0) ||
        !std::isfinite(weight)) {
      throw UsageError{
          fmt::format("--weights takes numbers from 0, comma-separated; got '{}'", text)};
    }
    weights.push_back(weight);
  }
  if (!weights.empty() &&
      std::none_of(weights.begin(), weights.end(), [](double weight) { return weight > 0.0; })) {
    throw UsageError{"--weights: at least one weight must be above 0"};
  }
  return weights;
}

/// --runtime-threads: sweep, or thread counts (0: the runtime's default).
inline std::vector<int> parse_runtime_threads(const std::string& text) {
  if (text == "sweep") {
    std::vector<int> counts =
        aitune::lt::runtime_thread_counts(std::thread::hardware_concurrency());
    if (counts.empty()) counts.push_back(0);  // the count is unknown: the runtime's default
    return counts;
  }
  std::vector<int> counts;
  for (const std::string_view count : aitune::comma_separated(text)) {
    const std::optional<int> threads = aitune::lt::session_thread_count(count, 0);
    if (!threads) {
      throw UsageError{fmt::format("--runtime-threads takes sweep or thread counts from 0 (the "
                                   "runtime's default) to {} (this machine's hardware threads), "
                                   "comma-separated; got '{}'",
                                   max_session_threads(), text)};
    }
    if (std::find(counts.begin(), counts.end(), *threads) == counts.end()) {
      counts.push_back(*threads);
    }
  }
  if (counts.empty()) throw UsageError{"--runtime-threads lists no thread count"};
  return counts;
}

/// The command line, parsed by CLI11 (syntax: unknown options, missing values, numbers), then
/// checked here for what CLI11 cannot know (shapes, names, combinations).
inline Options parse_arguments(int argc, char** argv) {
  Options options;
  CLI::App app(std::string(description), "aitune-tune");
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("-h,--help", "this text");
  app.footer("Exit codes: 0 success, 2 usage error, 1 any other failure, 130/143 stopped by "
             "SIGINT/SIGTERM. The JSON report's schema is in docs/command-line.md.");
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> sample_files;
  std::string backends;
  std::string runtime_threads;
  std::vector<std::string> aoti_packages;
  std::string precisions;
  std::vector<std::string> tolerances;
  std::string accuracy;
  std::string json;
  std::string report_dir;
  std::string cache;
  std::string cache_local;
  std::string expect;
  int samples = 0;
  std::string lengths;
  std::string weights;

  const std::string inputs_group = "Model and inputs";
  app.add_option("MODEL", model, wrapped("the model file: a .pt2 archive or a TorchScript file"))
      ->type_name("FILE")
      ->group(inputs_group);
  app.add_option(
         "--input", inputs,
         wrapped("one forward() argument, e.g. 1x3x224x224 or 1x64:int64 (random values: floats "
                 "~ N(0,1), integers in [0, 100)), or with the range its values are drawn from, "
                 "uniformly: 1x64:int64[0,30522), 1x3x8x8[0,1); repeat for several arguments, in "
                 "order, or by name: attention_mask=1x64:int64[1,2) (the names the model or its "
                 "archive records)"))
      ->type_name("[NAME=]SHAPE")
      ->group(inputs_group);
  app.add_option(
         "--sample", sample_files,
         wrapped("one sample of real inputs, saved by torch.save from Python: a tensor, or a tuple "
                 "or list of the forward() arguments; repeat for several samples (instead of "
                 "--input)"))
      ->type_name("FILE")
      ->group(inputs_group);
  app.add_option("--expect", expect,
                 wrapped("after tuning, check that the tuned module's outputs for the first "
                         "--sample equal these, saved by torch.save (tools/export_model.py "
                         "--save-io writes eager PyTorch's): same structure and dict key order, "
                         "values within the selected backend's tolerance; exit 1 if not"))
      ->type_name("FILE")
      ->group(inputs_group);
  app.add_option("--samples", samples,
                 wrapped("random samples to tune and check on (default 1; with --input)"))
      ->type_name("N")
      ->check(CLI::Range(1, 1000))
      ->group(inputs_group);
  app.add_option("--lengths", lengths,
                 wrapped("for a model exported with dynamic axes (tools/export_model.py "
                         "--dynamic): tune on the --input shapes with those axes at each of these "
                         "sizes, e.g. 32,128,256 (--samples random samples each)"))
      ->type_name("L,L,...")
      ->group(inputs_group);
  app.add_option("--weights", weights,
                 wrapped("how much of the traffic each length of --lengths (else each sample) "
                         "stands for, e.g. 6,3,1: the decision is on the latency weighted so "
                         "(default: equal)"))
      ->type_name("W,W,...")
      ->group(inputs_group);
  app.add_option("--device", options.device, wrapped("cpu (default), cuda or cuda:N"))
      ->type_name("DEVICE")
      ->group(inputs_group);

  const std::string candidates_group = "Candidates";
  app.add_option(
         "--backends", backends,
         wrapped("comma-separated candidates. For a TorchScript model (default: frozen, optimized, "
                 "channels_last, bf16, and fp16 on CUDA): eager, frozen, optimized, channels_last, "
                 "bf16, fp16, perturbed (a canary the correctness check must reject). For a .pt2 "
                 "archive: names of the AOTInductor models in it, and onnx, openvino, "
                 "openvino_bf16 for its converted models, onnx_int8, openvino_int8 and "
                 "openvino_int8_bf16 (its float layers in bf16) for their int8 quantisations, "
                 "aoti_int8 for its int8 compilation (with "
                 "--accuracy; the default candidates include them then), with the session's "
                 "threads after an @ "
                 "where wanted (onnx@1); onnx_extended, onnx_basic and onnx_disabled lower ONNX "
                 "Runtime's graph optimisation (default: all of them, ONNX Runtime's at its "
                 "default level)"))
      ->type_name("LIST")
      ->group(candidates_group);
  app.add_option("--runtime-threads", runtime_threads,
                 wrapped("with the default candidates of a .pt2 archive: each ONNX Runtime and "
                         "OpenVINO session at each of these intra-op thread counts "
                         "(comma-separated; 0: the runtime's default; default: 1,0 where the "
                         "machine has more than one hardware thread, else 0), or sweep: 1, "
                         "about the square root of the hardware threads, and all of them"))
      ->type_name("LIST|sweep")
      ->group(candidates_group);
  const std::vector<int> torch_counts = aitune::lt::torch_thread_counts();
  app.add_flag("--tune-threads", options.tune_threads,
               wrapped(fmt::format(
                   "also measure the baseline's way and every LibTorch candidate at other "
                   "LibTorch intra-op thread counts ({} here; the process runs at {}), on the CPU. "
                   "Setting it reaches past one model: a winner's count is recommended in the "
                   "report (call at::set_num_threads at the server's start-up), not applied",
                   torch_counts.empty() ? std::string("none")
                                        : fmt::format("{}", fmt::join(torch_counts, ",")),
                   at::get_num_threads())))
      ->group(candidates_group);
  app.add_option("--aoti", aoti_packages,
                 wrapped("also try an AOTInductor package compiled in Python from the same model "
                         "(LibTorch >= 2.6)"))
      ->type_name("PACKAGE.pt2")
      ->group(candidates_group);
  app.add_option(
         "--precision", precisions,
         "only candidates computing in these precisions: fp32, bf16, fp16, fp64 (comma-separated; "
         "fp16 needs CUDA)")
      ->type_name("LIST")
      ->group(candidates_group);
  app.add_option(
         "--tolerance", tolerances,
         wrapped("the correctness check's tolerance: relative R and, relative to each output's "
                 "largest value, absolute A (default A = R); for precision P only, or all; "
                 "repeatable (defaults: fp32 1e-4, bf16 6.25e-2, fp16 7.8e-3)"))
      ->type_name("[P:]R[,A]")
      ->group(candidates_group);
  app.add_option(
         "--accuracy", accuracy,
         wrapped("an accuracy budget: how far the outputs of a candidate computing in a lower "
                 "precision (bf16, int8) may move from the baseline's, judged over every checked "
                 "sample instead of its tolerance: relative=R (worst error over the output's "
                 "largest value), cosine=C (least cosine similarity), topK=P (share of the class "
                 "scores' rows whose baseline class is among the candidate's top K, e.g. "
                 "top1=98%), scores=OUTPUT (the output holding class scores, e.g. logits), "
                 "samples=N (checked on at least N samples; default 100, and --samples defaults "
                 "to it); e.g. cosine=0.999,top1=98%"))
      ->type_name("BUDGET")
      ->group(candidates_group);

  const std::string measure_group = "Measurement and decision";
  app.add_option(
         "--time-budget", options.time_budget_s,
         wrapped("stop measuring after S seconds and decide on what was measured (default 60)"))
      ->type_name("S")
      ->check(seconds_validator)
      ->group(measure_group);
  app.add_flag(
         "--sequential", options.sequential,
         wrapped("time each backend alone, one after another (aitune's schedule; uses less memory) "
                 "instead of in interleaved rounds"))
      ->group(measure_group);
  app.add_option(
         "--switch-warmup-ms", options.switch_warmup_ms,
         wrapped(fmt::format(
             "in the interleaved race, untimed calls after each block's discarded first call "
             "until MS milliseconds have passed since the block began, so that the previous "
             "backend's spinning threads do not slow the timed call (0 to 1000; default {:g})",
             aitune::RaceConfig{}.switch_warmup_ms())))
      ->type_name("MS")
      ->check(milliseconds_validator)
      ->group(measure_group);
  app.add_option(
         "--screening-rounds", options.screening_rounds,
         wrapped(fmt::format(
             "rounds of the screening before the checks, where {} or more samples are checked "
             "(as under --accuracy): every built candidate and the baseline in interleaved "
             "rounds, then the candidates checked fastest first, and one slower than one already "
             "checked with confidence and by over {:g}x left unchecked; 0 turns it off (0 to "
             "100; default {})",
             aitune::ScreeningConfig{}.min_checked_samples(),
             1.0 + aitune::ScreeningConfig{}.margin(), aitune::ScreeningConfig{}.rounds())))
      ->type_name("N")
      ->check(CLI::Range(0, 100))
      ->group(measure_group);
  app.add_option(
         "--steady-final-rounds", options.steady_final_rounds,
         wrapped(fmt::format(
             "rounds of the interleaved race's steady-state final, which times the candidates "
             "found faster than the baseline again as a server calls them (blocks of {} calls "
             "after {:g} ms of untimed ones) and selects one faster there than the race's "
             "leader in every round; 0 turns it off "
             "(0 to 100; default {})",
             aitune::RaceConfig{}.final_timed_calls(), aitune::RaceConfig{}.final_settle_ms(),
             aitune::RaceConfig{}.final_rounds())))
      ->type_name("N")
      ->check(CLI::Range(0, 100))
      ->group(measure_group);
  app.add_option("--callers", options.callers,
                 wrapped(fmt::format(
                     "tune at a server's load: each timed call is N calls at once from N threads "
                     "(a backend that is not thread-safe takes them in turn), and the default "
                     "candidates add the sessions that serve N callers; the report gives the "
                     "pick's latency per call and requests/s at that load (1 to {}; default 1)",
                     aitune::ProfilingConfig::max_callers)))
      ->type_name("N")
      ->check(CLI::Range(1, aitune::ProfilingConfig::max_callers))
      ->group(measure_group);
  app.add_flag("--stable", options.stable,
               wrapped("with --sequential: time until latency is stable (StableWindow)"))
      ->group(measure_group);
  app.add_flag(
         "--aitune-rule", options.aitune_rule,
         wrapped("decide by aitune's rule (lowest mean, strict <) instead of ours (faster with "
                 "confidence, by at least 2 %)"))
      ->group(measure_group);
  bool no_validation = false;
  app.add_flag("--no-validation", no_validation,
               wrapped("do not fall back to the baseline when no candidate beats it"))
      ->group(measure_group);

  const std::string output_group = "Reports and cache";
  app.add_option("--json", json,
                 wrapped("also write the report as JSON (schema in docs/command-line.md); written "
                         "also when the run fails, with the error; - for standard output (the "
                         "table then goes to standard error)"))
      ->type_name("FILE")
      ->group(output_group);
  app.add_option("--report-dir", report_dir,
                 wrapped("write report.json, report.md (markdown) and report.svg (a chart of each "
                         "backend's latencies) into DIR"))
      ->type_name("DIR")
      ->group(output_group);
  app.add_flag("--raw-samples", options.raw_samples,
               wrapped("put every timed call in the JSON reports (samples_ms)"))
      ->group(output_group);
  app.add_option(
         "--cache", cache,
         wrapped("a tuning cache, a file or a Redis shared by a fleet: reuse the decision "
                 "stored for this model, inputs, machine, candidates and settings (rebuilt and "
                 "checked, not measured), or tune and store it"))
      ->type_name("FILE|redis://ADDRESS:PORT/DB")
      ->group(output_group);
  app.add_option("--cache-local", cache_local,
                 wrapped("with a Redis --cache: a local file in front of it (read through, "
                         "written through; it keeps a decision while Redis is down, and pushes "
                         "it at the next start)"))
      ->type_name("FILE")
      ->group(output_group);
  app.add_option("--cache-timeout", options.cache_timeout_s,
                 wrapped("with a Redis --cache: wait at most S seconds for each request, then "
                         "go on without it (a warning; default 0.5). The password comes from "
                         "the file named by AITUNE_REDIS_PASSWORD_FILE, or AITUNE_REDIS_PASSWORD"))
      ->type_name("S")
      ->check(seconds_validator)
      ->group(output_group);
  app.add_option("--cache-wait", options.cache_wait_s,
                 wrapped("when another process is tuning the same key (it holds the key's "
                         "lease), wait at most S seconds for its decision, then tune here too "
                         "(default 300; 0: never wait)"))
      ->type_name("S")
      ->check(wait_seconds_validator)
      ->group(output_group);
  app.add_option("--cache-lease-ttl", options.cache_lease_ttl_s,
                 wrapped("while this process tunes a key, its lease lives S seconds without a "
                         "renewal (renewed every third of that): a process killed mid-tuning "
                         "holds the others up that long at most (default 30)"))
      ->type_name("S")
      ->check(lease_seconds_validator)
      ->group(output_group);
  app.add_option("--cache-lock-timeout", options.cache_lock_timeout_s,
                 wrapped("wait at most S seconds for another process storing in the cache, "
                         "then leave this decision unstored (a warning; default 10)"))
      ->type_name("S")
      ->check(seconds_validator)
      ->group(output_group);
  app.add_flag("--quiet", options.quiet,
               wrapped("no progress, and of the log only its warnings (the report is printed)"))
      ->group(output_group);
  app.add_flag("--verbose", options.verbose,
               wrapped("with each failure's one-line reason, log the full error (tracebacks); and "
                       "show LibTorch's own log lines (hidden otherwise)"))
      ->group(output_group);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    throw UsageError{"", app.help()};
  } catch (const CLI::ParseError& error) {
    throw UsageError{error.what()};
  }
  options.model = model;
  options.validation = !no_validation;
  // An option given an empty value is a mistake (an unset shell variable), not "off".
  for (const auto& [name, value] :
       {std::pair{"--json", &json}, std::pair{"--report-dir", &report_dir},
        std::pair{"--cache", &cache}, std::pair{"--cache-local", &cache_local},
        std::pair{"--expect", &expect}}) {
    if (app.count(name) > 0 && value->empty()) {
      throw UsageError{fmt::format("{} was given an empty path", name)};
    }
  }
  // So is an empty list: `--lengths ''` was taken as no lengths at all.
  for (const auto& [name, value] :
       {std::pair{"--lengths", &lengths}, std::pair{"--weights", &weights}}) {
    if (app.count(name) > 0 && value->empty()) {
      throw UsageError{fmt::format("{} was given an empty list", name)};
    }
  }
  if (!json.empty()) options.json = std::filesystem::path(json);
  if (!report_dir.empty()) options.report_dir = std::filesystem::path(report_dir);
  if (!cache.empty()) options.cache = cache;
  if (!cache_local.empty()) {
    if (!names_redis(cache)) {
      throw UsageError{"--cache-local goes in front of a Redis cache: give --cache redis://..."};
    }
    options.cache_local = std::filesystem::path(cache_local);
  }
  if (!expect.empty()) options.expect = std::filesystem::path(expect);
  if (app.count("--samples") > 0) options.samples = samples;
  options.lengths = parse_lengths(lengths);
  options.weights = parse_weights(weights);
  for (const auto& file : sample_files)
    options.sample_files.emplace_back(file);
  for (const auto& package : aoti_packages)
    options.aoti_packages.emplace_back(package);

  for (const std::string& text : inputs) {
    aitune::lt::NamedInputSpec input;
    try {
      input = aitune::lt::parse_named_input_spec(text);
    } catch (const aitune::ConfigError& error) {
      throw UsageError{error.what()};
    }
    if (!input.name.empty() && std::find(options.input_names.begin(), options.input_names.end(),
                                         input.name) != options.input_names.end()) {
      throw UsageError{fmt::format("--input names '{}' twice", input.name)};
    }
    options.inputs.push_back(std::move(input.spec));
    options.input_names.push_back(std::move(input.name));
    // The strategy measures latency at batch size 1; a batch of 8 would be tuned at 8 while
    // the report said 1.
    const auto& shape = options.inputs.back().shape;
    if (!shape.empty() && shape.front() != 1) {
      throw UsageError{
          fmt::format("--input {}: the first dimension is the batch, and tuning is at batch size 1 "
                      "(give 1x...)",
                      options.inputs.back().describe())};
    }
  }
  if (app.count("--backends") > 0) {
    for (const std::string_view text : aitune::comma_separated(backends)) {
      if (text.empty()) throw UsageError{"--backends has an empty name (two commas in a row?)"};
      // One spelling per session: onnx@02 is onnx@2, so it cannot be raced twice as two names.
      std::string name(text);
      if (const auto at = name.find('@'); at != std::string::npos) {
        name = fmt::format("{}@{}", name.substr(0, at), runtime_threads_of(name));
      }
      if (std::find(options.backends.begin(), options.backends.end(), name) !=
          options.backends.end()) {
        throw UsageError{name == text
                             ? fmt::format("--backends names '{}' twice", name)
                             : fmt::format("--backends names '{}' twice (as '{}')", name, text)};
      }
      options.backends.push_back(std::move(name));  // checked once the model's kind is known
    }
    if (options.backends.empty()) throw UsageError{"--backends lists no backend"};
  }
  if (app.count("--runtime-threads") > 0) {
    if (app.count("--backends") > 0) {
      throw UsageError{"--runtime-threads sets the default candidates' sessions: with --backends, "
                       "give a session's threads after an @ (onnx@1)"};
    }
    options.runtime_threads = parse_runtime_threads(runtime_threads);
  }
  if (app.count("--precision") > 0) {
    try {
      const std::vector<std::string_view> names = aitune::comma_separated(precisions);
      if (names.empty()) (void)aitune::parse_precision("");  // refused like any unknown name
      for (const std::string_view name : names)
        options.precisions.push_back(aitune::parse_precision(name));
    } catch (const aitune::ConfigError& error) {
      throw UsageError{fmt::format("--precision: {}", error.what())};
    }
  }
  for (const std::string& text : tolerances) {
    try {
      options.tolerances.push_back(aitune::lt::parse_tolerance(text));
    } catch (const aitune::ConfigError& error) {
      throw UsageError{fmt::format("--tolerance: {}", error.what())};
    }
  }

  if (app.count("--accuracy") > 0) {
    try {
      options.accuracy = aitune::parse_accuracy_text(accuracy);
    } catch (const aitune::ConfigError& error) {
      throw UsageError{fmt::format("--accuracy: {}", error.what())};
    }
  }

  if (options.model.empty()) throw UsageError{"no model given"};
  if (options.inputs.empty() && options.sample_files.empty()) {
    throw UsageError{"give at least one --input SHAPE or --sample FILE"};
  }
  if (!options.inputs.empty() && !options.sample_files.empty()) {
    throw UsageError{"give --input (random values) or --sample (real ones), not both"};
  }
  if (options.samples && !options.sample_files.empty()) {
    throw UsageError{"--samples counts random samples; with --sample, each file is one sample"};
  }
  if (!options.lengths.empty() && options.inputs.empty()) {
    throw UsageError{"--lengths sets the dynamic axes of the --input shapes: with --sample files, "
                     "give files of each length"};
  }
  if (options.accuracy && !options.samples && options.sample_files.empty()) {
    // Random samples enough for the budget, spread over the lengths.
    // Rounded up without `+ shapes - 1`, which wraps for a count near 2^64 (samples=2^64-1 gave
    // no sample at all, and a read past an empty list).
    const std::size_t shapes = std::max<std::size_t>(1, options.lengths.size());
    const std::size_t needed = options.accuracy->min_samples();
    const std::size_t each = needed / shapes + (needed % shapes != 0 ? 1 : 0);
    options.samples = static_cast<int>(std::clamp<std::size_t>(each, 1, 1000));
  }
  if (!options.weights.empty()) {
    const std::size_t expected = !options.lengths.empty() ? options.lengths.size()
                                 : !options.sample_files.empty()
                                     ? options.sample_files.size()
                                     : static_cast<std::size_t>(options.samples.value_or(1));
    const char* each = !options.lengths.empty()        ? "length of --lengths"
                       : !options.sample_files.empty() ? "--sample file"
                                                       : "random sample (--samples)";
    if (options.weights.size() != expected) {
      throw UsageError{fmt::format("--weights gives {} weights: one per {} is {}",
                                   options.weights.size(), each, expected)};
    }
  }
  if (options.expect && options.sample_files.empty()) {
    throw UsageError{"--expect compares the outputs for the first --sample: give the inputs they "
                     "were computed for with --sample"};
  }
  if (options.stable && !options.sequential) {
    throw UsageError{"--stable is a stop rule of the sequential schedule: add --sequential"};
  }
  if (options.switch_warmup_ms && options.sequential) {
    throw UsageError{"--switch-warmup-ms sets the interleaved race: it does not go with "
                     "--sequential"};
  }
  if (options.screening_rounds && options.sequential) {
    throw UsageError{"--screening-rounds sets the interleaved race's screening: it does not go "
                     "with --sequential"};
  }
  if (options.steady_final_rounds && options.sequential) {
    throw UsageError{"--steady-final-rounds sets the interleaved race: it does not go with "
                     "--sequential (which times each backend alone already)"};
  }
  check_paths_apart(options);
  return options;
}

}  // namespace aitune_tune
