// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// SHA-256 (FIPS 180-4), for the tuning cache: a model file's content and a cache key are named by
/// their digest. Incremental, so a model file of gigabytes is hashed in fixed-size reads.

#include "aitune/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace aitune {

class Sha256 {
 public:
  Sha256& update(std::string_view bytes) {
    length_ += bytes.size();
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    std::size_t size = bytes.size();
    if (filled_ > 0) {  // top up a partial block first
      const std::size_t taken = std::min(size, block_.size() - filled_);
      std::memcpy(block_.data() + filled_, data, taken);
      filled_ += taken;
      data += taken;
      size -= taken;
      if (filled_ < block_.size()) return *this;
      compress(block_.data());
      filled_ = 0;
    }
    for (; size >= block_.size(); data += block_.size(), size -= block_.size())
      compress(data);  // whole blocks straight from the input
    std::memcpy(block_.data(), data, size);
    filled_ = size;
    return *this;
  }

  /// The digest's 32 bytes. The object is spent afterwards.
  [[nodiscard]] std::string bytes() {
    const std::uint64_t bits = length_ * 8;
    const char one = static_cast<char>(0x80);
    update(std::string_view(&one, 1));
    const char zero = 0;
    while (filled_ != 56)
      update(std::string_view(&zero, 1));
    for (int shift = 56; shift >= 0; shift -= 8) {
      const char byte = static_cast<char>((bits >> shift) & 0xff);
      update(std::string_view(&byte, 1));
    }
    std::string digest;
    for (const std::uint32_t word : state_) {
      for (int shift = 24; shift >= 0; shift -= 8)
        digest.push_back(static_cast<char>((word >> shift) & 0xff));
    }
    return digest;
  }

  /// The digest as 64 lowercase hex digits. The object is spent afterwards.
  [[nodiscard]] std::string hex() { return to_hex(bytes()); }

  /// `bytes` as lowercase hex digits, two per byte.
  [[nodiscard]] static std::string to_hex(std::string_view bytes) {
    std::string text;
    text.reserve(2 * bytes.size());
    for (const char byte : bytes)
      text += fmt::format("{:02x}", static_cast<unsigned char>(byte));
    return text;
  }

 private:
  static constexpr std::uint32_t rotate(std::uint32_t x, int n) noexcept {
    return (x >> n) | (x << (32 - n));
  }

  void compress(const std::uint8_t* block) {
    static constexpr std::array<std::uint32_t, 64> k{
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
             (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
    }
    for (std::size_t i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotate(w[i - 15], 7) ^ rotate(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotate(w[i - 2], 17) ^ rotate(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
    std::uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
    for (std::size_t i = 0; i < 64; ++i) {
      const std::uint32_t t1 =
          h + (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 =
          (rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
  }

  std::array<std::uint32_t, 8> state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<std::uint8_t, 64> block_{};
  std::size_t filled_ = 0;
  std::uint64_t length_ = 0;
};

[[nodiscard]] inline std::string sha256_hex(std::string_view bytes) {
  return Sha256().update(bytes).hex();
}

/// The SHA-256 of a file's content; throws aitune::Error naming the file when it cannot be read.
[[nodiscard]] inline std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
  Sha256 hash;
  std::string buffer(1 << 20, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw Error(fmt::format("cannot read '{}': read error", path.string()));
  return hash.hex();
}

}  // namespace aitune
