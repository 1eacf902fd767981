// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The CUDA runtime pieces (no LibTorch): checked calls, RAII events, the event timer. Needs
/// the CUDA runtime headers and library (CMake: CUDA::cudart).

#include "aitune/cuda/cuda_check.hpp"
#include "aitune/cuda/cuda_event.hpp"
#include "aitune/cuda/cuda_event_timer.hpp"
