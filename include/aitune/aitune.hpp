// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The public face of the torch-free core: what a program that tunes its own backends needs.
/// Includes no LibTorch and no CUDA header; a ctest proves it. For the LibTorch backends
/// include <aitune/torch.hpp>.
///
/// - a backend: aitune::Backend, aitune::BackendLifecycle (core/backend.hpp), and the
///   customisation points a family specialises (core/customization.hpp);
/// - the tuning: aitune::MinLatencyStrategy, its StrategyConfig (decision, measurement,
///   sink, progress) and its TuneResult (core/strategy/);
/// - the report: aitune::TuneReport, render_table, to_json and report_from_json
///   (core/report/report.hpp), and write_json_file to write it (core/io/atomic_file.hpp).
///
/// Opt-in, each with its own header: the tuning cache (core/cache/cached_tuning.hpp), the
/// report as markdown and as an SVG chart (core/report/markdown.hpp, core/report/svg.hpp).
/// <aitune/all.hpp> includes every core header. The engine behind the strategy (the race,
/// the statistics, the decision's rules) is in core/measure/, core/stats/ and
/// core/decision/, its internals in namespace aitune::detail.

#include "aitune/core/backend.hpp"
#include "aitune/core/customization.hpp"
#include "aitune/core/error.hpp"
#include "aitune/core/io/atomic_file.hpp"
#include "aitune/core/report/report.hpp"
#include "aitune/core/strategy/min_latency_strategy.hpp"
#include "aitune/core/strategy/strategy_config.hpp"
#include "aitune/version.hpp"
