// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

// Include this instead of <catch2/catch.hpp> in tests that use LibTorch. LibTorch pulls in
// glog, whose CHECK(condition) aborts and is invisible to Catch; whichever header comes last
// owns the name. Here LibTorch comes first and Catch's CHECK replaces glog's.

#include <aitune/torch.hpp>

#ifdef CHECK
#undef CHECK
#endif
#include <catch2/catch.hpp>
