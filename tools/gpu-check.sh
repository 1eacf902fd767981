#!/usr/bin/env bash
# The GPU check, one call on the GPU machine (the device tool; see docs/gpu.md):
#   here:   tools/gpu-prepare.sh
#   there:  bash tools/gpu-check.sh        (carry .vendor; OUT is where results go)
# Builds the project against the Python's LibTorch (CUDA) - or, with AITUNE_PREBUILT=DIR, uses
# binaries built here against the same wheel - runs the [gpu] tests with AITUNE_REQUIRE_GPU=1 (a
# skip fails), makes ResNet-18, ResNet-50, MobileNetV3-Small and a Transformer encoder as
# TorchScript files and as torch.export archives with the default AOTInductor CUDA variant,
# tunes each on CUDA with aitune-tune, and prints one table last. Every step checks one overall
# deadline (AITUNE_DEADLINE_S, default 540 s) so the call ends inside the device's 10 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
deadline="${AITUNE_DEADLINE_S:-540}"
elapsed() { echo $(( $(date +%s) - start )); }
left() { echo $(( deadline - $(elapsed) )); }
log() { echo "== [$(elapsed) s] $*"; }
out="${OUT:-build/gpu-out}"
mkdir -p "$out"
if [ ! -f .vendor/include/catch2/catch.hpp ]; then
  echo "no .vendor/: run tools/gpu-prepare.sh on the build machine and carry .vendor" >&2
  exit 2
fi
py="${PYTHON:-python3}"  # the Python that holds PyTorch (plain python3 on the GPU machine)
torch_prefix=$($py -c 'import torch; print(torch.utils.cmake_prefix_path)') || exit 2
torch_dir=$($py -c 'import os, torch; print(os.path.dirname(torch.__file__))')
$py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
if ! $py -c 'import torchvision' 2>/dev/null; then
  echo "no torchvision in $py: only the Transformer encoder (plain torch) is made"
  models=(transformer_encoder)
else
  models=(resnet18 resnet50 mobilenet_v3_small transformer_encoder)
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

build=build/gpu
if [ -n "${AITUNE_PREBUILT:-}" ] && [ -x "$AITUNE_PREBUILT/examples/aitune-tune" ]; then
  build="$AITUNE_PREBUILT"
  export LD_LIBRARY_PATH="$torch_dir/lib:${LD_LIBRARY_PATH:-}"
  log "using the binaries in $build"
else
  # One fmt for every translation unit: PyTorch's own copy if its headers ship one.
  include_dir="$PWD/.vendor/include"
  if [ -f "$torch_dir/include/fmt/format.h" ]; then
    include_dir="$PWD/build/gpu-include"
    rm -rf "$include_dir" && mkdir -p "$include_dir"
    cp -r .vendor/include/nlohmann .vendor/include/catch2 .vendor/include/CLI "$torch_dir/include/fmt" \
      "$include_dir/"
  fi
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  log configure
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$torch_prefix" -DAITUNE_PYTHON="$(command -v "$py")" \
    -DAITUNE_VENDORED_INCLUDE_DIR="$include_dir" -DAITUNE_VENDORED_CMAKE_DIR="$PWD/.vendor/cmake" \
    -DAITUNE_INSTALL=OFF -DAITUNE_BUILD_BENCHMARKS=ON -DAITUNE_SVG_CHECK=OFF > "$out/configure.log" 2>&1 \
    || { tail -40 "$out/configure.log"; exit 1; }
  grep -E "aitune: LibTorch" "$out/configure.log"
  grep -q "CUDA: ON" "$out/configure.log" || { echo "LibTorch without CUDA: no GPU check" >&2; exit 1; }
  log build
  cmake --build "$build" -j "$(nproc)" --target aitune_gpu_tests aitune_torch_tests aitune-tune \
    aitune-bench-gpu-cuda-graph \
    > "$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
fi

log "[gpu] tests (AITUNE_REQUIRE_GPU=1: a skip is a failure)"
AITUNE_REQUIRE_GPU=1 timeout "$(( $(left) > 60 ? $(left) - 60 : 1 ))" \
  "$build/tests/aitune_gpu_tests" "[gpu]" -r compact > "$out/gpu_tests.log" 2>&1
gpu_tests=$?
tail -3 "$out/gpu_tests.log"

# The speed claim the [gpu] tests do not make: how much a CUDA graph gains (a table and JSON).
t=$(( $(left) > 420 ? 120 : 0 ))
if [ "$t" -gt 0 ]; then
  log "benchmark: CUDA graph speedup"
  mkdir -p "$out/bench"
  timeout "$t" "$build/bench/aitune-bench-gpu-cuda-graph" 3 "$out/bench/gpu_cuda_graph.json" \
    | tee "$out/bench/gpu_cuda_graph.txt" | tail -2
else
  echo "deadline: CUDA graph benchmark not run"
fi

log "models"
mkdir -p "$build/models"
for model in "${models[@]}"; do
  [ "$(left)" -gt 300 ] || { echo "deadline: $model not made"; continue; }
  timeout "$(( $(left) - 240 ))" $py tools/make_models.py --out "$build/models" "$model" | tail -1
  t=$(( $(left) - 240 ))  # timeout 0 would mean no limit at all
  [ "$t" -gt 0 ] || { echo "deadline: no AOTInductor CUDA archive of $model"; continue; }
  timeout "$t" $py tools/make_models.py --out "$build/models" --format pt2 \
    --device cuda --variants default "$model" > "$out/$model.export.log" 2>&1 \
    || echo "$model: no AOTInductor CUDA archive (see $model.export.log)"
done

for model in "${models[@]}"; do
  for kind in pt pt2; do
    file="$build/models/$model.$kind"
    [ -f "$file" ] || continue
    budget=$(( ($(left) - 20) / 4 ))
    [ "$budget" -ge 8 ] || { echo "deadline: $model.$kind not tuned"; continue; }
    [ "$budget" -le 15 ] || budget=15
    log "tune $model.$kind ($budget s)"
    # shellcheck disable=SC2046
    timeout $(( budget + 60 )) "$build/examples/aitune-tune" "$file" \
      $(sed 's/^/--input /' "$build/models/$model.shape") --device cuda --time-budget "$budget" \
      --json "$out/$model.$kind.json" > "$out/$model.$kind.txt" 2> "$out/$model.$kind.err"
    status=$?
    echo "$model.$kind: exit $status"
    [ "$status" -eq 0 ] || tail -3 "$out/$model.$kind.err"
  done
done

log "table"
$py tools/gpu_table.py "$out"/*.json | tee "$out/table.md"
log "done ([gpu] tests exit $gpu_tests)"
exit "$gpu_tests"
