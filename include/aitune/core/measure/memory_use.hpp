// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// How much memory one backend took while it was built and checked: on the host (the process's
/// resident set, from /proc/self on Linux) and on the device (through the backend family's
/// customisation point, aitune::device_memory<B>; LibTorch's CUDA caching allocator for
/// aitune::lt). The strategy watches each backend's build and correctness check, which run the
/// model once per sample, so the peak covers the weights it converts and one inference's
/// working memory.

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace aitune {

/// What one backend took in memory from just before its build to just after its check, in
/// bytes. Absent where it could not be read (host figures outside Linux; device figures for a
/// backend family or device that has none).
struct MemoryUse {
  /// Growth of the process's resident memory: what the backend keeps (weights it copied or
  /// converted, compiled code). The allocator may reuse memory that earlier steps freed, so a
  /// small figure is approximate; it can be negative when something else was freed meanwhile.
  std::optional<std::int64_t> host_kept_bytes{};
  /// The highest resident memory during the build and check, above the level just before it:
  /// what the backend needs on the host at most.
  std::optional<std::int64_t> host_peak_bytes{};
  /// Growth of the memory allocated on the device (not what a caching allocator reserves).
  std::optional<std::int64_t> device_kept_bytes{};
  /// The highest allocated device memory during the build and check, above the level before.
  std::optional<std::int64_t> device_peak_bytes{};

  [[nodiscard]] bool has_device() const noexcept {
    return device_kept_bytes.has_value() || device_peak_bytes.has_value();
  }
  [[nodiscard]] bool empty() const noexcept {
    return !host_kept_bytes && !host_peak_bytes && !has_device();
  }
};

/// Memory allocated on a device at one moment, and the most since its mark was last reset.
struct DeviceMemoryReading {
  std::int64_t allocated_bytes = 0;
  std::int64_t peak_bytes = 0;
};

/// How a backend family reads its device's memory: by default through the static members
/// `B::device_memory(model)` (a DeviceMemoryReading, or nullopt when the model's device has
/// none to report, e.g. the CPU) and `B::reset_device_peak(model)`. Without them, no device
/// figures are reported.
template <class B>
struct device_memory {
  static constexpr bool available = requires(const typename B::model_type& model) {
    { B::device_memory(model) } -> std::same_as<std::optional<DeviceMemoryReading>>;
    B::reset_device_peak(model);
  };

  [[nodiscard]] static std::optional<DeviceMemoryReading>
  read(const typename B::model_type& model) {
    if constexpr (available) {
      return B::device_memory(model);
    } else {
      (void)model;
      return std::nullopt;
    }
  }

  static void reset_peak(const typename B::model_type& model) {
    if constexpr (available) {
      B::reset_device_peak(model);
    } else {
      (void)model;
    }
  }
};

/// The process's resident memory, read from /proc/self (Linux); nullopt elsewhere or when it
/// cannot be read.
class HostMemory {
 public:
  /// The resident set now (VmRSS).
  [[nodiscard]] static std::optional<std::int64_t> resident_bytes() { return status_kib("VmRSS:"); }
  /// The most resident since the process started or the mark was last reset (VmHWM).
  [[nodiscard]] static std::optional<std::int64_t> peak_bytes() { return status_kib("VmHWM:"); }
  /// Sets the peak mark back to the resident set now (Linux 4.0 and later), so that a later
  /// peak_bytes() covers only what came after. This is the process's own mark: whatever else
  /// reads it (getrusage's ru_maxrss too) then sees the peak since the reset.
  static bool reset_peak() {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    clear.flush();
    return static_cast<bool>(clear);
  }

 private:
  [[nodiscard]] static std::optional<std::int64_t> status_kib(const std::string& field) {
    std::ifstream status("/proc/self/status");
    std::string name;
    while (status >> name) {
      if (name == field) {
        std::int64_t kib = 0;
        if (status >> kib) return kib * 1024;
        return std::nullopt;
      }
      status.ignore(4096, '\n');
    }
    return std::nullopt;
  }
};

/// Watches the memory a backend takes from its construction to finish(): notes the levels and
/// reports the growth. Make one just before a build.
///
/// The peaks come from marks the process shares (the kernel's peak resident set, a device
/// allocator's peak statistics). With `reset_peaks` the watch sets them back first, so every
/// peak is known, and whatever else in the process reads those marks sees them reset. Without
/// it nothing is reset: a peak is known when the backend set a new high for the process (the
/// mark rose), and absent otherwise, since it then lies somewhere below the older high.
template <class B>
class MemoryWatch {
 public:
  MemoryWatch(const typename B::model_type& model, bool reset_peaks) : model_(model) {
    if (reset_peaks) {
      peak_reset_ = HostMemory::reset_peak();
      device_memory<B>::reset_peak(model_);
    }
    host_before_ = HostMemory::resident_bytes();
    host_mark_before_ = HostMemory::peak_bytes();
    device_before_ = device_memory<B>::read(model_);
    device_reset_ = reset_peaks;
  }

  /// The growth since construction.
  [[nodiscard]] MemoryUse finish() const {
    MemoryUse use;
    if (host_before_) {
      if (const auto now = HostMemory::resident_bytes()) {
        use.host_kept_bytes = *now - *host_before_;
        // A mark that was not reset and did not rise is an older, higher peak: no figure
        // rather than a wrong one.
        const auto peak = HostMemory::peak_bytes();
        if (peak && (peak_reset_ || (host_mark_before_ && *peak > *host_mark_before_)))
          use.host_peak_bytes = std::max(*peak, *now) - *host_before_;
      }
    }
    if (device_before_) {
      if (const auto now = device_memory<B>::read(model_)) {
        use.device_kept_bytes = now->allocated_bytes - device_before_->allocated_bytes;
        if (device_reset_ || now->peak_bytes > device_before_->peak_bytes) {
          use.device_peak_bytes =
              std::max(now->peak_bytes, now->allocated_bytes) - device_before_->allocated_bytes;
        }
      }
    }
    return use;
  }

 private:
  const typename B::model_type& model_;
  bool peak_reset_ = false;    ///< the host's peak mark was set back
  bool device_reset_ = false;  ///< the device's peak statistics were set back
  std::optional<std::int64_t> host_before_{};
  std::optional<std::int64_t> host_mark_before_{};
  std::optional<DeviceMemoryReading> device_before_{};
};

/// Runs `step` (a backend's build and check, returning whether it is ready) and, when `watch` is
/// on, puts the memory it took in `into` (nothing when no figure could be read). `reset_peaks`
/// as for MemoryWatch.
template <class B, class Step>
bool watching_memory(const typename B::model_type& model, bool watch, bool reset_peaks,
                     std::optional<MemoryUse>& into, Step step) {
  if (!watch) return step();
  const MemoryWatch<B> watcher(model, reset_peaks);
  const bool ready = step();
  if (MemoryUse use = watcher.finish(); !use.empty()) into = use;
  return ready;
}

}  // namespace aitune
