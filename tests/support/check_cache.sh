#!/usr/bin/env bash
# aitune-tune --cache and --report-dir on a real model, end to end:
#   check_cache.sh AITUNE_TUNE MODEL PYTHON DIR [RSVG_CONVERT]
# A first run tunes and stores; a second reuses the decision without measuring (same selection);
# the same model under another name hits too; the model with one weight changed (saved by
# PYTHON's torch), another input shape or candidate set misses; a truncated cache is one warning, kept aside, and a correct tuning; two processes
# storing at once keep both entries; the report folder's SVG renders (when RSVG_CONVERT given).
# Through a Redis of its own (password from a file): a miss then a hit in another process; a
# local file in front fills from it and serves while Redis is dead; a dead or hung (SIGSTOP)
# Redis alone is one warning and a tuning here, exit 0. (One tuning per key across processes:
# check_cache_fleet.sh.)
set -u
tune=$1 model=$2 python=$3 dir=$4 rsvg=${5:-}
rm -rf "$dir" && mkdir -p "$dir"
other="$dir/changed.pt"
"$python" - "$model" "$other" <<'PY' || { echo "FAIL: cannot make the changed model"; exit 1; }
import sys, torch
module = torch.jit.load(sys.argv[1])
with torch.no_grad():
    next(module.parameters()).add_(1e-3)
module.save(sys.argv[2])
PY
cache="$dir/cache.json"
# Signed entries keep the baseline's outputs (an unsigned cache stores none: anyone could edit
# them), so this test runs with a key; check_cache_trust.sh covers the cache without one.
printf 'the key of check_cache.sh, 32 b.' >"$dir/key" && chmod 600 "$dir/key"
export AITUNE_CACHE_KEY_FILE="$dir/key"
fail=0
failed() { echo "FAIL: $*"; fail=1; }
# run NAME ARGS...: one tuning of the test's settings, its output in $dir/NAME.txt; the
# candidates are $backends. The input is small and the budget short: what is checked is the
# cache, and that a hit repeats the stored choice, whichever it is (seven tunings, three hits).
backends=frozen,optimized,channels_last
run() {
  local name=$1
  shift
  "$tune" "$@" --time-budget 6 --backends "$backends" --cache "$cache" >"$dir/$name.txt" 2>&1
  local code=$?
  echo "--- $name (exit $code): $(grep -E '^selected ' "$dir/$name.txt" | tail -n 1)"
  [ "$code" -eq 0 ] || { cat "$dir/$name.txt"; failed "$name: exit code $code"; }
  return "$code"
}
hit() { grep -q "from the tuning cache" "$dir/$1.txt"; }
selected() { grep -E '^selected: ' "$dir/$1.txt"; }
measured() { grep -Eq "measuring [0-9]+ backend|rounds, [0-9]+ looks" "$dir/$1.txt" &&
  ! hit "$1"; }

run first "$model" --input 1x3x96x96 --report-dir "$dir/report"
hit first && failed "first: a hit in an empty cache"
measured first || failed "first: nothing was measured"
run second "$model" --input 1x3x96x96 --json "$dir/second.json"
hit second || failed "second: no cache hit"
grep -Eq ": reused .*, checked in [0-9.]+ s" "$dir/second.txt" ||
  failed "second: the choice was not rebuilt and checked"
grep -Eq "measuring [0-9]+ backend|confirming look|: latency [0-9.]+ ms" "$dir/second.txt" &&
  failed "second: it measured"
[ "$(selected first)" = "$(selected second)" ] || failed "second: another selection"
grep -q '"cache_hit": {' "$dir/second.json" || failed "second: the JSON has no cache_hit"
# The first run stored the baseline's outputs; the second checked a candidate against them,
# without building the baseline (a baseline decision rebuilds the baseline alone).
grep -q '"outputs_sha256"' "$cache" || failed "first: the baseline's outputs were not stored"
grep -Eq '"baseline_selected": true|"stored_reference": true' "$dir/second.json" ||
  failed "second: the choice was not checked against the stored outputs"

cp "$model" "$dir/renamed.pt"
run renamed "$dir/renamed.pt" --input 1x3x96x96
hit renamed || failed "the same model under another name missed"
run shape "$model" --input 1x3x64x64
hit shape && failed "another input shape hit"
backends=frozen,optimized run candidates "$model" --input 1x3x96x96
hit candidates && failed "another candidate set hit"
run model "$other" --input 1x3x96x96
hit model && failed "the changed model hit"
entries=$(grep -c '"created"' "$cache")
[ "$entries" -eq 4 ] || failed "the cache holds $entries entries, expected 4"

# A truncated file: one warning, the file kept aside, a correct tuning that stores afresh.
head -c 300 "$cache" >"$dir/truncated" && cp "$dir/truncated" "$cache"
run corrupt "$model" --input 1x3x96x96
warnings=$(grep -c "WARNING" "$dir/corrupt.txt")
[ "$warnings" -eq 1 ] || failed "corrupt: $warnings warnings, expected 1"
grep -q "is unusable" "$dir/corrupt.txt" || failed "corrupt: the warning does not say why"
hit corrupt && failed "corrupt: a hit"
[ "$(selected corrupt)" = "$(selected first)" ] || echo "note: corrupt selected another backend"
cmp -s "$dir/truncated" "$dir"/cache.json.corrupt-* || failed "corrupt: the old file was not kept"
run after_corrupt "$model" --input 1x3x96x96
hit after_corrupt || failed "after the corrupt file: no hit"

# Two processes storing at once: both entries survive.
rm -f "$cache"
run together_a "$model" --input 1x3x96x96 &
first_pid=$!
run together_b "$other" --input 1x3x96x96 &
second_pid=$!
wait "$first_pid" || failed "together_a failed"
wait "$second_pid" || failed "together_b failed"
entries=$(grep -c '"created"' "$cache")
[ "$entries" -eq 2 ] || failed "two processes at once left $entries entries, expected 2"

# A Redis shared by a fleet: the same decisions, another process's hit.
. "$(dirname "$0")/redis_server.sh"
if ! redis_missing; then
  printf 'check-cache-redis-password' >"$dir/redis_password" && chmod 600 "$dir/redis_password"
  export AITUNE_REDIS_PASSWORD_FILE="$dir/redis_password"
  start_redis "$dir/redis" "requirepass $(cat "$dir/redis_password")" || failed "no redis-server"
  cache="redis://127.0.0.1:$REDIS_PORT/0"
  run redis_first "$model" --input 1x3x96x96
  hit redis_first && failed "redis_first: a hit in an empty Redis"
  run redis_second "$model" --input 1x3x96x96
  hit redis_second || failed "redis_second: no hit from Redis"
  [ "$(selected redis_first)" = "$(selected redis_second)" ] || failed "redis: another selection"
  # Another machine with a local file in front: filled from Redis, then serving alone.
  run redis_local "$model" --input 1x3x96x96 --cache-local "$dir/local.json"
  hit redis_local || failed "redis_local: no hit"
  grep -q '"created"' "$dir/local.json" || failed "redis_local: the local file was not filled"
  stop_redis
  run redis_dead_local "$model" --input 1x3x96x96 --cache-local "$dir/local.json"
  hit redis_dead_local || failed "redis_dead_local: the local file did not serve"
  run redis_dead "$model" --input 1x3x96x96
  hit redis_dead && failed "redis_dead: a hit from a dead Redis"
  [ "$(grep -c WARNING "$dir/redis_dead.txt")" -eq 1 ] || failed "redis_dead: not one warning"
  # Hung: each request gives up at --cache-timeout; the tuning goes on here.
  start_redis "$dir/redis" "requirepass $(cat "$dir/redis_password")" || failed "no redis-server"
  cache="redis://127.0.0.1:$REDIS_PORT/0"
  kill -STOP "$REDIS_PID"
  run redis_hung "$model" --input 1x3x96x96 --cache-timeout 0.3
  grep -q "no answer within 300 ms" "$dir/redis_hung.txt" || failed "redis_hung: no timeout said"
  stop_redis
  cache="$dir/cache.json"
fi

for file in report.json report.md report.svg; do
  [ -s "$dir/report/$file" ] || failed "--report-dir wrote no $file"
done
if [ -n "$rsvg" ]; then
  "$rsvg" "$dir/report/report.svg" -o "$dir/report/report.png" || failed "the SVG does not render"
  [ -s "$dir/report/report.png" ] || failed "the SVG rendered to nothing"
fi
[ -z "$(find "$dir" -name '*.tmp')" ] || failed "temporary files left"
[ "$fail" -eq 0 ] && echo "PASS"
exit $fail
