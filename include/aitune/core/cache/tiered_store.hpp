// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// TieredStore: a local store (a file) in front of a shared one (Redis), read through and
/// written through. A look-up tries the local store first; a shared hit is copied to it, so that
/// the next start of this machine needs no network. A put goes to both; when the shared store
/// fails (down, full, hung), the decision stays in the local store and is pushed at the next
/// look-up that finds it there while the shared store answers. Leases are the shared store's
/// (one tuner per key across the fleet).

#include "aitune/core/cache/cache_store.hpp"
#include "aitune/core/error.hpp"

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace aitune {

class TieredStore final : public CacheStore {
 public:
  TieredStore(std::unique_ptr<CacheStore> local, std::unique_ptr<CacheStore> shared)
      : local_(std::move(local)), shared_(std::move(shared)) {
    if (!local_ || !shared_) throw ConfigError("a tiered cache store needs both of its stores");
  }

  void set_lock_timeout(std::chrono::milliseconds timeout) override {
    local_->set_lock_timeout(timeout);
    shared_->set_lock_timeout(timeout);
  }
  void set_stop_token(std::stop_token stop) override {
    local_->set_stop_token(stop);
    shared_->set_stop_token(std::move(stop));
  }
  void set_max_entries(std::size_t entries) override { max_entries_ = entries; }

  [[nodiscard]] std::string name() const override {
    return shared_->name() + " (through " + local_->name() + ")";
  }
  [[nodiscard]] std::optional<std::string> local_file() const override {
    return local_->local_file();
  }

  [[nodiscard]] std::optional<nlohmann::json> get(const std::string& id,
                                                  const Logger& log) const override {
    if (std::optional<nlohmann::json> entry = local_->get(id, log)) {
      push_if_missing(id, *entry, log);
      return entry;
    }
    std::optional<nlohmann::json> entry = shared_->get(id, log);
    if (entry) {
      try {
        (void)local_->put(id, *entry, max_entries_, log);
      } catch (const std::exception& error) {
        log.warn(0, fmt::format("tuning cache '{}': a shared decision was not copied to the local "
                                "file: {}",
                                local_->name(), error.what()));
      }
    }
    return entry;
  }

  /// Throws only when neither store kept the entry.
  bool put(const std::string& id, const nlohmann::json& entry, std::size_t max_entries,
           const Logger& log) const override {
    bool kept = false;
    std::string local_failure;
    try {
      kept = local_->put(id, entry, max_entries, log);
    } catch (const std::exception& error) {
      local_failure = error.what();
    }
    std::string shared_failure;
    try {
      if (shared_->put(id, entry, max_entries, log)) return true;
      shared_failure = "it is unreachable";  // warned by the store, at the fault
    } catch (const std::exception& error) {
      shared_failure = error.what();
    }
    if (!local_failure.empty()) {
      throw Error(fmt::format("neither store kept it (local: {}; shared: {})", local_failure,
                              shared_failure));
    }
    if (kept) {
      log.info(0, fmt::format("tuning cache '{}': the decision is kept in '{}' and goes to the "
                              "shared store at the next start ({})",
                              shared_->name(), local_->name(), shared_failure));
    }
    return kept;
  }

  /// Whether the shared store answered its last request (its leases are the ones taken).
  [[nodiscard]] bool reachable() const override { return shared_->reachable(); }

  [[nodiscard]] std::optional<CacheLease> try_lease(const std::string& id,
                                                    std::chrono::milliseconds ttl,
                                                    const Logger& log) const override {
    return shared_->try_lease(id, ttl, log);
  }
  bool renew(const CacheLease& lease, std::chrono::milliseconds ttl,
             const Logger& log) const override {
    return shared_->renew(lease, ttl, log);
  }
  void release(const CacheLease& lease, const Logger& log) const override {
    shared_->release(lease, log);
  }

  [[nodiscard]] std::unique_ptr<CacheStore> clone() const override {
    auto copy = std::make_unique<TieredStore>(local_->clone(), shared_->clone());
    copy->max_entries_ = max_entries_;
    return copy;
  }

  [[nodiscard]] const CacheStore& local() const noexcept { return *local_; }
  [[nodiscard]] const CacheStore& shared() const noexcept { return *shared_; }

 private:
  /// A decision kept only locally (the shared store was down when it was made) goes up now,
  /// when the shared store answers and lacks it. Best effort: a fault was warned by the store.
  void push_if_missing(const std::string& id, const nlohmann::json& entry,
                       const Logger& log) const {
    {
      const std::lock_guard lock(checked_mutex_);
      if (!checked_ids_.insert(id).second) return;  // once per id: a start looks up three times
    }
    try {
      if (!shared_->has(id, log) && shared_->reachable()) {
        if (shared_->put(id, entry, max_entries_, log)) {
          log.info(0, fmt::format("tuning cache '{}': the decision kept locally while it was "
                                  "unreachable was pushed to it",
                                  shared_->name()));
        }
      }
    } catch (const std::exception&) {
    }
  }

  std::unique_ptr<CacheStore> local_;
  std::unique_ptr<CacheStore> shared_;
  std::size_t max_entries_ = default_max_cache_entries;  ///< for its own copies and pushes
  mutable std::mutex checked_mutex_;
  mutable std::set<std::string> checked_ids_;  ///< ids whose push was tried
};

}  // namespace aitune
