#!/usr/bin/env bash
# Fuzzes the parsers of outside input that are ours with libFuzzer (clang from Debian),
# AddressSanitizer and UndefinedBehaviorSanitizer:
#   tools/fuzz.sh [SECONDS]          each torch-free target for SECONDS (default 600):
#       input_text     --input shapes, dtypes and ranges     (core/cli/option_text.hpp)
#       option_text    --tolerance, --precision, lists       (core/cli/option_text.hpp)
#       zip_structure  the zip check in front of LibTorch     (core/detail/text/zip_structure.hpp)
#   tools/fuzz.sh --libtorch [SECONDS]   sample files through our limits into LibTorch's own
#       loader (torch/model/sample_file.hpp). Findings inside LibTorch are LibTorch's: see
#       docs/reliability.md for those known.
# Each starts from its committed corpus, fuzz/corpus/<target>; new inputs go to
# build/fuzz/corpus/<target>. A finding is written to build/fuzz/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(input_text option_text zip_structure)
if [ "${1:-}" = "--libtorch" ]; then
  targets=(sample_file)
  shift
  tools/setup-venv.sh
fi
seconds=${1:-600}
tools/install-deps.sh clang libclang-rt-14-dev
out=build/fuzz
mkdir -p "$out"
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -DFMT_HEADER_ONLY=1 -Iinclude)
export LSAN_OPTIONS="suppressions=$PWD/tools/sanitizers/lsan.supp:print_suppressions=0"
for target in "${targets[@]}"; do
  echo "== fuzz_$target: building"
  extra=()
  if [ "$target" = sample_file ]; then
    torch=$(.venv/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')
    extra=(-D_GLIBCXX_USE_CXX11_ABI=1 -isystem "$torch/include"
           -isystem "$torch/include/torch/csrc/api/include" -L"$torch/lib"
           -Wl,-rpath,"$torch/lib" -ltorch_cpu -lc10)
  fi
  clang++ "${flags[@]}" "fuzz/fuzz_$target.cpp" -o "$out/fuzz_$target" "${extra[@]}"
  mkdir -p "$out/corpus/$target"
  echo "== fuzz_$target: $seconds s"
  started=$(date +%s)
  "$out/fuzz_$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus/$target" "fuzz/corpus/$target" \
    > "$out/fuzz_$target.log" 2>&1 ||
    { tail -n 40 "$out/fuzz_$target.log"; echo "== fuzz_$target: FINDING (see $out/)"; exit 1; }
  grep -E "^Done|stat::number_of_executed_units|stat::peak_rss" "$out/fuzz_$target.log" || true
  echo "== fuzz_$target: ran $(($(date +%s) - started)) s without a finding"
done
