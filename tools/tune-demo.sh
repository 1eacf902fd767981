#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: install what is missing, build aitune-tune,
# trace a real model (torchvision's MobileNetV3-Small, random weights) and tune it on the CPU,
# printing progress, the report and the selected backend. Usage: tools/tune-demo.sh [MODEL]
# where MODEL is one of tools/make_models.py's names (default mobilenet_v3_small).
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-mobilenet_v3_small}"
tools/install-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci --target aitune-tune
/usr/bin/python3 tools/make_models.py --out models "$model"
build/ci/examples/aitune-tune "models/$model.pt" $(sed 's/^/--input /' "models/$model.shape") \
  --json "build/ci/$model.report.json"
