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
#include "aitune/torch/libtorch.hpp"

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>

#include <exception>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace aitune::lt {
inline namespace AITUNE_LT_ABI {

namespace detail {
/// The line of a (often long, multi-line) LibTorch error message that says what went wrong:
/// the last line of a TorchScript interpreter traceback, else the first line.
inline std::string summarize_error(std::string_view text) {
  if (text.find("Traceback of TorchScript") != std::string_view::npos) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.remove_suffix(1);
    const auto start = text.rfind('\n');
    return std::string(start == std::string_view::npos ? text : text.substr(start + 1));
  }
  return std::string(text.substr(0, text.find('\n')));
}

/// summarize_error of any exception, without LibTorch's C++ backtrace.
inline std::string summarize_error(const std::exception& error) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) {
    return summarize_error(torch_error->what_without_backtrace());
  }
  return summarize_error(error.what());
}
}  // namespace detail

/// The line of a LibTorch error that says what went wrong (the last line of a TorchScript
/// traceback, else the first line), without LibTorch's C++ backtrace: for messages to people.
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

/// Sets the threshold of LibTorch's log lines (c10's LOG) for the whole process: `info` shows
/// LibTorch's INFO lines too, `warning` (LibTorch's default) its warnings and errors, `off` only
/// its errors. It is one number that every thread reads: set it at start-up, before other
/// threads use LibTorch. The library never calls it on its own.
inline void set_libtorch_log_level(LogLevel threshold) noexcept {
  // The severities, as c10 and glog number them: INFO 0, WARNING 1, ERROR 2.
  const int severity = threshold == LogLevel::info ? 0 : threshold == LogLevel::warning ? 1 : 2;
#ifdef C10_USE_GLOG
  FLAGS_minloglevel = severity;  // a LibTorch built with glog (Debian's) logs through it
#else
  FLAGS_caffe2_log_level = severity;
#endif
}

}  // namespace AITUNE_LT_ABI
}  // namespace aitune::lt
