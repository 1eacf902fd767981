// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// CallerPool: a server's callers, for a tuning at the server's load
/// (ProfilingConfig::set_callers). The calling thread and callers - 1 threads of the pool each
/// make one call at once; run() returns when the last has ended, so a timer around run() reads
/// the time N callers take for one call each: a closed-loop server's per-call latency at that
/// load (its throughput is N over it). The threads are made once per tuning and wait on a
/// condition variable between runs: spinning would take the cores the calls need.

#include "aitune/core/error.hpp"

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace aitune::detail {

class CallerPool {
 public:
  /// `callers` at once (2 or more): the calling thread and callers - 1 threads of its own.
  explicit CallerPool(int callers) : callers_(callers) {
    if (callers < 2) throw ConfigError("a pool of callers has 2 callers or more");
    threads_.reserve(static_cast<std::size_t>(callers - 1));
    for (int k = 1; k < callers; ++k)
      threads_.emplace_back([this, k] { serve(k); });
  }
  CallerPool(const CallerPool&) = delete;
  CallerPool& operator=(const CallerPool&) = delete;
  ~CallerPool() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& thread : threads_)
      thread.join();
  }

  [[nodiscard]] int callers() const noexcept { return callers_; }

  /// Runs `call(k)` for each caller k (0 on this thread) at once; returns when every call has
  /// ended, rethrowing the first failure (of caller 0 first).
  void run(const std::function<void(int)>& call) {
    {
      const std::lock_guard lock(mutex_);
      call_ = &call;
      pending_ = callers_ - 1;
      failure_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    std::exception_ptr own;
    try {
      call(0);
    } catch (...) {
      own = std::current_exception();
    }
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    call_ = nullptr;
    if (own) std::rethrow_exception(own);
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  void serve(int k) {
    std::size_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      const std::function<void(int)>* call = call_;
      lock.unlock();
      std::exception_ptr failure;
      try {
        (*call)(k);
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      if (failure && !failure_) failure_ = failure;
      if (--pending_ == 0) done_.notify_one();
    }
  }

  int callers_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int)>* call_ = nullptr;
  std::size_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr failure_{};
};

}  // namespace aitune::detail
