#!/usr/bin/env bash
# What aitune-tune writes, wherever it is asked to, and what it honours (reliability probe):
#   check_streams_and_names.sh AITUNE_TUNE MODEL PYTHON DIR
# - a model file name that is not valid UTF-8 (D9): exit 0, the JSON report and the cache entry
#   written (U+FFFD for the bad byte), no temporary file left;
# - --json - (stdout holds the JSON alone, the table goes to standard error) and --json FIFO;
# - a reader of standard output that goes away (D14, `| head -1`): the tuning goes on, the JSON
#   report and the cache are written, exit 141 as SIGPIPE would give;
# - SIGINT ignored by the parent (a shell's background job, D18) stays ignored;
# - --samples 1000 with --time-budget 2 (D11): outputs are checked on the samples that fit half
#   the budget, the report says how many, and the run ends in seconds, not minutes;
# - two accounts sharing one cache (D10), as the README sets it up (a setgid folder of their
#   group, umask 002): both store. Needs root, for the second account (nobody); else skipped.
set -u
tune=$1 model=$2 python=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
fail=0
failed() { echo "FAIL: $*"; fail=1; }
run() { "$tune" "$model" --input 1x3x64x64 --time-budget 1 --backends frozen "$@"; }
entries() { "$python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$1"; }

# D9: a name in another encoding.
odd="$dir/bad"$'\xff'".pt"
cp "$model" "$odd"
"$tune" "$odd" --input 1x3x64x64 --time-budget 1 --backends frozen --json "$dir/odd.json" \
  --cache "$dir/odd_cache.json" >"$dir/odd.txt" 2>&1 || failed "odd name: exit $?"
"$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "bad\ufffd.pt" in r["environment"]["model"], r["environment"]["model"]' \
  "$dir/odd.json" || failed "odd name: no JSON report with U+FFFD for the bad byte"
[ "$(entries "$dir/odd_cache.json" 2>/dev/null)" = 1 ] || failed "odd name: no cache entry"
ls "$dir" | grep -q '\.tmp$' && failed "odd name: temporary files left: $(ls "$dir")"

# --json -: standard output is the JSON report alone.
run --json - >"$dir/stdout.json" 2>"$dir/stdout.err" || failed "--json -: exit $?"
"$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["selected"] and r["environment"]["model_load_ms"] > 0' "$dir/stdout.json" \
  || failed "--json -: standard output is not the JSON report alone: $(head -c 300 "$dir/stdout.json")"
grep -q '^selected ' "$dir/stdout.err" || failed "--json -: the selected line is not on standard error"

# --json FIFO: written directly (a FIFO cannot be replaced by a rename).
mkfifo "$dir/fifo"
timeout 120 cat "$dir/fifo" >"$dir/fifo.json" &  # a run that replaced the FIFO never opens it
reader=$!
run --json "$dir/fifo" >/dev/null 2>"$dir/fifo.err" || failed "--json FIFO: exit $?: $(tail -n 2 "$dir/fifo.err")"
wait "$reader"
"$python" -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/fifo.json" \
  || failed "--json FIFO: the reader got no JSON report"
[ -p "$dir/fifo" ] || failed "--json FIFO: the FIFO was replaced"

# D14: the reader of both streams goes away after one line.
run --json "$dir/pipe.json" --cache "$dir/pipe_cache.json" 2>&1 | head -n 1 >/dev/null
code=${PIPESTATUS[0]}
[ "$code" = 141 ] || failed "closed pipe: exit $code, expected 141"
test -s "$dir/pipe.json" || failed "closed pipe: no JSON report"
[ "$(entries "$dir/pipe_cache.json" 2>/dev/null)" = 1 ] || failed "closed pipe: no cache entry"

# D18: SIGINT ignored by the parent stays ignored.
(
  trap '' INT
  exec "$tune" "$model" --input 1x3x64x64 --time-budget 4 --backends frozen \
    >"$dir/ignored.txt" 2>&1
) &
pid=$!
for _ in $(seq 1 600); do  # until the measurement runs, as a signal during a tuning
  grep -q 'measuring' "$dir/ignored.txt" && break
  sleep 0.1
done
kill -INT "$pid" || failed "an inherited SIG_IGN for SIGINT: the run had ended before the signal"
wait "$pid"
code=$?
[ "$code" = 0 ] || failed "an inherited SIG_IGN for SIGINT: exit $code, expected 0 (the signal ignored)"

# D11: the budget bounds the baseline's pass over 1000 samples.
start=$(date +%s)
"$tune" "$model" --input 1x3x224x224 --samples 1000 --time-budget 2 --backends frozen \
  --json "$dir/budget.json" >"$dir/budget.txt" 2>&1 || failed "--samples 1000: exit $?"
took=$(($(date +%s) - start))
checked=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["checked_samples"])' \
  "$dir/budget.json" 2>/dev/null)
case "$checked" in
  '' | None | 1000) failed "--samples 1000: checked_samples is '$checked', expected fewer than 1000" ;;
esac
grep -q "outputs checked on the first $checked of 1000 samples" "$dir/budget.txt" \
  || failed "--samples 1000: no warning naming the $checked samples checked"
[ "$took" -le 30 ] || failed "--samples 1000 with a 2 s budget took $took s"
echo "time budget: outputs checked on $checked of 1000 samples; the run took $took s"

# D10: two accounts, one cache.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
  setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$tune" 2>/dev/null &&
  setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$model" 2>/dev/null; then
  shared="$dir/shared"
  mkdir "$shared" && chgrp 65534 "$shared" && chmod 2775 "$shared"
  chmod o+x "$dir"
  (umask 002 && run --cache "$shared/cache.json" >"$dir/first_account.txt" 2>&1) \
    || failed "two accounts: the first's run: exit $?"
  (umask 002 && setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$tune" "$model" --input 1x3x32x32 --time-budget 1 --backends frozen \
    --cache "$shared/cache.json" >"$dir/second_account.txt" 2>&1) \
    || failed "two accounts: the second's run: exit $?"
  grep -q "not stored" "$dir/second_account.txt" && failed "two accounts: $(grep 'not stored' "$dir/second_account.txt")"
  [ "$(entries "$shared/cache.json")" = 2 ] || failed "two accounts: the cache has $(entries "$shared/cache.json") entries, expected 2"
  echo "two accounts: both stored ($(stat -c '%A %U:%G' "$shared/cache.json"))"
else
  echo "two accounts: skipped (needs root and a second account, nobody, that can run $tune)"
fi

[ "$fail" = 0 ] && echo PASS
