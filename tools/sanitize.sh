#!/usr/bin/env bash
# The sanitizer runs, on the primary LibTorch (PyTorch 2.x from .venv):
#   tools/sanitize.sh address   AddressSanitizer + UndefinedBehaviorSanitizer (preset sanitize)
#                               over the whole CPU suite: core, torch and command tests
#   tools/sanitize.sh thread    ThreadSanitizer (preset tsan) over the concurrency tests: 8 threads
#                               on one TunedModule, two tunings at once, JSON writers at once, a
#                               background tuning switching while threads serve, two calls inside
#                               a .pt2 model at once, and ONNX Runtime and OpenVINO sessions (their
#                               request pool and copies) serving four threads
#   tools/sanitize.sh all       both
# LibTorch itself is not instrumented. Reports proven to come from inside it are suppressed, one
# comment each, in tools/sanitizers/*.supp; any other report fails the run. Run by
# tools/run-tests.sh (address) and before a release (all); see docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD/tools/sanitizers
tools/install-deps.sh
tools/setup-venv.sh

# Compile-only checks (concepts, docs) gain nothing from the sanitizers, and the scenarios (label
# scenario: real tunings repeated, the servers) check code whose parts the core and torch tests
# check here: they run in the primary preset only. Debug info is -g1 (lines, no variables): a
# report still names each frame's file and line, and the build takes a fifth less time.
# The address preset builds without ONNX Runtime and OpenVINO (AITUNE_FIND_RUNTIMES=OFF), and
# leaves out their tests (label runtimes): both are uninstrumented binaries, so it would check
# only our side of the boundary (tensors handed over by pointer and byte count, outputs copied
# out), and CI's time is better spent elsewhere (docs/runtimes.md). The thread preset has them:
# the pool of requests and copies that lets calls run at once is ours.
# The command's runs that tune a model to its report (label tunes) are left out too: the library
# calls under them are the torch tests', and CI's 50 minutes no longer hold them
# (docs/platforms.md). Its error paths, signals and unwritable streams stay.
run_address() {
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer (preset sanitize)"
  cmake --preset sanitize >/dev/null
  cmake --build --preset sanitize --target aitune_core_tests aitune_torch_tests aitune-tune \
    aitune_redis_tests aitune-judge
  AITUNE_REQUIRE_REDIS=1 ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_init_order=1" \
  LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$here/ubsan.supp" \
    ctest --preset sanitize -L "core|torch|cli|redis" -LE "gpu|runtimes|scenario|tunes" \
      -E "^gpu-check|^concepts:|^docs:"
}

run_thread() {
  echo "== ThreadSanitizer (preset tsan), LibTorch's intra-op pool at one thread"
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan --target aitune_core_tests aitune_torch_tests aitune_runtime_tests
  # The concurrency tests need one model of the fixtures: the one whose calls meet (a .pt2,
  # exported once per torch version into the folder every preset shares).
  ctest --test-dir build/tsan -R "^models: export models of real-world shapes"
  export OMP_NUM_THREADS=1
  export TSAN_OPTIONS="suppressions=$here/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
  build/tsan/tests/aitune_core_tests "[concurrency]"
  build/tsan/tests/aitune_torch_tests "[concurrency]"
  # Less the timed test ([serial]): under ThreadSanitizer its timings say nothing.
  AITUNE_REQUIRE_RUNTIMES=1 build/tsan/tests/aitune_runtime_tests "[concurrency]~[serial]"
}

case "${1:-address}" in
  address) run_address ;;
  thread) run_thread ;;
  all) run_address && run_thread ;;
  *) echo "usage: tools/sanitize.sh [address|thread|all]" >&2; exit 2 ;;
esac
