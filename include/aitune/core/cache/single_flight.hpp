// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// One tuning per key across the processes that share a store: the first to miss takes a lease
/// on the key's id and tunes; the others wait for its entry up to TuningCache::leader_wait (a
/// BackgroundTunedModule serves the baseline meanwhile), take the lease over when its holder
/// stops (released, or lapsed when a killed holder stopped renewing), and tune themselves,
/// saying so, when the wait runs out. The holder renews the lease while it tunes and releases it
/// on every way out.

#include "aitune/core/cache/cache_store.hpp"
#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/message_sink.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>

namespace aitune::detail {

/// A lease held for a tuning: renewed every third of its time to live on a thread of its own,
/// released when this goes out of scope (a stored decision, every candidate failed, an
/// exception). A renewal that finds the lease lost is one warning: the tuning goes on.
class HeldLease {
 public:
  HeldLease(const CacheStore& store, std::optional<CacheLease> lease, std::chrono::milliseconds ttl,
            Logger log)
      : store_(store), lease_(std::move(lease)), ttl_(ttl), log_(std::move(log)) {
    if (!lease_) return;
    renewer_ = std::jthread([this](const std::stop_token& stop) {
      std::mutex mutex;
      std::condition_variable_any wake;
      std::unique_lock lock(mutex);
      while (true) {
        (void)wake.wait_for(lock, stop, ttl_ / 3, [] { return false; });
        if (stop.stop_requested()) return;
        if (!store_.renew(*lease_, ttl_, log_)) {
          log_.warn(0, fmt::format("tuning cache '{}': the lease on this key was lost (it "
                                   "lapsed, or the store was unreachable): another process may "
                                   "tune it too",
                                   store_.name()));
          return;
        }
      }
    });
  }
  HeldLease(const HeldLease&) = delete;
  HeldLease& operator=(const HeldLease&) = delete;
  ~HeldLease() {
    if (!lease_) return;
    renewer_.request_stop();
    if (renewer_.joinable()) renewer_.join();
    try {
      store_.release(*lease_, log_);
    } catch (...) {  // a store's fault is not the tuning's
    }
  }

  [[nodiscard]] bool held() const noexcept { return lease_.has_value(); }

 private:
  const CacheStore& store_;
  std::optional<CacheLease> lease_;
  std::chrono::milliseconds ttl_;
  Logger log_;
  std::jthread renewer_;
};

/// What waiting for another process's tuning of a key ended with.
struct LeaderWait {
  std::optional<CachedTuning> hit;  ///< its decision, stored meanwhile
  std::optional<CacheLease> lease;  ///< or the lease, taken over (its holder stopped)
};

/// Takes the lease on `key`, or, when another holds it, waits up to cache.leader_wait() for its
/// entry, polling every `poll` and trying the lease each time. A store that cannot lease (it is
/// unreachable) or a wait of zero is no wait. Ends at once when `stop` is requested.
[[nodiscard]] inline LeaderWait
lease_or_wait(const TuningCache& cache, const nlohmann::json& key, const Logger& log,
              const std::stop_token& stop,
              std::chrono::milliseconds poll = std::chrono::milliseconds(200)) {
  const std::string id = TuningCache::entry_id(key);
  const CacheStore& store = cache.store();
  LeaderWait result;
  result.lease = store.try_lease(id, cache.lease_ttl(), log);
  if (result.lease || cache.leader_wait().count() == 0 || !store.reachable()) return result;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + cache.leader_wait();
  log.info(0, fmt::format("tuning cache '{}': another process is tuning this key: waiting up to "
                          "{:.0f} s for its decision",
                          cache.name(), cache.leader_wait().count() / 1e3));
  while (!stop.stop_requested()) {
    if ((result.hit = cache.find(key, log))) return result;
    if ((result.lease = store.try_lease(id, cache.lease_ttl(), log))) {
      log.info(0, fmt::format("tuning cache '{}': the process that was tuning this key stopped "
                              "without a decision: tuning here",
                              cache.name()));
      return result;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || !store.reachable()) break;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(poll, deadline - now));
  }
  if (!stop.stop_requested()) {
    log.warn(0,
             fmt::format(
                 "tuning cache '{}': no decision from the process tuning this key "
                 "within {:.1f} s: tuning here too",
                 cache.name(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  }
  return result;
}

}  // namespace aitune::detail
