#!/usr/bin/env bash
# Installs the Debian 12 packages aitune-cpp needs to build, test and tune real models, plus
# any named on the command line. Runs apt-get only when something is missing; needs root (uses
# sudo when not root). PyTorch 2.x, the primary platform, comes from PyPI: tools/setup-venv.sh.
# Debian's LibTorch 1.13 (the oldest supported, preset ci-libtorch1.13, run on demand) is
# `tools/install-deps.sh libtorch-dev python3-torch python3-torchvision`: tools/run-tests.sh asks
# for it when that preset runs.
set -euo pipefail

packages=(
  g++ cmake ninja-build git clang-format  # toolchain
  libfmt-dev nlohmann-json3-dev catch2     # core dependencies and tests
  libcli11-dev                             # the command-line parser of aitune-tune
  libhiredis-dev                           # the Redis tuning cache (aitune::redis)
  redis-server                             # its tests start their own server
  librsvg2-bin                             # rsvg-convert: the tests render the SVG report
  doxygen                                  # the API reference (target docs), checked by a test
  "$@"
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "aitune: installing Debian packages: ${missing[*]}"
run_as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then
    run_as_root=(sudo)
  else
    echo "aitune: these packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 1
  fi
fi
"${run_as_root[@]}" apt-get update
"${run_as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
