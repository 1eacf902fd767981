// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The exception hierarchy: everything aitune throws derives from aitune::Error.

#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace aitune {

/// Root of every exception aitune throws. Messages name the backend, the step and the cause.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An invalid configuration value (a count of zero, a ratio outside [0, 1], ...).
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// An illegal backend life-cycle transition (infer before build, activate after a failure, ...).
class BackendStateError : public Error {
 public:
  using Error::Error;
};

/// A measurement that could not produce a result (never stable, over its time budget, ...).
class MeasurementError : public Error {
 public:
  using Error::Error;
};

/// A failure about one of the samples a backend was given: what() names it "sample 2 of 3"
/// (counted from 1); a strategy names it as its reasons name samples (ProfilingConfig::
/// set_sample_names), before `about_sample()`.
class SampleError : public Error {
 public:
  /// About sample `index` (from 0) of `count`: `text`, a sentence about that sample.
  SampleError(std::size_t index, std::size_t count, std::string text)
      : Error("sample " + std::to_string(index + 1) + " of " + std::to_string(count) + ": " + text),
        index_(index), text_(std::move(text)) {}

  [[nodiscard]] std::size_t sample() const noexcept { return index_; }
  /// What is wrong with the sample, without its name.
  [[nodiscard]] const std::string& about_sample() const noexcept { return text_; }

 private:
  std::size_t index_;
  std::string text_;
};

struct TuneReport;

/// A tuning that ended without a result. It carries the tuning's report as far as it got (every
/// candidate's reason), so a failed tuning can still be shown and written out.
class TuningError : public Error {
 public:
  using Error::Error;
  TuningError(const std::string& message, std::shared_ptr<const TuneReport> report)
      : Error(message), report_(std::move(report)) {}

  /// The tuning's report; null when the thrower had none.
  [[nodiscard]] const TuneReport* report() const noexcept { return report_.get(); }

 private:
  std::shared_ptr<const TuneReport> report_;
};

/// Tuning ended without any backend that is both correct and measurable.
class NoCorrectBackendError : public TuningError {
 public:
  using TuningError::TuningError;
};

/// The tuning was cancelled through its stop token (StrategyConfig::set_stop_token).
class CancelledError : public TuningError {
 public:
  using TuningError::TuningError;
};

namespace detail {
/// The message of the exception being handled, for reports ("unknown exception" for types not
/// derived from std::exception).
inline std::string current_exception_message() {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "unknown exception";
  }
}

/// The same, with `summarize(error)` for exceptions derived from std::exception.
template <class Summarize>
std::string current_exception_message(Summarize&& summarize) {
  try {
    throw;
  } catch (const std::exception& error) {
    return summarize(error);
  } catch (...) {
    return "unknown exception";
  }
}
}  // namespace detail

}  // namespace aitune
