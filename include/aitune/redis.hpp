// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning cache in Redis: link aitune::redis (it needs hiredis). Not part of aitune.hpp.

#include "aitune/redis/redis_store.hpp"  // IWYU pragma: export
