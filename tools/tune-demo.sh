#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: install what is missing (Debian packages; PyTorch
# 2.x from PyPI into a project-local venv), build aitune-tune, export a real model (torchvision's
# MobileNetV3-Small, seeded random weights) with torch.export into one .pt2 archive holding the
# ExportedProgram, two AOTInductor compilations (default, freezing: about two minutes on 2 cores)
# and its ONNX and OpenVINO conversions (tools/export_model.py's default variants), and tune it
# on the CPU: the native runtime is the baseline, the other models the candidates. Prints
# progress, the report and the selected backend, and writes the report as JSON, markdown and an
# SVG chart into build/PRESET/MODEL.report/
# Usage: tools/tune-demo.sh [MODEL] [--torch VERSION]
#   MODEL    one of tools/make_models.py's names (default mobilenet_v3_small)
#   VERSION  the PyTorch to use: 2.11 (default; .venv/, preset ci) or 2.15 (.venv-2.15/, preset
#            ci-2.15); AITUNE_TORCH=2.15 does the same. Models go to models/<torch version>/,
#            since AOTInductor archives compiled by one version are refused by another's loader.
set -euo pipefail
cd "$(dirname "$0")/.."
model=mobilenet_v3_small
version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --torch) [ $# -ge 2 ] || { echo "tools/tune-demo.sh: --torch needs a version" >&2; exit 2; }
             version="$2"; shift 2 ;;
    --torch=*) version="${1#--torch=}"; shift ;;
    -*) echo "usage: tools/tune-demo.sh [MODEL] [--torch VERSION]" >&2; exit 2 ;;
    *) model="$1"; shift ;;
  esac
done
. tools/torch-versions.sh
aitune_torch_version "$version" || exit 2
tools/install-deps.sh
tools/setup-venv.sh "$torch_version"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target aitune-tune
models="$(aitune_models_dir "$venv")"
"$venv/bin/python" tools/make_models.py --out "$models" --format pt2 "$model"
"build/$preset/examples/aitune-tune" "$models/$model.pt2" $(sed 's/^/--input /' "$models/$model.shape") \
  --time-budget 30 --json "build/$preset/$model.report.json" --report-dir "build/$preset/$model.report"
