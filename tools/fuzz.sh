#!/usr/bin/env bash
# Fuzzes the parsers of outside input that are ours with libFuzzer (clang from Debian),
# AddressSanitizer and UndefinedBehaviorSanitizer:
#   tools/fuzz.sh [SECONDS [TARGET...]]   each torch-free target (or those named) for SECONDS
#                                         (default 600):
#       input_text     --input shapes, dtypes and ranges     (core/cli/option_text.hpp)
#       option_text    --tolerance, --accuracy, --precision, lists (core/cli/option_text.hpp)
#       zip_structure  the zip check in front of LibTorch     (core/text/zip_structure.hpp)
#       cache_entry    a tuning cache entry's report read back, checked and rendered
#                      (core/report/json.hpp, core/cache/cached_tuning.hpp)
#   tools/fuzz.sh --libtorch [SECONDS [TARGET...]]   the targets that link LibTorch (or those named):
#       sample_file      sample files through our limits into LibTorch's own loader
#                        (torch/model/sample_file.hpp). Findings inside LibTorch are LibTorch's:
#                        see docs/reliability.md for those known.
#       archive_records  a .pt2 archive's extra/aitune.json through its reader and the output
#                        structure it records through ConvertedModel::outputs
#                        (torch/model/pt2_archive.hpp, torch/backends/runtime_variant.hpp)
# Each starts from its committed corpus, fuzz/corpus/<target>, and seeds the script makes for the
# binary formats (sample_file, zip_structure); new inputs go to
# build/fuzz/corpus/<target>. A finding is written to build/fuzz/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(input_text option_text zip_structure cache_entry)
if [ "${1:-}" = "--libtorch" ]; then
  targets=(sample_file archive_records)
  shift
  tools/setup-venv.sh
fi
seconds=${1:-600}
# Names after SECONDS run only those targets: tools/fuzz.sh --libtorch 600 archive_records
if [ $# -gt 1 ]; then
  shift
  targets=("$@")
fi
tools/install-deps.sh clang libclang-rt-14-dev
out=build/fuzz
mkdir -p "$out"
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -DFMT_HEADER_ONLY=1 -Iinclude)
export LSAN_OPTIONS="suppressions=$PWD/tools/sanitizers/lsan.supp:print_suppressions=0"
for target in "${targets[@]}"; do
  echo "== fuzz_$target: building"
  extra=()
  if [ "$target" = sample_file ] || [ "$target" = archive_records ]; then
    torch=$(.venv/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')
    extra=(-D_GLIBCXX_USE_CXX11_ABI=1 -isystem "$torch/include"
           -isystem "$torch/include/torch/csrc/api/include" -L"$torch/lib"
           -Wl,-rpath,"$torch/lib" -ltorch_cpu -lc10)
  fi
  clang++ "${flags[@]}" "fuzz/fuzz_$target.cpp" -o "$out/fuzz_$target" "${extra[@]}"
  mkdir -p "$out/corpus/$target"
  # Seeds for the binary formats, made here rather than committed: a few valid files to start from.
  case $target in
    sample_file) .venv/bin/python - "$out/corpus/$target" <<'PY'
import sys, torch
folder = sys.argv[1]
seeds = {"tensor": torch.zeros(1, 3), "tuple": (torch.ones(2), torch.arange(3)),
         "dict": {"a": torch.zeros(1, 2, dtype=torch.int64)}, "list": [torch.ones(1, 1)]}
for name, value in seeds.items():
    torch.save(value, f"{folder}/seed_{name}.pt")
PY
      ;;
    zip_structure) python3 - "$out/corpus/$target" <<'PY'
import sys, zipfile
with zipfile.ZipFile(f"{sys.argv[1]}/seed.zip", "w", zipfile.ZIP_STORED) as archive:
    archive.writestr("seed/archive_format", b"pt2")
    archive.writestr("seed/data/x", bytes(64))
PY
      ;;
  esac
  corpora=("$out/corpus/$target")
  if [ -d "fuzz/corpus/$target" ]; then corpora+=("fuzz/corpus/$target"); fi
  echo "== fuzz_$target: $seconds s"
  started=$(date +%s)
  "$out/fuzz_$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$out/" -print_final_stats=1 "${corpora[@]}" \
    > "$out/fuzz_$target.log" 2>&1 ||
    { tail -n 40 "$out/fuzz_$target.log"; echo "== fuzz_$target: FINDING (see $out/)"; exit 1; }
  grep -E "^Done|stat::number_of_executed_units|stat::peak_rss" "$out/fuzz_$target.log" || true
  echo "== fuzz_$target: ran $(($(date +%s) - started)) s without a finding"
done
