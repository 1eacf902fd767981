// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The torch-free core of aitune-cpp. Includes no LibTorch and no CUDA header; a ctest proves
/// it. For the LibTorch backends include <aitune/torch.hpp>.

#include "aitune/core/backend.hpp"
#include "aitune/core/cached_tuning.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/decision_config.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/format.hpp"
#include "aitune/core/json_file.hpp"
#include "aitune/core/latency_decider.hpp"
#include "aitune/core/latency_decision.hpp"
#include "aitune/core/latency_race.hpp"
#include "aitune/core/latency_stats.hpp"
#include "aitune/core/measure_backends.hpp"
#include "aitune/core/measurement.hpp"
#include "aitune/core/median_interval.hpp"
#include "aitune/core/memory_use.hpp"
#include "aitune/core/message_sink.hpp"
#include "aitune/core/min_latency_strategy.hpp"
#include "aitune/core/paired_rounds.hpp"
#include "aitune/core/profiling_config.hpp"
#include "aitune/core/profiling_loop.hpp"
#include "aitune/core/progress.hpp"
#include "aitune/core/race_config.hpp"
#include "aitune/core/report.hpp"
#include "aitune/core/report_markdown.hpp"
#include "aitune/core/report_svg.hpp"
#include "aitune/core/results.hpp"
#include "aitune/core/sha256.hpp"
#include "aitune/core/stop_rules.hpp"
#include "aitune/core/strategy_config.hpp"
#include "aitune/core/timer.hpp"
#include "aitune/core/tuning_cache.hpp"
#include "aitune/version.hpp"
