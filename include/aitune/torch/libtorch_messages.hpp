// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// LibTorch's own messages, and where they can go. Its errors become one line for people
/// (summarize_error). Beside them LibTorch has two kinds:
/// - **Warnings** (`TORCH_WARN`, a c10::Warning; TorchScript's `warnings.warn` too) go to a
///   warning handler that c10 keeps per thread. TorchWarningRoute sends those raised on its
///   thread, while it lives, to a Logger at warning level. lt::tune sets one around the whole
///   tuning, so they reach the StrategyConfig's sink with the tuning's own messages (so does
///   BackgroundTunedModule, whose thread calls lt::tune). Warnings raised on other threads (a
///   server's own) keep LibTorch's handler.
/// - **Log lines** (c10's `LOG(WARNING)`; for example the native runtime's "Following ops are
///   missing static dispatched kernels", nine lines at each build of a `.pt2` baseline):
///   LibTorch writes them to standard error itself, and no handler sees them, so they cannot be
///   routed. What can be done is to raise c10's threshold, which is one number for the whole
///   process: set_libtorch_log_level. LibTorch's variable TORCH_CPP_LOG_LEVEL is read only when
///   Python's torch starts, not by a C++ program. The library never changes the threshold on its
///   own (it belongs to the process); aitune-tune raises it unless `--verbose`.

#include "aitune/core/message_sink.hpp"
#include "aitune/core/text/format.hpp"
#include "aitune/torch/libtorch.hpp"

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

namespace detail {

/// The most characters a summary keeps: a reason is one line of a report.
inline constexpr std::size_t summary_limit = 500;

/// Whether `text` is a source location, `path:line:` (no spaces; digits after the last colon).
[[nodiscard]] inline bool is_source_location(std::string_view text) {
  if (!text.ends_with(':') || text.find(' ') != std::string_view::npos) return false;
  text.remove_suffix(1);
  const auto colon = text.rfind(':');
  return colon != std::string_view::npos && colon > 0 && colon + 1 < text.size() &&
         std::all_of(text.begin() + static_cast<std::ptrdiff_t>(colon + 1), text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

/// `line` less a trailing note of where an error was raised, which is all some of OpenVINO's
/// lines say (`Exception from src/inference/src/cpp/core.cpp:105:`, `Check '...' failed at
/// src/core/src/op/convolution.cpp:45:`); what comes before it stays (`OpenVINO 2026.4.1:`).
[[nodiscard]] inline std::string_view without_location(std::string_view line) {
  std::size_t at = line.find("Exception from ");
  bool located = at != std::string_view::npos && is_source_location(line.substr(at + 15));
  if (!located) {
    at = line.find("Check '");
    const auto failed = at == std::string_view::npos ? at : line.find("' failed at ", at + 7);
    located = failed != std::string_view::npos && is_source_location(line.substr(failed + 12));
  }
  if (!located) return line;
  line = line.substr(0, at);
  while (!line.empty() && line.back() == ' ')
    line.remove_suffix(1);
  return line;
}

/// Whether `line` lists a failed node's arguments (the native runtime's `with args:`, then
/// `arg0 input: Tensor long int[1, 3]cpu`, ...): detail, not the cause.
[[nodiscard]] inline bool is_argument_line(std::string_view line) {
  if (line == "with args:") return true;
  if (!line.starts_with("arg") || line.size() < 4) return false;
  std::size_t digits = 3;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9')
    ++digits;
  return digits > 3 && digits < line.size() && line[digits] == ' ';
}

/// A (often long, multi-line) LibTorch or runtime error message as one line that says what went
/// wrong: the last line of a TorchScript interpreter traceback; otherwise its lines joined, less
/// what only says where (OpenVINO's source locations, a C++ backtrace from `Exception raised
/// from` on, the Python stack of the exporting program, a node's argument listing), so that a
/// cause given on a later line (OpenVINO's, the native runtime's `expected scalar type ...`) is
/// kept. At most summary_limit characters: the start and the last line where it is longer.
inline std::string summarize_error(std::string_view text) {
  if (text.find("Traceback of TorchScript") != std::string_view::npos) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.remove_suffix(1);
    const auto start = text.rfind('\n');
    return aitune::detail::cut_text(start == std::string_view::npos ? text : text.substr(start + 1),
                                    summary_limit);
  }
  for (const std::string_view tail : {"\nException raised from ", "\nOriginal Python stacktrace"}) {
    if (const auto at = text.find(tail); at != std::string_view::npos) text = text.substr(0, at);
  }
  std::string summary;
  std::string_view last;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t' || line.front() == '\r'))
      line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    line = without_location(line);
    if (line.empty() || is_argument_line(line)) continue;
    if (!summary.empty()) summary += summary.back() == ':' ? " " : "; ";
    summary += line;
    last = line;
  }
  if (summary.size() <= summary_limit) return summary;
  return fmt::format("{} ... {}", summary.substr(0, summary_limit / 2),
                     aitune::detail::cut_text(last, summary_limit / 2));
}

/// summarize_error of any exception, without LibTorch's C++ backtrace.
inline std::string summarize_error(const std::exception& error) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) {
    return summarize_error(torch_error->what_without_backtrace());
  }
  return summarize_error(error.what());
}
}  // namespace detail

/// A LibTorch or runtime error as one line that says what went wrong (see detail's), without
/// LibTorch's C++ backtrace: for messages to people.
using detail::summarize_error;

/// While it lives, LibTorch's warnings raised on the constructing thread go to `log` as
/// warnings (prefixed "LibTorch: ", each distinct text once: a model that warns on every call
/// would flood the log otherwise), instead of LibTorch's own handler. Not copyable or movable:
/// it must end on the thread that made it, the handler before it then restored.
class TorchWarningRoute {
 public:
  explicit TorchWarningRoute(Logger log, int depth = 1)
      : handler_(std::move(log), depth), guard_(&handler_) {}
  TorchWarningRoute(const TorchWarningRoute&) = delete;
  TorchWarningRoute& operator=(const TorchWarningRoute&) = delete;

 private:
  class Handler final : public c10::WarningHandler {
   public:
    Handler(Logger log, int depth) : log_(std::move(log)), depth_(depth) {}

#if AITUNE_TORCH_AT_LEAST(2, 0)
    void process(const c10::Warning& warning) override {
      forward(warning.msg());
    }
#else
    void process(const c10::SourceLocation& /*where*/, const std::string& text,
                 const bool /*verbatim*/) override {
      forward(text);
    }
#endif

   private:
    void forward(const std::string& text) {
      if (!log_.enabled(LogLevel::warning) || !seen_.insert(text).second) return;
      log_.warn(depth_, "LibTorch: " + text);
    }

    Logger log_;
    int depth_;
    std::set<std::string> seen_{};
  };

#if AITUNE_TORCH_AT_LEAST(2, 0)
  using Guard = c10::WarningUtils::WarningHandlerGuard;
#else
  using Guard = c10::Warning::WarningHandlerGuard;
#endif

  Handler handler_;
  Guard guard_;  ///< after the handler: restores the earlier one before the handler goes
};

namespace detail {

/// While one lives (on any thread), c10's log threshold is at most ERROR: LibTorch 2.9 to 2.11's
/// native runtime prints a program's whole graph signature (`inputsToParameters: {` and a line
/// per parameter, hundreds for a real model) to std::cout as it loads one whenever the threshold
/// is above ERROR (GraphSignature's constructor tests `FLAGS_caffe2_log_level > 2`). So
/// set_libtorch_log_level's `off` would put that on a server's standard output, and before a
/// command's JSON report. NativeRuntime holds one over its load only; the threshold the process
/// set is back once the last one goes. (A library cannot point fd 1 elsewhere while other
/// threads write to it; the threshold is the one setting that avoids the print.)
class SignaturePrintGuard {
 public:
  SignaturePrintGuard() {
#ifndef C10_USE_GLOG
    const std::lock_guard lock(state().mutex);
    if (state().holders++ == 0) {
      state().saved = FLAGS_caffe2_log_level;
      FLAGS_caffe2_log_level = std::min(FLAGS_caffe2_log_level, 2);
    }
#endif
  }
  ~SignaturePrintGuard() {
#ifndef C10_USE_GLOG
    const std::lock_guard lock(state().mutex);
    if (--state().holders == 0) FLAGS_caffe2_log_level = state().saved;
#endif
  }
  SignaturePrintGuard(const SignaturePrintGuard&) = delete;
  SignaturePrintGuard& operator=(const SignaturePrintGuard&) = delete;

 private:
  struct State {
    std::mutex mutex;
    int holders = 0;
    int saved = 0;
  };
  static State& state() {
    static State shared;
    return shared;
  }
};

}  // namespace detail

/// Sets the threshold of LibTorch's log lines (c10's LOG) for the whole process: `info` shows
/// LibTorch's INFO lines too, `warning` (LibTorch's default) its warnings and errors, `off` none
/// but the fatal ones. An ERROR line comes with the exception that ends the call (the native
/// runtime logs each failed node, C++ backtrace and all, then throws), and the exception reaches
/// the report: `off` leaves only the report's one line. It is one number that every thread
/// reads: set it at start-up, before other threads use LibTorch. The library never calls it on
/// its own.
inline void set_libtorch_log_level(LogLevel threshold) noexcept {
  // The severities, as c10 and glog number them: INFO 0, WARNING 1, ERROR 2, FATAL 3.
  const int severity = threshold == LogLevel::info ? 0 : threshold == LogLevel::warning ? 1 : 3;
#ifdef C10_USE_GLOG
  FLAGS_minloglevel = severity;  // a LibTorch built with glog (Debian's) logs through it
#else
  FLAGS_caffe2_log_level = severity;
#endif
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
