#!/usr/bin/env bash
# Runs a benchmark program on demand; each prints a table and writes JSON to build/ci/bench/.
#   tools/bench.sh models     tune the five CPU models (traced first) with the default candidates
#   tools/bench.sh overhead   TunedModule::forward vs calling the selected backend directly
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-}"
case "$which" in
  models) target=aitune-bench-models ;;
  overhead) target=aitune-bench-overhead ;;
  *) echo "usage: tools/bench.sh models|overhead" >&2; exit 2 ;;
esac
tools/install-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci --target "$target"
mkdir -p build/ci/bench
case "$which" in
  models)
    /usr/bin/python3 tools/make_models.py --out models resnet18 mobilenet_v3_small squeezenet1_1 \
      efficientnet_b0 transformer_encoder
    build/ci/bench/aitune-bench-models --models-dir models --json build/ci/bench/models.json ;;
  overhead)
    build/ci/bench/aitune-bench-overhead build/ci/bench/overhead.json ;;
esac
