#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: install, configure, build, ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
