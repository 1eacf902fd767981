#!/usr/bin/env bash
# Installs the primary platform's PyTorch (a full LibTorch with CUDA, which runs on the CPU
# where there is no GPU), torchvision, and transformers and timm (real architectures for the tests
# and benchmarks) into the project-local virtual environment .venv/ (git-ignored), at the
# versions pinned in tools/requirements-torch.txt. Nothing is installed
# system-wide. Does nothing when .venv already holds those versions. pip reuses its cache.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=tools/requirements-torch.txt
stamp=.venv/.aitune-requirements
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
python="${AITUNE_BASE_PYTHON:-$(command -v python3 || true)}"
if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  tools/install-deps.sh python3-venv
  python=/usr/bin/python3
fi
echo "aitune: installing $(grep -v '^#' "$requirements" | xargs) into .venv (with $python)"
rm -rf .venv
"$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r "$requirements"
cp "$requirements" "$stamp"
.venv/bin/python -c 'import torch, torchvision, transformers, timm; print("aitune: .venv has torch", torch.__version__, "torchvision", torchvision.__version__, "transformers", transformers.__version__, "timm", timm.__version__)'
