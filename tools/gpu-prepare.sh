#!/usr/bin/env bash
# Run here, before tools/gpu-check.sh runs on the GPU machine: that machine has no Debian
# packages and no internet, so the header-only dependencies travel with the call from .vendor/
# (git-ignored): fmt (used header-only there), nlohmann_json, CLI11, Catch2 v2 and Catch2's CMake
# scripts, copied from this machine's Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
rm -rf .vendor
mkdir -p .vendor/include .vendor/cmake
cp -r /usr/include/fmt /usr/include/nlohmann /usr/include/catch2 /usr/include/CLI .vendor/include/
cp /usr/lib/cmake/Catch2/Catch.cmake /usr/lib/cmake/Catch2/CatchAddTests.cmake .vendor/cmake/
echo "vendored into .vendor ($(du -sh .vendor | cut -f1)); carry it: carry [\".vendor\"]"
