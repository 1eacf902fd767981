// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Timer policies: how one call is timed, and what "now" is for time budgets.
///
/// A Timer has `measure(call)`, which runs `call()` once and returns its Timing, and
/// `now_ms()`, a monotonic clock in milliseconds. It may also have `prepare(model)`, which a
/// strategy calls before measuring that model (to pick a clock for its device). HostTimer uses
/// std::chrono::steady_clock; VirtualTimer reads a VirtualClock that fake backends advance, so
/// tests of the strategy and of the statistics are deterministic and take milliseconds.

#include <chrono>
#include <concepts>
#include <memory>
#include <optional>
#include <utility>

namespace aitune {

/// The time of one call. `device_ms` is set by device timers (CUDA events); the host time of
/// the same call is always kept, so the two can be compared.
struct Timing {
  double host_ms = 0.0;
  std::optional<double> device_ms{};

  /// The time a decision uses: the device's when it has one, else the host's.
  [[nodiscard]] double ms() const noexcept { return device_ms.value_or(host_ms); }
};

namespace detail {
struct NoopCall {
  void operator()() const noexcept {}
};
}  // namespace detail

template <class T>
concept Timer = requires(T& timer, detail::NoopCall call) {
  { timer.measure(call) } -> std::same_as<Timing>;
  { timer.now_ms() } -> std::convertible_to<double>;
};

/// Times calls on the host with std::chrono::steady_clock.
class HostTimer {
 public:
  template <class Call>
  Timing measure(Call&& call) {
    const auto start = std::chrono::steady_clock::now();
    std::forward<Call>(call)();
    const auto stop = std::chrono::steady_clock::now();
    return Timing{std::chrono::duration<double, std::milli>(stop - start).count(), std::nullopt};
  }

  [[nodiscard]] double now_ms() const {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

/// A clock that moves only when told to. Fake backends advance it inside `infer`.
class VirtualClock {
 public:
  [[nodiscard]] double now_ms() const noexcept { return now_ms_; }
  void advance(double ms) noexcept { now_ms_ += ms; }

 private:
  double now_ms_ = 0.0;
};

/// Times calls on a shared VirtualClock.
class VirtualTimer {
 public:
  explicit VirtualTimer(std::shared_ptr<VirtualClock> clock) : clock_(std::move(clock)) {}

  template <class Call>
  Timing measure(Call&& call) {
    const double start = clock_->now_ms();
    std::forward<Call>(call)();
    return Timing{clock_->now_ms() - start, std::nullopt};
  }

  [[nodiscard]] double now_ms() const noexcept { return clock_->now_ms(); }
  [[nodiscard]] const std::shared_ptr<VirtualClock>& clock() const noexcept { return clock_; }

 private:
  std::shared_ptr<VirtualClock> clock_;
};

}  // namespace aitune
