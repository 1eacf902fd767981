// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// HMAC-SHA256 (RFC 2104), for the tuning cache: an entry signed with a key the file does not
/// hold cannot be forged by whoever can write the file, while a plain SHA-256 next to the data
/// can be recomputed by anyone.

#include "aitune/core/cache/sha256.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace aitune {

/// HMAC-SHA256 of `message` under `key`, as 64 lowercase hex digits.
[[nodiscard]] inline std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  constexpr std::size_t block = 64;
  std::string padded = key.size() > block ? Sha256().update(key).bytes() : std::string(key);
  padded.resize(block, '\0');
  std::string inner_pad(block, '\0');
  std::string outer_pad(block, '\0');
  for (std::size_t i = 0; i < block; ++i) {
    inner_pad[i] = static_cast<char>(static_cast<unsigned char>(padded[i]) ^ 0x36U);
    outer_pad[i] = static_cast<char>(static_cast<unsigned char>(padded[i]) ^ 0x5cU);
  }
  const std::string inner = Sha256().update(inner_pad).update(message).bytes();
  return Sha256().update(outer_pad).update(inner).hex();
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths only (so that
/// comparing a forged signature with the right one tells nothing of how much of it was right).
[[nodiscard]] inline bool equal_in_constant_time(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  unsigned difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    difference |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  return difference == 0;
}

}  // namespace aitune
