#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what is missing (Debian packages;
# the tested PyTorch versions from PyPI into .venv/ and .venv-2.15/), runs ruff and pytest on the
# project's Python (tools/), then configures, builds and runs ctest on each platform:
#   ci               PyTorch 2.11 (the GPU machine's, the primary platform): every test
#   ci-2.15          PyTorch 2.15 (PyPI's newest): every test that depends on the LibTorch, less
#                    the scenarios (label scenario)
# then the CPU suite again on 2.11 under AddressSanitizer and UndefinedBehaviorSanitizer
# (tools/sanitize.sh address). Prints what each step took. AITUNE_PRESETS="ci" runs only the
# presets named; AITUNE_SANITIZE=0 skips the sanitizer run. On demand (before a release, and
# after a change to the LibTorch layer), AITUNE_PRESETS="ci-libtorch1.13" adds Debian's LibTorch
# 1.13 (the oldest supported; the same tests as ci-2.15), installing it first.
# docs/platforms.md says why CI runs what it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
presets="${AITUNE_PRESETS:-ci ci-2.15}"
times=()
step() {  # step NAME COMMAND...: runs it and keeps how long it took
  local start=$SECONDS
  "${@:2}"
  times+=("$(printf '%-22s %5d s' "$1" $((SECONDS - start)))")
}
runs() { [[ " $presets " == *" $1 "* ]]; }  # runs PRESET: whether this run has that preset
libtorch113=()
if runs ci-libtorch1.13; then
  libtorch113=(libtorch-dev python3-torch python3-torchvision)
fi
step "Debian packages" tools/install-deps.sh "${libtorch113[@]}"
# The venvs at once: pip installs on one core, so two take about the time of one. What their
# set-ups share (ONNX Runtime's headers, Debian's python3-venv: apt-get takes one run at a time)
# comes first, once.
setup_venvs() {  # setup_venvs VERSION...: tools/setup-venv.sh for each, side by side
  tools/setup-venv.sh --prepare
  local pids=() version failed=0
  for version in "$@"; do
    tools/setup-venv.sh "$version" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
  done
  return $failed
}
venvs=(2.11)  # the primary presets' and the sanitizer run's
runs ci-2.15 && venvs+=(2.15)
# Each venv takes about 5.5 GB and each build about 1.7 GB: say so before pip runs out of room
# half-way through a wheel, which reads only "No space left on device".
need_gb=6
for version in "${venvs[@]}"; do
  (. tools/torch-versions.sh && aitune_torch_version "$version" && [ -x "$venv/bin/python" ]) ||
    need_gb=$((need_gb + 6))
done
free_gb=$(df --output=avail -BG . | tail -1 | tr -dc 0-9)
if [ "$free_gb" -lt "$need_gb" ]; then
  echo "aitune: warning: $free_gb GB free on $(df --output=target . | tail -1); this run needs" \
    "about $need_gb GB more (the venvs it has to install, and the builds)" >&2
fi
step "venvs ${venvs[*]}" setup_venvs "${venvs[@]}"
# The project's Python (tools/pyproject.toml): lint, then its unit tests. A few seconds.
python_checks() {
  .venv/bin/ruff check tools
  .venv/bin/python -m pytest tools
}
step "python (ruff, pytest)" python_checks
for preset in $presets; do
  echo "== preset $preset"
  step "$preset configure" cmake --preset "$preset" >/dev/null
  step "$preset build" cmake --build --preset "$preset"
  # ONNX Runtime and OpenVINO come with both wheels' venvs: a test of theirs that cannot run
  # fails there rather than skipping (the 1.13 preset builds without them).
  require_runtimes=1
  [ "$preset" = ci-libtorch1.13 ] && require_runtimes=0
  step "$preset ctest" env AITUNE_REQUIRE_RUNTIMES=$require_runtimes AITUNE_REQUIRE_REDIS=1 \
    ctest --preset "$preset"
done
if [ "${AITUNE_SANITIZE:-1}" != 0 ]; then
  step "sanitize (address)" tools/sanitize.sh address
fi
echo "== what each step took (total $SECONDS s)"
printf '  %s\n' "${times[@]}"
