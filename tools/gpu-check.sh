#!/usr/bin/env bash
# The GPU check, one call on the GPU machine (the device tool; see README "GPU"):
#   here:   tools/gpu-prepare.sh
#   there:  bash tools/gpu-check.sh        (carry .vendor; OUT is where results go)
# Builds the project against PyTorch's LibTorch (CUDA), runs the [gpu] tests, traces ResNet-18,
# ResNet-50, MobileNetV3 and a Transformer encoder with the Python there, compiles an
# AOTInductor package of ResNet-18 if time allows, tunes each model on CUDA with aitune-tune,
# and prints one table last. Designed to finish well inside 8 minutes on 16 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
log() { echo "== [$(elapsed) s] $*"; }
out="${OUT:-build/gpu-out}"
mkdir -p "$out"
if [ ! -f .vendor/include/catch2/catch.hpp ]; then
  echo "no .vendor/: run tools/gpu-prepare.sh on the build machine and carry .vendor" >&2
  exit 2
fi
py="${PYTHON:-python3}"  # the Python that holds PyTorch (plain python3 on the GPU machine)
torch_prefix=$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_include=$($py -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
$py -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0), "torchvision", torchvision.__version__)'
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

# One fmt for every translation unit: PyTorch's own copy if its headers ship one.
include_dir="$PWD/.vendor/include"
if [ -f "$torch_include/fmt/format.h" ]; then
  include_dir="$PWD/build/gpu-include"
  rm -rf "$include_dir" && mkdir -p "$include_dir"
  cp -r .vendor/include/nlohmann .vendor/include/catch2 "$torch_include/fmt" "$include_dir/"
  log "using PyTorch's fmt headers"
fi

log configure
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_prefix" -DAITUNE_PYTHON="$(command -v $py)" \
  -DAITUNE_VENDORED_INCLUDE_DIR="$include_dir" -DAITUNE_VENDORED_CMAKE_DIR="$PWD/.vendor/cmake" \
  -DAITUNE_INSTALL=OFF -DAITUNE_BUILD_BENCHMARKS=OFF > "$out/configure.log" 2>&1 \
  || { tail -40 "$out/configure.log"; exit 1; }
grep -E "aitune: LibTorch" "$out/configure.log"

log build
cmake --build build/gpu -j 16 --target aitune_gpu_tests aitune_torch_tests aitune-tune \
  > "$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }

log "[gpu] tests"
ctest --test-dir build/gpu -L gpu --output-on-failure > "$out/gpu_tests.log" 2>&1
gpu_tests=$?
grep -E "Test +#|tests passed|skipped" "$out/gpu_tests.log"

if [ "$(elapsed)" -lt 200 ]; then
  log "LibTorch-layer tests against PyTorch's LibTorch"
  ctest --test-dir build/gpu -L torch -j 8 > "$out/torch_tests.log" 2>&1
  grep -E "tests passed|\*\*\*Failed" "$out/torch_tests.log"
fi

log "models"
models=(resnet18 resnet50 mobilenet_v3_small transformer_encoder)
$py tools/make_models.py --out build/gpu/models "${models[@]}" | tail -4
if [ "$(elapsed)" -lt 240 ]; then
  log "AOTInductor package of resnet18"
  timeout 120 $py tools/make_aoti.py --out build/gpu/models --device cuda resnet18 \
    > "$out/aoti.log" 2>&1 || echo "no AOTInductor package (see aoti.log)"
fi

for model in "${models[@]}"; do
  extra=()
  [ -f "build/gpu/models/$model.pt2" ] && extra=(--aoti "build/gpu/models/$model.pt2")
  log "tune $model"
  # shellcheck disable=SC2046
  timeout 70 build/gpu/examples/aitune-tune "build/gpu/models/$model.pt" \
    $(sed 's/^/--input /' "build/gpu/models/$model.shape") --device cuda --time-budget 20 \
    --json "$out/$model.json" "${extra[@]}" > "$out/$model.txt" 2> "$out/$model.err"
  status=$?
  echo "$model: exit $status"
  [ "$status" -eq 0 ] || tail -3 "$out/$model.err"
done

log "table"
$py tools/gpu_table.py "$out"/*.json | tee "$out/table.md"
log "done ([gpu] tests exit $gpu_tests)"
exit "$gpu_tests"
