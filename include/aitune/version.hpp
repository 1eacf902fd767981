// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

#define AITUNE_VERSION_MAJOR 0
#define AITUNE_VERSION_MINOR 1
#define AITUNE_VERSION_PATCH 0

namespace aitune {
inline constexpr const char* version = "0.1.0";
}  // namespace aitune
