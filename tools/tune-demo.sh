#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: install, build, tune, print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci --target aitune-simulated
build/ci/examples/aitune-simulated
