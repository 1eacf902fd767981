#!/usr/bin/env bash
# What a `.pt2` tuning puts on standard output: its report and nothing else.
#   check_pt2_stdout.sh AITUNE_TUNE MODEL.pt2 PYTHON DIR -- TUNE_ARGS...
# - `--json -`, with and without --quiet: standard output parses as JSON (LibTorch 2.9-2.11's
#   native runtime printed the program's graph signature, `inputsToParameters: {` and a line per
#   parameter, to std::cout at every build once aitune-tune had raised c10's log threshold);
# - without --json: the table, with no line of that print.
set -u
tune=$1 model=$2 python=$3 dir=$4
shift 4
[ "${1:-}" = "--" ] && shift
rm -rf "$dir" && mkdir -p "$dir"
fail=0
failed() { echo "FAIL: $*"; fail=1; }
for quiet in "" --quiet; do
  out="$dir/json${quiet}.out"
  "$tune" "$model" "$@" --json - $quiet >"$out" 2>"$dir/json${quiet}.err" ||
    failed "--json - $quiet: exit $?: $(tail -3 "$dir/json${quiet}.err")"
  "$python" -c 'import json,sys; json.load(open(sys.argv[1]))' "$out" ||
    failed "--json - $quiet: standard output is not JSON alone; it starts: $(head -c 200 "$out")"
done
"$tune" "$model" "$@" --quiet >"$dir/table.out" 2>"$dir/table.err" ||
  failed "table: exit $?: $(tail -3 "$dir/table.err")"
grep -q "inputsToParameters\|userOutputs: {" "$dir/table.out" &&
  failed "table: LibTorch's graph signature is on standard output"
grep -q "^selected" "$dir/table.out" || failed "table: no 'selected' line on standard output"
[ $fail = 0 ] && echo PASS
exit $fail
