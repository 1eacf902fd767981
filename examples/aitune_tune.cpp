// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// aitune-tune: tunes a model file (a torch.export .pt2 archive or a TorchScript file) on random
// batch-size-1 inputs and prints the report. Exit codes: 0 success, 2 usage error (with the usage
// text), 1 any other failure, 128 + N when signal N (SIGINT, SIGTERM) stopped the tuning.
#include <aitune/core/report/markdown.hpp>
#include <aitune/core/report/svg.hpp>
#include <aitune/torch.hpp>

#include <ATen/Parallel.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr std::string_view usage_lines =
    "usage: aitune-tune MODEL.pt2|MODEL.pt --input SHAPE [--input SHAPE ...] [options]\n"
    "       aitune-tune MODEL.pt2|MODEL.pt --sample FILE [--sample FILE ...] [options]\n";

constexpr std::string_view description =
    "Tunes a model for the lowest latency at batch size 1 and prints the report. MODEL is a\n"
    "torch.export .pt2 archive (baseline: the native runtime; candidates: the AOTInductor models\n"
    "in it, see tools/export_model.py) or a TorchScript file (baseline: TorchEager).";

// ---- signals: SIGINT and SIGTERM stop the tuning cleanly ----------------------------------
//
// The handler only records the signal and wakes a watcher thread through a pipe (both are
// async-signal-safe); the watcher requests the stop, which the strategy honours within one call
// of each backend. The tuning then unwinds normally: nothing is half-written, no temporary file
// is left. The handler is reset once it has run, so a second signal ends the process at once
// (for a model call that never returns).

std::atomic<int> received_signal{0};
int signal_pipe[2] = {-1, -1};

extern "C" void record_signal(int number) {
  const int saved_errno = errno;  // the interrupted thread's
  received_signal.store(number);
  // Either signal, once handled, leaves both to their default action: the next one ends the
  // process (SA_RESETHAND would reset only the one that arrived).
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  const char byte = 1;
  (void)!write(signal_pipe[1], &byte, 1);
  errno = saved_errno;
}

void stop_on_signals(std::stop_source source) {
  // A closed pipe is a failed write (EPIPE), not the end of the process: the JSON report and
  // the cache are still written, and the exit code says what happened (tune_command).
  signal(SIGPIPE, SIG_IGN);
  if (pipe(signal_pipe) != 0) return;  // then the signals keep their default action
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  for (const int number : {SIGINT, SIGTERM}) {
    // A signal the parent set to be ignored stays ignored (a shell's background job, nohup).
    struct sigaction inherited {};
    if (sigaction(number, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) continue;
    sigaction(number, &action, nullptr);
  }
  std::thread([source]() mutable {
    char byte = 0;
    while (read(signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    source.request_stop();
  }).detach();
}

/// The first error writing to standard output (EPIPE: its reader went away), 0 while none.
std::atomic<int> stdout_error{0};

/// Where the report table and the selected line go: standard output, unless `--json -` put the
/// JSON report there (then standard error, so that standard output is JSON alone).
std::FILE* report_stream = stdout;

/// Writes to `stream` without ever throwing: a write that fails (the stream closed, a full disk
/// behind it) is dropped, and the run goes on to its report files and cache (fmt::print would
/// throw, and a throw on the error path would abort the process). Standard error stays best
/// effort; standard output's errors are checked once at the end (tune_command), so that they
/// fail the run only after everything else is written.
template <class... Args>
void print_to(std::FILE* stream, fmt::format_string<Args...> format, Args&&... args) noexcept {
  try {
    const std::string text = fmt::format(format, std::forward<Args>(args)...);
    if (std::fwrite(text.data(), 1, text.size(), stream) != text.size() && stream == stdout) {
      int expected = 0;
      stdout_error.compare_exchange_strong(expected, errno != 0 ? errno : EIO);
    }
  } catch (...) {  // formatting failed (no memory): nothing to say it with either
  }
}

template <class... Args>
void print_to_stderr(fmt::format_string<Args...> format, Args&&... args) noexcept {
  print_to(stderr, format, std::forward<Args>(args)...);
}

/// The report's lines: on standard output (standard error with `--json -`).
template <class... Args>
void print_report(fmt::format_string<Args...> format, Args&&... args) noexcept {
  print_to(report_stream, format, std::forward<Args>(args)...);
}

// ---- progress: one updating line on a terminal, plain lines otherwise ---------------------

/// Shows the tuning's progress on standard error. On a terminal: one line rewritten in place,
/// the log's lines scrolling above it. Otherwise (a pipe, a CI log): a plain `progress:` line
/// for each backend prepared, at each look of the measurement or at most every 5 s, and at the
/// end. Quiet: no progress (and the log's threshold is set to warnings, by the caller).
class ProgressDisplay {
 public:
  ProgressDisplay(bool terminal, bool quiet) : terminal_(terminal), quiet_(quiet) {}

  /// The strategy's progress callback.
  void show(const aitune::Progress& progress) {
    if (quiet_) return;
    const std::lock_guard lock(mutex_);
    const std::string line = aitune::describe(progress);
    if (terminal_) {
      current_ = line;
      print_to_stderr("\r\033[K{}", current_);
      if (progress.stage == aitune::ProgressStage::finished) {
        print_to_stderr("\n");
        current_.clear();
      }
      std::fflush(stderr);
      return;
    }
    const bool measuring = progress.stage == aitune::ProgressStage::measuring;
    if (measuring && progress.rounds == last_rounds_ &&
        progress.elapsed_ms - last_plain_ms_ < 5000.0) {
      return;  // a heartbeat: plain lines only every 5 s
    }
    last_rounds_ = progress.rounds;
    last_plain_ms_ = progress.elapsed_ms;
    print_to_stderr("progress: {}\n", line);
  }

  /// The strategy's sink: one log line, above the progress line.
  void log(std::string_view line) {
    const std::lock_guard lock(mutex_);
    if (terminal_ && !current_.empty()) {
      print_to_stderr("\r\033[K{}\n{}", line, current_);
      std::fflush(stderr);
    } else {
      print_to_stderr("{}\n", line);
    }
  }

  /// Ends the progress line (a tuning that failed or was cancelled leaves it unfinished).
  void close() {
    const std::lock_guard lock(mutex_);
    if (terminal_ && !current_.empty()) print_to_stderr("\n");
    current_.clear();
  }

 private:
  std::mutex mutex_;
  bool terminal_;
  bool quiet_;
  std::string current_;
  std::size_t last_rounds_ = 0;
  double last_plain_ms_ = -1e9;
};

/// A mistake in the command line: exit code 2 with the usage text.
struct UsageError {
  std::string message;  ///< empty: --help was asked for
  std::string help{};   ///< the --help text
};

/// The names --backends accepts, and what each makes.
struct NamedBackend {
  std::string_view name;
  aitune::lt::AnyBackend (*make)();
};
const NamedBackend named_backends[] = {
    {"eager", [] { return aitune::lt::AnyBackend(aitune::lt::TorchEager()); }},
    {"frozen", [] { return aitune::lt::AnyBackend(aitune::lt::TorchScriptFrozen()); }},
    {"optimized", [] { return aitune::lt::AnyBackend(aitune::lt::TorchScriptOptimized()); }},
    {"channels_last", [] { return aitune::lt::AnyBackend(aitune::lt::ChannelsLast()); }},
    {"bf16",
     [] {
       return aitune::lt::AnyBackend(aitune::lt::TorchScriptFrozen(c10::ScalarType::BFloat16));
     }},
    {"fp16",
     [] { return aitune::lt::AnyBackend(aitune::lt::TorchScriptFrozen(c10::ScalarType::Half)); }},
    {"perturbed",
     [] {
       return aitune::lt::AnyBackend(aitune::lt::PerturbedOutputs(aitune::lt::TorchScriptFrozen()));
     }},
};

const NamedBackend* find_backend(std::string_view name) {
  for (const auto& backend : named_backends) {
    if (backend.name == name) return &backend;
  }
  return nullptr;
}

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
  std::optional<int> samples;
  bool stable = false;
  bool sequential = false;
  std::optional<double> switch_warmup_ms;  ///< not given: the library's (RaceConfig)
  bool aitune_rule = false;
  double time_budget_s = aitune::default_time_budget_ms / 1000.0;
  bool validation = true;
  bool verbose = false;
  bool quiet = false;
  std::optional<std::filesystem::path> json;
  std::optional<std::filesystem::path> report_dir;
  bool raw_samples = false;
  std::optional<std::filesystem::path> cache;
  double cache_lock_timeout_s = 10.0;
  std::optional<std::filesystem::path> expect;
};

/// Whether `a` and `b` name the same file: the same inode where both exist, else the same
/// absolute, normalised path (an output not made yet).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code error;
  if (std::filesystem::exists(a, error) && std::filesystem::exists(b, error)) {
    return std::filesystem::equivalent(a, b, error);
  }
  return std::filesystem::weakly_canonical(a, error) == std::filesystem::weakly_canonical(b, error);
}

/// `--json -`: the JSON report goes to standard output.
bool is_stdout(const std::filesystem::path& path) {
  return path == "-";
}

/// A path that exists and is not a regular file (a FIFO, a character device such as
/// /dev/stdout): written directly, since it cannot be replaced by a rename.
bool is_stream_file(const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  return !error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

/// No output may name an input or another output: `--json MODEL` would overwrite the model,
/// `--cache MODEL` move it aside, and `--json` equal to `--cache` replace the cache with a
/// report. A usage error (exit 2) before anything runs.
void check_paths_apart(const Options& options) {
  std::vector<std::pair<std::string, std::filesystem::path>> inputs{{"the model", options.model}};
  for (const auto& file : options.sample_files)
    inputs.emplace_back("--sample", file);
  for (const auto& file : options.aoti_packages)
    inputs.emplace_back("--aoti", file);
  if (options.expect) inputs.emplace_back("--expect", *options.expect);
  std::vector<std::pair<std::string, std::filesystem::path>> outputs;
  if (options.json && !is_stdout(*options.json)) outputs.emplace_back("--json", *options.json);
  if (options.cache) outputs.emplace_back("--cache", *options.cache);
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
std::string wrapped(std::string_view text, std::size_t width = 66) {
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
const CLI::Validator seconds_validator = number_validator(
    [](double s) { return s > 0.0 && s <= 1e6; }, "a positive number of seconds (at most 1e6)");

/// --switch-warmup-ms: milliseconds from 0 to 1000 (RaceConfig::set_switch_warmup_ms's range).
const CLI::Validator milliseconds_validator = number_validator(
    [](double ms) { return ms >= 0.0 && ms <= 1000.0; }, "a number of milliseconds from 0 to 1000");

/// CLI11's help with our usage lines in place of its one-line usage.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(26); }
  std::string make_usage(const CLI::App*, std::string) const override {
    return std::string(usage_lines);
  }
};

/// A runtime session's thread count as text: a whole number from `least` to 4096, else
/// nothing.
std::optional<int> thread_count(std::string_view text, int least) {
  int threads = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), threads);
  if (error != std::errc() || end != text.data() + text.size() || threads < least ||
      threads > 4096) {
    return std::nullopt;
  }
  return threads;
}

/// The intra-op threads a --backends runtime name asks for after an @ (onnx@2), or 0 (the
/// runtime's default) without one.
int runtime_threads_of(const std::string& name) {
  const auto at = name.find('@');
  if (at == std::string::npos) return 0;
  const std::optional<int> threads = thread_count(std::string_view(name).substr(at + 1), 1);
  if (!threads) {
    throw UsageError{fmt::format(
        "'{}' in --backends: after the @ comes the session's thread count, from 1 to 4096", name)};
  }
  return *threads;
}

/// The graph optimisation level a --backends name gives an ONNX Runtime session: onnx (all of
/// them, ONNX Runtime's default), onnx_extended, onnx_basic, onnx_disabled; none for another name.
std::optional<aitune::lt::OnnxOptimization> onnx_level_of(const std::string& runtime) {
  using aitune::lt::OnnxOptimization;
  if (runtime == "onnx") return OnnxOptimization::all;
  for (const OnnxOptimization level :
       {OnnxOptimization::extended, OnnxOptimization::basic, OnnxOptimization::disabled}) {
    if (runtime == fmt::format("onnx_{}", aitune::lt::OnnxRuntime::optimization_name(level))) {
      return level;
    }
  }
  return std::nullopt;
}

/// --runtime-threads: sweep, or thread counts (0: the runtime's default).
std::vector<int> parse_runtime_threads(const std::string& text) {
  if (text == "sweep") {
    std::vector<int> counts =
        aitune::lt::runtime_thread_counts(std::thread::hardware_concurrency());
    if (counts.empty()) counts.push_back(0);  // the count is unknown: the runtime's default
    return counts;
  }
  std::vector<int> counts;
  for (const std::string_view count : aitune::comma_separated(text)) {
    const std::optional<int> threads = thread_count(count, 0);
    if (!threads) {
      throw UsageError{fmt::format("--runtime-threads takes sweep or thread counts from 0 (the "
                                   "runtime's default) to 4096, comma-separated; got '{}'",
                                   text)};
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
Options parse_arguments(int argc, char** argv) {
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
  std::string json;
  std::string report_dir;
  std::string cache;
  std::string expect;
  int samples = 0;

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
                 "openvino_bf16 for its converted models, with the session's threads after an @ "
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
         wrapped("a tuning cache: reuse the decision stored for this model, inputs, machine, "
                 "candidates and settings (rebuilt and checked, not measured), or tune and store "
                 "it"))
      ->type_name("FILE")
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
        std::pair{"--cache", &cache}, std::pair{"--expect", &expect}}) {
    if (app.count(name) > 0 && value->empty()) {
      throw UsageError{fmt::format("{} was given an empty path", name)};
    }
  }
  if (!json.empty()) options.json = std::filesystem::path(json);
  if (!report_dir.empty()) options.report_dir = std::filesystem::path(report_dir);
  if (!cache.empty()) options.cache = std::filesystem::path(cache);
  if (!expect.empty()) options.expect = std::filesystem::path(expect);
  if (app.count("--samples") > 0) options.samples = samples;
  for (const auto& file : sample_files)
    options.sample_files.emplace_back(file);
  for (const auto& package : aoti_packages)
    options.aoti_packages.emplace_back(package);

  for (const std::string& text : inputs) {
    // NAME=SHAPE: a name is a Python identifier; a shape never holds '='.
    const auto equals = text.find('=');
    std::string name = equals == std::string::npos ? std::string() : text.substr(0, equals);
    const std::string spec = equals == std::string::npos ? text : text.substr(equals + 1);
    const bool valid_name = !name.empty() &&
                            std::isdigit(static_cast<unsigned char>(name.front())) == 0 &&
                            std::all_of(name.begin(), name.end(), [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                            });
    if (equals != std::string::npos && !valid_name) {
      throw UsageError{fmt::format("bad input '{}': '{}' is not an input name", text, name)};
    }
    if (!name.empty() && std::find(options.input_names.begin(), options.input_names.end(), name) !=
                             options.input_names.end()) {
      throw UsageError{fmt::format("--input names '{}' twice", name)};
    }
    try {
      options.inputs.push_back(aitune::lt::parse_input_spec(spec));
    } catch (const aitune::ConfigError& error) {
      throw UsageError{error.what()};
    }
    options.input_names.push_back(std::move(name));
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
    for (const std::string_view name : aitune::comma_separated(backends)) {
      if (name.empty()) throw UsageError{"--backends has an empty name (two commas in a row?)"};
      if (std::find(options.backends.begin(), options.backends.end(), name) !=
          options.backends.end()) {
        throw UsageError{fmt::format("--backends names '{}' twice", name)};
      }
      options.backends.emplace_back(name);  // checked once the model's kind is known
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
  check_paths_apart(options);
  return options;
}

/// The candidates --backends names (default: the model's default candidates). A TorchScript
/// model takes the names of named_backends; a .pt2 archive the names of its AOTInductor models,
/// and onnx (onnx_extended, onnx_basic, onnx_disabled: at a lower graph optimisation level),
/// openvino and openvino_bf16 for the converted models it holds, each with its session's thread
/// count after an @ where wanted (onnx@1).
std::vector<aitune::lt::AnyBackend>
make_candidates(const std::vector<std::string>& names, const aitune::lt::Model& model,
                const std::optional<std::vector<int>>& runtime_threads) {
  using aitune::lt::AnyBackend;
  if (!model.is_exported() && runtime_threads) {
    throw UsageError{"--runtime-threads sets a .pt2 archive's ONNX Runtime and OpenVINO "
                     "sessions; a TorchScript model has none"};
  }
  if (names.empty()) {
    return runtime_threads ? aitune::lt::default_candidates(model, *runtime_threads)
                           : aitune::lt::default_candidates(model);
  }
  std::vector<AnyBackend> candidates;
  for (const auto& name : names) {
    if (!model.is_exported()) {
      const NamedBackend* backend = find_backend(name);
      if (backend == nullptr)
        throw UsageError{fmt::format("unknown backend '{}' in --backends", name)};
      candidates.push_back(backend->make());
      continue;
    }
    const aitune::lt::Pt2Archive& archive = *model.archive;
    // A runtime's name takes its session's intra-op threads after an @: onnx@1.
    const std::string runtime = name.substr(0, name.find('@'));
    if (const std::optional<aitune::lt::OnnxOptimization> level = onnx_level_of(runtime)) {
      candidates.emplace_back(
          aitune::lt::OnnxRuntime::from_archive(archive).set_optimization(*level).set_threads(
              runtime_threads_of(name)));
      continue;
    }
    if (runtime == "openvino" || runtime == "openvino_bf16") {
      candidates.emplace_back(
          aitune::lt::OpenVino::from_archive(
              archive, runtime == "openvino" ? aitune::Precision::fp32 : aitune::Precision::bf16)
              .set_threads(runtime_threads_of(name)));
      continue;
    }
    const auto& compiled = archive.aoti_models;
    const auto found = std::find_if(compiled.begin(), compiled.end(),
                                    [&](const auto& info) { return info.name == name; });
    if (found == compiled.end()) {
      std::vector<std::string> known;
      for (const auto& info : compiled)
        known.push_back(info.name);
      throw UsageError{fmt::format(
          "'{}' has no AOTInductor model '{}' (--backends of a .pt2 archive names the models in "
          "it: {}; and onnx, openvino, openvino_bf16 for its converted models, with @THREADS "
          "where wanted; onnx_extended, onnx_basic, onnx_disabled for ONNX Runtime at a lower "
          "graph optimisation level)",
          archive.path.string(), name,
          known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")))};
    }
    candidates.emplace_back(aitune::lt::AOTInductor::from_archive(*model.archive, *found));
  }
  return candidates;
}

/// The --input specs in the order the model takes its inputs: those without a name take the
/// first places, in the order given; each NAME= takes the place of that name among the names
/// the model (or its archive) records. No place may be left empty before the last one given,
/// and an archive's program takes all of them.
std::vector<aitune::lt::InputSpec> inputs_in_model_order(const Options& options,
                                                         const aitune::lt::Model& model) {
  const bool named = std::any_of(options.input_names.begin(), options.input_names.end(),
                                 [](const std::string& name) { return !name.empty(); });
  if (!named) return options.inputs;
  const std::vector<std::string> names = aitune::lt::input_names_of(model);
  if (names.empty()) {
    throw UsageError{fmt::format("--input NAME=SHAPE: '{}' records no input names; give the inputs "
                                 "by position, in the order forward() takes them",
                                 options.model.string())};
  }
  std::vector<std::optional<aitune::lt::InputSpec>> placed(names.size());
  std::size_t next_unnamed = 0;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& name = options.input_names[i];
    std::size_t place = next_unnamed;
    if (name.empty()) {
      ++next_unnamed;
    } else {
      const auto found = std::find(names.begin(), names.end(), name);
      if (found == names.end()) {
        throw UsageError{fmt::format("--input {}=...: '{}' has no input '{}' (its inputs: {})",
                                     name, options.model.string(), name, fmt::join(names, ", "))};
      }
      place = static_cast<std::size_t>(found - names.begin());
    }
    if (place >= names.size()) {
      throw UsageError{fmt::format("--input: '{}' takes {} inputs ({}), more were given",
                                   options.model.string(), names.size(), fmt::join(names, ", "))};
    }
    if (placed[place]) {
      throw UsageError{
          fmt::format("--input: input '{}' is given twice, by position and by name", names[place])};
    }
    placed[place] = options.inputs[i];
  }
  std::vector<aitune::lt::InputSpec> ordered;
  const auto last =
      static_cast<std::size_t>(std::find_if(placed.rbegin(), placed.rend(),
                                            [](const auto& spec) { return spec.has_value(); })
                                   .base() -
                               placed.begin());
  for (std::size_t i = 0; i < placed.size(); ++i) {
    if (!placed[i] && (i < last || model.is_exported())) {
      throw UsageError{fmt::format("--input: no value for input '{}' (the inputs of '{}': {})",
                                   names[i], options.model.string(), fmt::join(names, ", "))};
    }
    if (placed[i]) ordered.push_back(*placed[i]);
  }
  return ordered;
}

/// The samples to tune on: random ones from `inputs` (--input, in the model's order), or those
/// --sample files hold.
std::vector<aitune::lt::Sample> make_samples(const Options& options,
                                             const std::vector<aitune::lt::InputSpec>& inputs,
                                             c10::Device device) {
  std::vector<aitune::lt::Sample> samples;
  for (int i = 0; i < options.samples.value_or(1) && options.sample_files.empty(); ++i) {
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

/// What a run has learnt about where it runs, for the JSON report; filled as it goes, so a
/// failed run's report says as much as was known.
using Environment = nlohmann::json;

/// Fails now, naming the cause, when the JSON report could not be written at `path`.
void check_report_writable(const std::filesystem::path& path) {
  if (is_stdout(path)) return;
  if (is_stream_file(path)) {
    if (::access(path.c_str(), W_OK) != 0) {
      throw aitune::Error(
          fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
    }
    return;
  }
  aitune::check_writable(path);
}

void write_report(const std::filesystem::path& path, nlohmann::json json,
                  const Environment& environment) {
  json["environment"] = environment;
  const std::string text = aitune::json_text(json, 2) + "\n";
  if (is_stdout(path)) {
    print_to(stdout, "{}", text);
    if (std::fflush(stdout) != 0 || stdout_error.load() != 0) {
      throw aitune::Error(
          fmt::format("cannot write the JSON report to standard output: {}",
                      std::strerror(stdout_error.load() != 0 ? stdout_error.load() : errno)));
    }
    return;
  }
  if (is_stream_file(path)) {
    std::ofstream out(path, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      throw aitune::Error(
          fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
    }
  } else {
    aitune::write_text_file(path, text);
  }
  print_to_stderr("report written to {}\n", path.string());
}

/// The files of --report-dir: the JSON report, the markdown and the chart.
void write_report_dir(const std::filesystem::path& dir, const aitune::TuneReport& report,
                      const Environment& environment, bool raw_samples) {
  write_report(dir / "report.json", aitune::to_json(report, {.raw_samples = raw_samples}),
               environment);
  nlohmann::json summary = nlohmann::json::object();
  for (const char* name : {"model", "device", "libtorch", "onnxruntime", "openvino", "aitune",
                           "intra_op_threads", "date"}) {
    if (environment.contains(name)) summary[name] = environment[name];
  }
  if (environment.contains("machine")) {
    for (const auto& [name, value] : environment["machine"].items()) {
      if (name != "device") summary[name] = value;
    }
  }
  aitune::write_text_file(dir / "report.md", aitune::render_markdown(report, summary));
  const nlohmann::json machine = environment.value("machine", nlohmann::json::object());
  const std::string subtitle =
      fmt::format("{} ({}), LibTorch {}, {} intra-op threads", environment.value("device", "?"),
                  machine.value("gpu", machine.value("cpu", "?")),
                  environment.value("libtorch", "?"), environment.value("intra_op_threads", 0));
  aitune::write_text_file(dir / "report.svg", aitune::render_svg(report, subtitle));
  print_to_stderr("report.md and report.svg written to {}\n", dir.string());
}

/// The largest share of its tolerance any output's worst element used (0 when none was compared).
double worst_error_ratio(const aitune::OutputCheck& check) {
  double worst = 0.0;
  for (const auto& output : check.accuracy)
    worst = std::max(worst, output.worst_error_ratio);
  return worst;
}

/// --expect: the tuned module's outputs for `sample` against `expected` (read from `file`), with
/// the selected backend's tolerance; prints the verdict.
aitune::OutputCheck check_expected_outputs(const aitune::lt::TunedModule& tuned,
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

int run(const Options& options, Environment& environment, std::stop_token stop) {
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
    const auto& converted = model.archive->runtime_variants;
    if (converted.contains("onnx")) {
      const std::string version = lt::OnnxRuntime::version();
      environment["onnxruntime"] = version.empty() ? "not loaded" : version;
    }
    if (converted.contains("openvino")) {
      const std::string version = lt::OpenVino::version();
      environment["openvino"] = version.empty() ? "not in this build" : version;
    }
  }
  std::vector<lt::AnyBackend> candidates =
      make_candidates(options.backends, model, options.runtime_threads);
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
  const std::vector<lt::Sample> samples = make_samples(options, inputs, device);
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
    const lt::AotiModelInfo* compiled = lt::aoti_baseline_of(model);
    if (compiled == nullptr && !lt::AOTInductor::available()) {
      throw Error(fmt::format("'{}' is a torch.export archive: LibTorch {} runs neither its "
                              "ExportedProgram (the native runtime is in 2.9 to 2.11) nor "
                              "AOTInductor models (2.6 and newer)",
                              options.model.string(), lt::libtorch_version()));
    }
    if (compiled == nullptr) {
      throw Error(fmt::format(
          "'{}' is a torch.export archive with no AOTInductor model, and its ExportedProgram runs "
          "on LibTorch's native runtime, which LibTorch {} does not have (2.9 to 2.11 do): add "
          "AOTInductor models with tools/export_model.py --variants",
          options.model.string(), lt::libtorch_version()));
    }
    log.warn(0,
             fmt::format("LibTorch {} has no native runtime to run the ExportedProgram: the "
                         "baseline is the archive's first AOTInductor model, {}, and the "
                         "candidates are checked against it, not against eager PyTorch (--expect "
                         "checks against eager PyTorch's outputs: tools/export_model.py "
                         "--save-io)",
                         lt::libtorch_version(), compiled->name));
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
  if (options.stable) profiling.set_stop_rule(StableWindow());
  if (options.switch_warmup_ms) {
    profiling.set_race(
        RaceConfig{profiling.race()}.set_switch_warmup_ms(*options.switch_warmup_ms));
  }
  const auto config =
      StrategyConfig{}
          .enable_performance_validation(validation)
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
    cache.emplace(*options.cache);
    cache->set_stop_token(stop);
    cache->set_lock_timeout(std::chrono::milliseconds(
        static_cast<std::int64_t>(std::llround(options.cache_lock_timeout_s * 1000.0))));
  }

  // Check the inputs once up front: a shape the model cannot take is the user's mistake, and
  // should not surface as every candidate failing in turn. (An archive of AOTInductor models
  // only has no baseline to ask: its candidates' builds check the inputs.) A decision the cache
  // holds was tuned on these very shapes (the key covers them), and its rebuilt choice is
  // checked on the samples: the probe would only add a baseline build to the hit.
  const bool has_baseline = !model.is_exported() || lt::aoti_baseline_of(model) != nullptr ||
                            model.archive->main_program().has_value();
  std::optional<nlohmann::json> key;
  if (cache) key = lt::tuning_key(model, samples, candidates, config, *cache);
  const bool cached = key && cache->find(*key, log);
  if (has_baseline && !cached) {
    std::string probed = "baseline";
    try {
      lt::AnyBackend probe = lt::make_baseline(model);
      probed = fmt::format("baseline {}", probe.describe());
      probe.build(model, samples);
    } catch (const std::exception& error) {
      // Loading (a weight missing from the archive) and running fail alike here: the cause says
      // which, and the message blames neither the inputs nor the file.
      throw Error(fmt::format("model '{}' with the inputs {}: its {} failed to load or run: {}",
                              options.model.string(), fmt::join(shapes, " "), probed,
                              lt::summarize_error(error)));
    }
  }

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

/// A failed run still leaves its JSON report: the error, what was known of the environment and,
/// when the tuning itself found nothing usable, its report with every candidate's reason.
void write_failed_report(const Options& options, const Environment& environment,
                         std::string_view message, const aitune::TuneReport* report) {
  std::vector<std::filesystem::path> paths;
  if (options.json) paths.push_back(*options.json);
  if (options.report_dir) paths.push_back(*options.report_dir / "report.json");
  nlohmann::json json = report ? aitune::to_json(*report, {.raw_samples = options.raw_samples})
                               : nlohmann::json::object();
  json["error"] = message;
  for (const auto& path : paths) {
    try {
      write_report(path, json, environment);
    } catch (const std::exception& failure) {  // the original error is the one to report
      if (message != failure.what()) {
        print_to_stderr("aitune-tune: the JSON report was not written either: {}\n",
                        failure.what());
      }
    }
  }
}

/// The whole command; returns its exit code.
int tune_command(int argc, char** argv) {
  Options options;
  Environment environment = Environment::object();
  try {
    options = parse_arguments(argc, argv);
    std::stop_source stop;
    stop_on_signals(stop);
    const int code = run(options, environment, stop.get_token());
    // The report on standard output is the run's result: one that could not be written (a full
    // device: 1; a closed pipe: 141, as SIGPIPE would have) fails it, after the JSON report and
    // the cache are written.
    int failed_write = stdout_error.load();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      failed_write = failed_write != 0 ? failed_write : (errno != 0 ? errno : EIO);
    }
    if (failed_write != 0) {
      print_to_stderr("aitune-tune: error: the report could not be written to standard output: "
                      "{}\n",
                      std::strerror(failed_write));
      if (code != 0) return code;
      return failed_write == EPIPE ? 128 + SIGPIPE : 1;
    }
    // A signal that came once the decision was made (while it was stored, or waited for the
    // cache's lock, which the signal ends): the reports are written, and the exit code still
    // says the run was interrupted.
    if (const int number = received_signal.load(); number != 0 && code == 0) {
      print_to_stderr("aitune-tune: interrupted by {} after the decision: the reports are "
                      "written (the log above says whether the cache is)\n",
                      number == SIGTERM ? "SIGTERM" : "SIGINT");
      return 128 + number;
    }
    return code;
  } catch (const UsageError& error) {
    if (error.message.empty()) {
      print_to(stdout, "{}", error.help);
      return std::fflush(stdout) == 0 && std::ferror(stdout) == 0 ? 0 : 1;
    }
    print_to_stderr("aitune-tune: {}\n\n{}(aitune-tune --help lists every option)\n", error.message,
                    usage_lines);
    // With --json given, a usage error leaves the report too (the usage text promises it for
    // every failure): say, a backend the model lacks, or a sample whose batch is not 1.
    write_failed_report(options, environment, error.message, nullptr);
    return 2;
  } catch (const aitune::CancelledError& error) {
    const int number = received_signal.load();
    const std::string message =
        fmt::format("interrupted by {}: the tuning stopped before a decision",
                    number == SIGTERM ? "SIGTERM" : "SIGINT");
    print_to_stderr("aitune-tune: {}\n", message);
    write_failed_report(options, environment, message, error.report());
    return 128 + (number != 0 ? number : SIGINT);
  } catch (const aitune::NoCorrectBackendError& error) {
    if (error.report()) print_report("\n{}", aitune::render_table(*error.report()));
    print_to_stderr("aitune-tune: error: {}\n", error.what());
    write_failed_report(options, environment, error.what(), error.report());
    return 1;
  } catch (const aitune::Error& error) {  // our messages are written for people already
    print_to_stderr("aitune-tune: error: {}\n", error.what());
    write_failed_report(options, environment, error.what(), nullptr);
    return 1;
  } catch (const std::exception& error) {
    const std::string message = aitune::lt::summarize_error(error);
    print_to_stderr("aitune-tune: error: {}\n", message);
    write_failed_report(options, environment, message, nullptr);
    return 1;
  }
}

/// Ends the process without running the static destructors of LibTorch's libraries: they took
/// 0.10 s of a 0.52 s cache hit here (measured side by side), and free nothing a process about
/// to end needs freed (clang's driver skips the same work at exit). Everything
/// the command writes is closed by then (the report files are closed, the model and the tuned
/// backend destroyed, inside tune_command) but for the standard streams, flushed here.
/// A sanitizer build exits normally, so that LeakSanitizer still checks the run.
[[noreturn]] void exit_now(int code) {
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::exit(code);
#else
  std::_Exit(code);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  exit_now(tune_command(argc, argv));
}
