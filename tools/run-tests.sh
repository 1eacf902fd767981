#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what is missing (Debian packages;
# PyTorch 2.x from PyPI into .venv), then configures, builds and runs ctest on both platforms:
# the primary one (preset ci: PyTorch 2.x from .venv) and the oldest supported one (preset
# ci-libtorch1.13: Debian's LibTorch 1.13), then the CPU suite again under AddressSanitizer and
# UndefinedBehaviorSanitizer (tools/sanitize.sh address). AITUNE_PRESETS="ci" runs only the
# first preset; AITUNE_SANITIZE=0 skips the sanitizer run.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/setup-venv.sh
for preset in ${AITUNE_PRESETS:-ci ci-libtorch1.13}; do
  echo "== preset $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset"
done
if [ "${AITUNE_SANITIZE:-1}" != 0 ]; then
  tools/sanitize.sh address
fi
