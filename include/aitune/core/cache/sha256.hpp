// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// SHA-256 (FIPS 180-4), for the tuning cache: a model file's content and a cache key are named by
/// their digest. Incremental, so a model file of gigabytes is hashed in fixed-size reads. On an
/// x86-64 CPU with the SHA extensions the blocks go through them (about 6x the portable code: a
/// fresh machine of a fleet hashes its model once before it can reuse a shared decision).

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

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define AITUNE_SHA256_X86 1
#else
#define AITUNE_SHA256_X86 0
#endif

namespace aitune {

namespace detail {

inline constexpr std::array<std::uint32_t, 64> sha256_round_constants{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t sha256_rotate(std::uint32_t x, int n) noexcept {
  return (x >> n) | (x << (32 - n));
}

/// Compresses `count` 64-byte blocks at `data` into `state`, in portable code.
inline void sha256_blocks_portable(std::array<std::uint32_t, 8>& state, const std::uint8_t* data,
                                   std::size_t count) noexcept {
  const auto& k = sha256_round_constants;
  for (; count > 0; --count, data += 64) {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = (std::uint32_t{data[4 * i]} << 24) | (std::uint32_t{data[4 * i + 1]} << 16) |
             (std::uint32_t{data[4 * i + 2]} << 8) | std::uint32_t{data[4 * i + 3]};
    }
    for (std::size_t i = 16; i < 64; ++i) {
      const std::uint32_t s0 =
          sha256_rotate(w[i - 15], 7) ^ sha256_rotate(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 =
          sha256_rotate(w[i - 2], 17) ^ sha256_rotate(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (std::size_t i = 0; i < 64; ++i) {
      const std::uint32_t t1 = h +
                               (sha256_rotate(e, 6) ^ sha256_rotate(e, 11) ^ sha256_rotate(e, 25)) +
                               ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (sha256_rotate(a, 2) ^ sha256_rotate(a, 13) ^ sha256_rotate(a, 22)) +
                               ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if AITUNE_SHA256_X86
/// Whether this CPU has the SHA extensions and the SSSE3 and SSE4.1 they are used with here.
inline bool sha256_has_x86_extensions() noexcept {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    const bool ssse3 = (c & (1U << 9)) != 0, sse41 = (c & (1U << 19)) != 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
    return ssse3 && sse41 && (b & (1U << 29)) != 0;
  }();
  return has;
}

/// Compresses `count` 64-byte blocks with the SHA extensions. The state lives in two registers
/// as the instructions take it: ABEF and CDGH (A in the highest lane); each sha256rnds2 runs two
/// rounds on the low half of a register of message words plus round constants.
__attribute__((target("sha,ssse3,sse4.1"))) inline void
sha256_blocks_x86(std::array<std::uint32_t, 8>& state, const std::uint8_t* data,
                  std::size_t count) noexcept {
  const __m128i big_endian = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  const __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data()));
  const __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data() + 4));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; count > 0; --count, data += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4]{};  // NOLINT(*-avoid-c-arrays): the last four groups of four message words
    for (std::size_t group = 0; group < 16; ++group) {
      __m128i& words = w[group % 4];
      if (group < 4) {
        words = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * group)), big_endian);
      } else {  // W[t-16] + s0(W[t-15]), + W[t-7], then + s1(W[t-2])
        const __m128i& previous = w[(group + 3) % 4];
        words = _mm_sha256msg1_epu32(words, w[(group + 1) % 4]);
        words = _mm_add_epi32(words, _mm_alignr_epi8(previous, w[(group + 2) % 4], 4));
        words = _mm_sha256msg2_epu32(words, previous);
      }
      const __m128i constants = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(sha256_round_constants.data() + 4 * group));
      const __m128i sum = _mm_add_epi32(words, constants);
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, sum);  // the new ABEF, two rounds on
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(sum, 0x0E));
      // cdgh holds the pair's first result: after two more rounds, the previous A, B, E, F are
      // the new C, D, G, H.
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data()), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data() + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

/// Compresses `count` 64-byte blocks into `state`, with the SHA extensions where the CPU has them.
inline void sha256_blocks(std::array<std::uint32_t, 8>& state, const std::uint8_t* data,
                          std::size_t count) noexcept {
#if AITUNE_SHA256_X86
  if (sha256_has_x86_extensions()) return sha256_blocks_x86(state, data, count);
#endif
  sha256_blocks_portable(state, data, count);
}

}  // namespace detail

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
      detail::sha256_blocks(state_, block_.data(), 1);
      filled_ = 0;
    }
    const std::size_t whole = size / block_.size();  // straight from the input
    detail::sha256_blocks(state_, data, whole);
    data += whole * block_.size();
    size -= whole * block_.size();
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
