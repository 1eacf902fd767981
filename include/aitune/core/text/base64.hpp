// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Base64 (RFC 4648, with padding), for bytes kept in a JSON file: the tuning cache stores the
/// baseline's outputs this way.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aitune {

namespace detail {
inline constexpr std::string_view base64_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace detail

[[nodiscard]] inline std::string base64_encode(std::string_view bytes) {
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t left = bytes.size() - i;
    std::uint32_t group = static_cast<std::uint8_t>(bytes[i]) << 16;
    if (left > 1) group |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes[i + 1])) << 8;
    if (left > 2) group |= static_cast<std::uint8_t>(bytes[i + 2]);
    text += detail::base64_alphabet[(group >> 18) & 63];
    text += detail::base64_alphabet[(group >> 12) & 63];
    text += left > 1 ? detail::base64_alphabet[(group >> 6) & 63] : '=';
    text += left > 2 ? detail::base64_alphabet[group & 63] : '=';
  }
  return text;
}

/// The bytes `text` encodes, or nothing when it is not padded base64 (a character outside the
/// alphabet, a length not a multiple of 4, padding anywhere but at the end).
[[nodiscard]] inline std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::array<int, 256> value{};
  value.fill(-1);
  for (std::size_t i = 0; i < detail::base64_alphabet.size(); ++i)
    value[static_cast<std::uint8_t>(detail::base64_alphabet[i])] = static_cast<int>(i);
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const std::size_t padding = !last ? 0 : text[i + 3] != '=' ? 0 : text[i + 2] != '=' ? 1 : 2;
    std::uint32_t group = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const int digit = j < 4 - padding ? value[static_cast<std::uint8_t>(text[i + j])] : 0;
      if (digit < 0) return std::nullopt;
      group = group << 6 | static_cast<std::uint32_t>(digit);
    }
    bytes += static_cast<char>((group >> 16) & 0xff);
    if (padding < 2) bytes += static_cast<char>((group >> 8) & 0xff);
    if (padding < 1) bytes += static_cast<char>(group & 0xff);
  }
  return bytes;
}

}  // namespace aitune
