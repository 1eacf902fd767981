// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Where the library's messages go: one sink with levels, set once on the StrategyConfig
/// (the tuning cache writes through the same one). A sink is a callable taking a line of text,
/// or the level and the line; a Logger gives it the messages at or above a threshold.

#include "aitune/core/text/enum_text.hpp"

#include <fmt/format.h>

#include <concepts>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace aitune {

/// How much a message matters. As a Logger's threshold, `off` lets nothing through.
enum class LogLevel {
  info,     ///< progress and results: what is being tried, measured and decided
  warning,  ///< something went wrong and was contained (a failed candidate, an unusable cache)
  off,      ///< a threshold only: no message has it
};

[[nodiscard]] constexpr EnumText enum_text(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::info: return {"info", "info"};
    case LogLevel::warning: return {"warning", "warning"};
    case LogLevel::off: return {"off", "off"};
  }
  return {};
}

/// Receives the messages, one line at a time (no trailing newline), in either of two forms:
/// - `void(std::string_view line)`: the line as people read it, a warning starting with
///   "WARNING: " after its indentation (what the library wrote before it had levels);
/// - `void(aitune::LogLevel, std::string_view line)`: the level, and the line without that
///   prefix, for a logging framework of one's own.
/// An empty sink (default-constructed, or from an empty std::function) drops everything.
class MessageSink {
 public:
  using LineFunction = std::function<void(std::string_view)>;
  using LevelFunction = std::function<void(LogLevel, std::string_view)>;

  MessageSink() = default;
  MessageSink(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor): as std::function

  /// A sink given the level with each line.
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, MessageSink> &&
           std::invocable<F&, LogLevel, std::string_view>)
      MessageSink(F function)  // NOLINT(google-explicit-constructor): a lambda is a sink
      : level_function_(std::move(function)) {}

  /// A sink of plain lines (a callable that also takes a level is taken as one of those).
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, MessageSink> &&
           !std::invocable<F&, LogLevel, std::string_view> && std::invocable<F&, std::string_view>)
      MessageSink(F function)  // NOLINT(google-explicit-constructor): a lambda is a sink
      : line_function_(std::move(function)) {}

  /// Whether it writes anywhere.
  [[nodiscard]] explicit operator bool() const noexcept {
    return static_cast<bool>(line_function_) || static_cast<bool>(level_function_);
  }

  /// Writes `line` as an info message (as a sink was called when it was a std::function).
  void operator()(std::string_view line) const { write(LogLevel::info, 0, line); }

  /// Writes `text` at `level`, indented two spaces per `depth` (negative: none).
  void write(LogLevel level, int depth, std::string_view text) const {
    const int indent = depth > 0 ? 2 * depth : 0;
    if (level_function_) {
      level_function_(level, fmt::format("{:{}}{}", "", indent, text));
    } else if (line_function_) {
      line_function_(fmt::format("{:{}}{}{}", "", indent,
                                 level == LogLevel::warning ? "WARNING: " : "", text));
    }
  }

 private:
  LineFunction line_function_{};
  LevelFunction level_function_{};
};

/// The default sink: standard error, one line per message. Best effort: a line that cannot be
/// written (stderr closed or full) is dropped, never an exception or an abort.
[[nodiscard]] inline MessageSink stderr_sink() {
  return [](std::string_view line) {
    std::string text(line);
    text.push_back('\n');
    (void)std::fwrite(text.data(), 1, text.size(), stderr);
  };
}

/// A sink that drops everything.
[[nodiscard]] inline MessageSink null_sink() {
  return {};
}

/// Hands messages at or above a threshold to a sink. Copies are cheap enough to pass by value;
/// the library passes one `const Logger&` down from the StrategyConfig.
class Logger {
 public:
  explicit Logger(MessageSink sink = stderr_sink(), LogLevel threshold = LogLevel::info)
      : sink_(std::move(sink)), threshold_(threshold) {}

  /// Whether a message at `level` reaches the sink (to skip formatting one that would not).
  [[nodiscard]] bool enabled(LogLevel level) const noexcept {
    return level != LogLevel::off && level >= threshold_ && static_cast<bool>(sink_);
  }

  void info(int depth, std::string_view text) const { emit(LogLevel::info, depth, text); }
  void warn(int depth, std::string_view text) const { emit(LogLevel::warning, depth, text); }

  void emit(LogLevel level, int depth, std::string_view text) const {
    if (enabled(level)) sink_.write(level, depth, text);
  }

 private:
  MessageSink sink_;
  LogLevel threshold_;
};

}  // namespace aitune
