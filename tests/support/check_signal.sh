#!/usr/bin/env bash
# Sends a real signal to aitune-tune during a tuning and checks the clean stop: the exit code
# 128 + N, a one-line message, the JSON report with the error, no temporary file left.
#   check_signal.sh AITUNE_TUNE MODEL SIGNAL WAIT_FOR DIR
# SIGNAL is INT or TERM; it is sent once the output shows WAIT_FOR (a regular expression).
set -u
tune=$1 model=$2 signal=$3 wait_for=$4 dir=$5
rm -rf "$dir" && mkdir -p "$dir"
# Job control on: a non-interactive shell starts a background job with SIGINT ignored, and
# aitune-tune keeps a signal its parent ignores (as nohup expects).
set -m
"$tune" "$model" --input 1x3x224x224 --backends frozen,optimized --time-budget 600 \
  --json "$dir/report.json" >"$dir/output.txt" 2>&1 &
pid=$!
for _ in $(seq 1 1800); do
  grep -Eq "$wait_for" "$dir/output.txt" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
cat "$dir/output.txt"
grep -Eq "$wait_for" "$dir/output.txt" || { echo "FAIL: never saw '$wait_for'"; kill -9 "$pid"; exit 1; }
sent=$(date +%s.%N)
kill -s "$signal" "$pid"
wait "$pid"
code=$?
elapsed=$(awk -v a="$sent" -v b="$(date +%s.%N)" "BEGIN { print b - a }")
echo "--- after SIG$signal: exit code $code, $elapsed s to stop"
tail -n 3 "$dir/output.txt"
case $signal in INT) expected=130 ;; TERM) expected=143 ;; *) echo "FAIL: signal $signal"; exit 1 ;; esac
fail=0
[ "$code" -eq "$expected" ] || { echo "FAIL: exit code $code, expected $expected"; fail=1; }
[ "$(grep -c "interrupted by SIG$signal" "$dir/output.txt")" -eq 1 ] ||
  { echo "FAIL: not one line 'interrupted by SIG$signal'"; fail=1; }
grep -q '"error": "interrupted by SIG'"$signal" "$dir/report.json" 2>/dev/null ||
  { echo "FAIL: the JSON report lacks the error"; fail=1; }
leftovers=$(find "$dir" -name '*.tmp')
[ -z "$leftovers" ] || { echo "FAIL: temporary files left: $leftovers"; fail=1; }
awk -v e="$elapsed" "BEGIN { exit !(e < 20) }" || { echo "FAIL: took $elapsed s to stop"; fail=1; }
exit $fail
