#!/usr/bin/env bash
# Installs one tested PyTorch (a full LibTorch with CUDA, which runs on the CPU where there is no
# GPU), torchvision, transformers and timm (real architectures for the tests and benchmarks), and
# the peer runtimes ONNX Runtime and OpenVINO with the ONNX exporter's packages into a
# project-local virtual environment (git-ignored) with the project's own Python package (tools/,
# editable, with ruff and pytest), and fetches ONNX Runtime's C API headers
# (tools/fetch-onnxruntime-headers.sh), at the versions pinned in that version's
# requirements file. Nothing is installed system-wide. Does nothing when the venv already holds
# those versions. pip keeps no cache: two venvs of wheels with CUDA are over 10 GB already, and a
# cached copy of each would double what a CI machine's disk must hold.
#   tools/setup-venv.sh            PyTorch 2.11 (the GPU machine's): tools/requirements-torch.txt
#                                  into .venv/
#   tools/setup-venv.sh 2.15       PyTorch 2.15 (PyPI's newest): tools/requirements-torch-2.15.txt
#                                  into .venv-2.15/
#   tools/setup-venv.sh --prepare  only what every venv's set-up shares (the headers, Debian's
#                                  python3-venv where python3 lacks venv): run it first, and two
#                                  set-ups can then run side by side (tools/run-tests.sh does)
#   tools/setup-venv.sh --quantize .venv/ as above, and the quantisers of the export tool's int8
#                                  variants (tools/requirements-quantize.txt: NNCF, torchao, pinned
#                                  for PyTorch 2.11); the export tool never installs them itself
# AITUNE_TORCH=2.15 picks the version when no argument does (tools/torch-versions.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python that makes the venv: python3, or Debian's with its python3-venv installed.
base_python() {
  local python="${AITUNE_BASE_PYTHON:-$(command -v python3 || true)}"
  if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    tools/install-deps.sh python3-venv >&2
    python=/usr/bin/python3
  fi
  echo "$python"
}
# ONNX Runtime's C API headers (the wheel ships none): for the OnnxRuntime backend.
tools/fetch-onnxruntime-headers.sh
if [ "${1:-}" = --prepare ]; then
  base_python >/dev/null
  exit 0
fi
if [ "${1:-}" = --quantize ]; then
  tools/setup-venv.sh  # .venv/ first (remade, quantisers gone, when its requirements change)
  quantisers=tools/requirements-quantize.txt
  if ! cmp -s "$quantisers" .venv/.aitune-quantize; then
    echo "aitune: installing $(grep -v '^#' "$quantisers" | xargs) into .venv"
    .venv/bin/python -m pip install --quiet --no-cache-dir -r "$quantisers"
    cp "$quantisers" .venv/.aitune-quantize
  fi
  exit 0
fi
. tools/torch-versions.sh
aitune_torch_version "${1:-}" || exit 2
stamp=$venv/.aitune-requirements
# The project's own Python (tools/pyproject.toml: the export tool, the benchmark harness, the
# judge), editable, so that its modules and the tests' scripts import it from anywhere, with ruff
# and pytest. Under flock: two venvs set up side by side both write tools/'s egg-info.
install_tools() {
  if ! cmp -s tools/pyproject.toml "$venv/.aitune-tools"; then
    echo "aitune: installing tools/ (aitune-tools, editable, with ruff and pytest) into $venv"
    local log
    log=$(mktemp)
    # setuptools warns that an editable install is one, at length: shown only when pip fails.
    if ! flock tools/pyproject.toml "$venv/bin/python" -m pip install --quiet --no-cache-dir \
      -e 'tools[dev]' >"$log" 2>&1; then
      cat "$log" >&2
      rm -f "$log"
      return 1
    fi
    rm -f "$log"
    cp tools/pyproject.toml "$venv/.aitune-tools"
  fi
}
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$requirements" "$stamp"; then
  install_tools
  exit 0
fi
python=$(base_python)
echo "aitune: installing $(grep -v '^#' "$requirements" | xargs) into $venv (with $python)"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --no-cache-dir --upgrade pip
"$venv/bin/python" -m pip install --quiet --no-cache-dir -r "$requirements"
cp "$requirements" "$stamp"
install_tools
"$venv/bin/python" -c 'import torch, torchvision, transformers, timm; print("aitune: '"$venv"' has torch", torch.__version__, "torchvision", torchvision.__version__, "transformers", transformers.__version__, "timm", timm.__version__)'
