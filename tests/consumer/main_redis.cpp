// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
// The Redis tuning cache through the installed package: a cache on a port nobody listens on is
// a miss (one warning, at once), never an error; exits 0 when it is.
#include <aitune/redis.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

int main() {
  // Port 1 on loopback is privileged and closed: the connect is refused at once.
  const aitune::TuningCache cache(std::make_unique<aitune::redis::RedisStore>(
      aitune::redis::RedisOptions::from_url("redis://127.0.0.1:1/0")));
  const auto start = std::chrono::steady_clock::now();
  const bool miss = !cache.find(nlohmann::json{{"model", "m"}});
  const auto waited = std::chrono::steady_clock::now() - start;
  std::printf("%s: %s in %.1f ms\n", cache.name().c_str(), miss ? "a miss" : "a hit",
              std::chrono::duration<double, std::milli>(waited).count());
  return miss && cache.name() == "redis://127.0.0.1:1/0" && waited < std::chrono::seconds(1) ? 0
                                                                                             : 1;
}
