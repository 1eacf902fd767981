// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// BackendIdentity: what a backend's key says, as named fields ("family", "variant",
/// "precision", "threads", ...), so that a reader of a report (a benchmark rebuilding the
/// selection, a server serving one family) never parses a key by position.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>

namespace aitune {

/// One field of an identity: text ("onnx", "fp32") or a count (threads, streams).
using IdentityValue = std::variant<std::string, std::int64_t>;

/// A backend's identity by field name. Empty for a backend that says nothing of itself
/// (aitune::identity_of). A family's backends name at least "family".
using BackendIdentity = std::map<std::string, IdentityValue, std::less<>>;

/// The text field `name` of `identity`; empty where it is absent or a count.
[[nodiscard]] inline std::string identity_text(const BackendIdentity& identity,
                                               std::string_view name) {
  const auto found = identity.find(name);
  if (found == identity.end()) return {};
  const auto* text = std::get_if<std::string>(&found->second);
  return text ? *text : std::string();
}

}  // namespace aitune
