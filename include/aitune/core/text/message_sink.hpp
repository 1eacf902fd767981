// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Where progress and summary messages go: a callable taking one line of text.

#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace aitune {

/// Receives one complete line at a time (without the trailing newline).
using MessageSink = std::function<void(std::string_view)>;

/// The default sink: standard error, one line per message.
[[nodiscard]] inline MessageSink stderr_sink() {
  return [](std::string_view line) { fmt::print(stderr, "{}\n", line); };
}

/// A sink that drops everything.
[[nodiscard]] inline MessageSink null_sink() {
  return [](std::string_view) {};
}

/// Writes messages to a sink, indented two spaces per depth level.
class Logger {
 public:
  explicit Logger(MessageSink sink = stderr_sink()) : sink_(std::move(sink)) {}

  void info(int depth, std::string_view text) const { emit(depth, "", text); }
  void warn(int depth, std::string_view text) const { emit(depth, "WARNING: ", text); }

 private:
  void emit(int depth, std::string_view prefix, std::string_view text) const {
    if (!sink_) return;
    sink_(fmt::format("{:{}}{}{}", "", depth > 0 ? 2 * depth : 0, prefix, text));
  }

  MessageSink sink_;
};

}  // namespace aitune
