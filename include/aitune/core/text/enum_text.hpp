// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// One name table per enum, read both ways. Each enum of the report has an `enum_text(E)`: a
/// switch without a default (so a new enumerator is a -Wswitch error there, not a silent wrong
/// name) giving the token programs read (snake case: the JSON report, the cache key) and the
/// label people read (tables, logs). `to_string(E)` is the token, `to_label(E)` the label, and
/// `parse_token<E>` reads a token back from the same table.

#include <concepts>
#include <optional>
#include <string_view>
#include <type_traits>

namespace aitune {

/// The names of one enumerator: an empty token marks a value that is no enumerator.
struct EnumText {
  std::string_view token;  ///< for programs: snake case, stable
  std::string_view label;  ///< for people
};

/// An enum with a name table. Its enumerators run from 0 without gaps (parse_token walks them).
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E value) {
  { enum_text(value) } -> std::same_as<EnumText>;
};

/// The token of `value`, for programs ("unknown" for a value that is no enumerator).
template <NamedEnum E>
[[nodiscard]] constexpr std::string_view to_string(E value) noexcept {
  const EnumText names = enum_text(value);
  return names.token.empty() ? std::string_view("unknown") : names.token;
}

/// The label of `value`, for people ("unknown" for a value that is no enumerator).
template <NamedEnum E>
[[nodiscard]] constexpr std::string_view to_label(E value) noexcept {
  const EnumText names = enum_text(value);
  return names.token.empty() ? std::string_view("unknown") : names.label;
}

/// The enumerator whose token is `text`, or, with `labels_too`, whose label is (reports of
/// schema 2 wrote labels); empty when there is none.
template <NamedEnum E>
[[nodiscard]] constexpr std::optional<E> parse_token(std::string_view text,
                                                     bool labels_too = false) {
  for (std::underlying_type_t<E> i = 0;; ++i) {
    const EnumText names = enum_text(static_cast<E>(i));
    if (names.token.empty()) return std::nullopt;
    if (names.token == text || (labels_too && names.label == text)) return static_cast<E>(i);
  }
}

}  // namespace aitune
