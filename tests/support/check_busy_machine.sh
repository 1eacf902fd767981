#!/usr/bin/env bash
# A tuning on a machine busy with other work says so, with the noise (issue 27):
#   check_busy_machine.sh AITUNE_TUNE MODEL PYTHON DIR
# A busy loop on each of CPUs 0 and 1 while aitune-tune runs there with LibTorch's two intra-op
# threads: each thread shares its core with a loop, and whenever one is descheduled the other
# spins for it, so the baseline's p90 came to 2x to 8x its median here (idle: 1.1x). The noise
# comes and goes: in 2 runs of 11 the race settled within 14-18 rounds of a quiet spell (cv 3 %
# and 15 %). So each run must be consistent - the JSON's verdict present exactly when the
# baseline's p90 / median reaches 1.5 or its p99 / median 5, and then named with its figures in
# the report's why and the summary line ("too busy to decide" where the race ran out of its
# budget, "busy while measuring" where it decided anyway) - and one run in at most three must
# have been busy.
set -u
tune=$1 model=$2 python=$3 dir=$4
fail=0
failed() { echo "FAIL: $*"; fail=1; }
if ! command -v taskset >/dev/null || [ "$(nproc --all)" -lt 2 ]; then
  echo "FAIL: needs taskset (util-linux) and two CPUs"
  exit 1
fi
rm -rf "$dir" && mkdir -p "$dir"
loops=()
for cpu in 0 1; do
  taskset -c "$cpu" bash -c 'while :; do :; done' &
  loops+=($!)
done
trap 'kill "${loops[@]}" 2>/dev/null' EXIT
busy_text="the machine was (too busy to decide|busy while measuring): the baseline's p90 was [0-9.]+x its median and its p99 [0-9.]+x \(cv [0-9]+ %\)"
seen_busy=no
for run in 1 2 3; do
  out="$dir/run$run"
  OMP_NUM_THREADS=2 taskset -c 0,1 "$tune" "$model" --input 1x3x64x64 --backends frozen \
    --time-budget 3 --json "$out.json" >"$out.txt" 2>&1
  code=$?
  grep -E "^(measurement|why|selected .*:)" "$out.txt"
  [ "$code" -eq 0 ] || { cat "$out.txt"; failed "run $run: exit code $code"; break; }
  verdict=$("$python" - "$out.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
stats, busy = report["baseline"]["latency_ms"], report["measurement"]["busy"]
noisy = stats["p90"] / stats["median"] >= 1.5 or stats["p99"] / stats["median"] >= 5.0
print(f"noise p90/median {stats['p90'] / stats['median']:.2f}, p99/median "
      f"{stats['p99'] / stats['median']:.2f}: {'busy' if noisy else 'quiet'}", file=sys.stderr)
if noisy != (busy is not None):
    print("inconsistent")
elif busy is not None and busy["baseline_p99_over_median"] != stats["p99"] / stats["median"]:
    print("wrong figures")
else:
    print("busy" if noisy else "quiet")
PY
)
  case "$verdict" in
    busy)
      seen_busy=yes
      grep -Eq "^why: .*; $busy_text" "$out.txt" ||
        failed "run $run: the report's why does not name the busy machine and its noise"
      grep -Eq "^selected [^ ]+: .*; $busy_text" "$out.txt" ||
        failed "run $run: the summary line does not name the busy machine"
      break ;;
    quiet)
      grep -q "the machine was" "$out.txt" && failed "run $run: a quiet run is called busy" ;;
    *) failed "run $run: the JSON's verdict is $verdict with its baseline's figures" ;;
  esac
done
kill "${loops[@]}" 2>/dev/null
[ "$seen_busy" = yes ] || failed "no run of three was busy: the loops did not disturb the tuning"
[ "$fail" -eq 0 ] && echo "PASS"
exit $fail
