// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// Every header of the torch-free core: the public face (aitune.hpp), the opt-in tuning cache
/// and report renderers, and the engine. Still no LibTorch and no CUDA header.

#include "aitune/aitune.hpp"
#include "aitune/core/cache/cached_tuning.hpp"
#include "aitune/core/cache/settings_key.hpp"
#include "aitune/core/cache/sha256.hpp"
#include "aitune/core/cache/tuning_cache.hpp"
#include "aitune/core/decision/decider.hpp"
#include "aitune/core/decision/decision_config.hpp"
#include "aitune/core/decision/rules.hpp"
#include "aitune/core/measure/measure.hpp"
#include "aitune/core/measure/measurement.hpp"
#include "aitune/core/measure/memory_use.hpp"
#include "aitune/core/measure/profiling_config.hpp"
#include "aitune/core/measure/race.hpp"
#include "aitune/core/measure/race_config.hpp"
#include "aitune/core/measure/sequential_schedule.hpp"
#include "aitune/core/measure/stop_rules.hpp"
#include "aitune/core/measure/timer.hpp"
#include "aitune/core/report/format.hpp"
#include "aitune/core/report/markdown.hpp"
#include "aitune/core/report/svg.hpp"
#include "aitune/core/stats/latency_stats.hpp"
#include "aitune/core/stats/median_interval.hpp"
#include "aitune/core/stats/paired_rounds.hpp"
#include "aitune/core/stats/trimmed_mean_interval.hpp"
#include "aitune/core/strategy/progress.hpp"
#include "aitune/core/strategy/results.hpp"
#include "aitune/core/text/base64.hpp"
#include "aitune/core/text/json_file.hpp"
#include "aitune/core/text/message_sink.hpp"
#include "aitune/core/text/option_text.hpp"
#include "aitune/core/text/zip_structure.hpp"
