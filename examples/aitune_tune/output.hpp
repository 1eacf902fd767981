// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
//
// aitune-tune's output: the report's lines and the log on the standard streams (with the
// bookkeeping of standard output's errors), the progress display, and the report files (JSON,
// markdown, SVG; the failed run's JSON report).
#pragma once

#include "options.hpp"
#include <aitune/core/report/markdown.hpp>
#include <aitune/core/report/svg.hpp>
#include <aitune/torch.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <ios>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aitune_tune {

/// The first error writing to standard output (EPIPE: its reader went away), 0 while none.
inline std::atomic<int> stdout_error{0};

/// Where the report table and the selected line go: standard output, unless `--json -` put the
/// JSON report there (then standard error, so that standard output is JSON alone).
inline std::FILE* report_stream = stdout;

/// Writes to `stream` without ever throwing: a write that fails (the stream closed, a full disk
/// behind it) is dropped, and the run goes on to its report files and cache (fmt::print would
/// throw, and a throw on the error path would abort the process). Standard error stays best
/// effort; standard output's errors are checked once at the end (tune_command), so that they
/// fail the run only after everything else is written. Before a write to standard error, the
/// report's stream and standard output are flushed: standard output is fully buffered when it is
/// a pipe or a file, and a line on standard error (`report written to ...`) would otherwise land
/// in the middle of one of its lines.
template <class... Args>
void print_to(std::FILE* stream, fmt::format_string<Args...> format, Args&&... args) noexcept {
  const auto note_stdout_error = [] {
    int expected = 0;
    stdout_error.compare_exchange_strong(expected, errno != 0 ? errno : EIO);
  };
  try {
    const std::string text = fmt::format(format, std::forward<Args>(args)...);
    if (stream == stderr) {
      if (std::fflush(report_stream) != 0 && report_stream == stdout) note_stdout_error();
      if (report_stream != stdout && std::fflush(stdout) != 0) note_stdout_error();
    }
    if (std::fwrite(text.data(), 1, text.size(), stream) != text.size() && stream == stdout) {
      note_stdout_error();
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

/// What a run has learnt about where it runs, for the JSON report; filled as it goes, so a
/// failed run's report says as much as was known.
using Environment = nlohmann::json;

/// Fails now, naming the cause, when the JSON report could not be written at `path`.
inline void check_report_writable(const std::filesystem::path& path) {
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

inline void write_report(const std::filesystem::path& path, nlohmann::json json,
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
inline void write_report_dir(const std::filesystem::path& dir, const aitune::TuneReport& report,
                             const Environment& environment, bool raw_samples) {
  write_report(dir / "report.json", aitune::to_json(report, {.raw_samples = raw_samples}),
               environment);
  nlohmann::json summary = nlohmann::json::object();
  // The runtimes' versions are under their families' keys (run.hpp).
  const std::vector<std::string> summarised{"model",
                                            "device",
                                            "libtorch",
                                            std::string(aitune::lt::OnnxRuntime::family.key),
                                            std::string(aitune::lt::OpenVino::family.key),
                                            "aitune",
                                            "intra_op_threads",
                                            "date"};
  for (const std::string& name : summarised) {
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

/// A failed run still leaves its JSON report: the error, what was known of the environment and,
/// when the tuning itself found nothing usable, its report with every candidate's reason.
inline void write_failed_report(const Options& options, const Environment& environment,
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

}  // namespace aitune_tune
