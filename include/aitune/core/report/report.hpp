// Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// The tuning report whole: its data (report/tune_report.hpp), the table for people
/// (report/table.hpp) and the JSON for programs (report/json.hpp). The markdown and the SVG
/// chart are opt-in: report/markdown.hpp, report/svg.hpp.

#include "aitune/core/report/json.hpp"
#include "aitune/core/report/table.hpp"
#include "aitune/core/report/tune_report.hpp"
