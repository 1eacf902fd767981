#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: install what is missing (Debian packages; PyTorch
# 2.x from PyPI into .venv), build aitune-tune, export a real model (torchvision's
# MobileNetV3-Small, seeded random weights) with torch.export into one .pt2 archive holding the
# ExportedProgram and two AOTInductor compilations (default, freezing: about two minutes on 2
# cores), and tune it on the CPU: the native runtime is the baseline, the AOTInductor models the
# candidates. Prints progress, the report and the selected backend, and writes the report as
# JSON, markdown and an SVG chart into build/ci/MODEL.report/
# Usage: tools/tune-demo.sh [MODEL] where MODEL is one of tools/make_models.py's names.
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-mobilenet_v3_small}"
tools/install-deps.sh
tools/setup-venv.sh
cmake --preset ci >/dev/null
cmake --build --preset ci --target aitune-tune
.venv/bin/python tools/make_models.py --out models --format pt2 --variants default,freezing "$model"
build/ci/examples/aitune-tune "models/$model.pt2" $(sed 's/^/--input /' "models/$model.shape") \
  --time-budget 30 --json "build/ci/$model.report.json" --report-dir "build/ci/$model.report"
