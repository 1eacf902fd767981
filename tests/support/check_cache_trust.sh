#!/usr/bin/env bash
# The tuning cache is untrusted input, end to end (aitune-tune):
#   check_cache_trust.sh AITUNE_TUNE MODEL PYTHON DIR
# A forged entry (reliability probe D1): after a tuning of a frozen candidate and the perturbed
# canary, the entry is edited to select the canary, its report made consistent (ok, faster than
# the baseline) and "baseline outputs" with their SHA-256 added. The next run checks the canary
# against the baseline, built again, rejects it, and tunes a correct choice. The same with a key
# (AITUNE_CACHE_KEY_FILE), which the forger does not hold, so the signature fails too.
# A nested cache (D2): 150 000 levels of [[...]] are one warning; the run exits 0 with its
# report, the file is moved aside and replaced, and no temporary file is left. A lock held by
# another writer (D4) is waited for --cache-lock-timeout, then one warning and exit 0; a SIGINT
# while it waits ends the wait at once (exit 130, the report written, nothing stored). The
# forgery again, written into a Redis of its own: rejected where it is used.
set -u
tune=$1 model=$2 python=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
fail=0
failed() { echo "FAIL: $*"; fail=1; }
selected() { grep -E '^selected: ' "$1" | tail -n 1; }

# forge CACHE_FILE: its one entry made to select the canary, consistent, with forged outputs.
forge() {
  "$python" - "$1" <<'PY'
import base64, hashlib, json, sys
path = sys.argv[1]
with open(path) as file:
    cache = json.load(file)
(entry,) = cache["entries"].values()
report = entry["report"]
baseline = report["baseline"]
baseline["selected"] = False
for row in report["candidates"]:
    canary = row["backend"].startswith("PerturbedOutputs")
    row["selected"] = canary
    if canary:
        row.update(status="ok", reason="", calls=baseline["calls"], speedup=2.0,
                   accuracy=[{"output": "output", "worst_error_ratio": 0.01}])
        latency = baseline["latency_ms"]
        row["latency_ms"] = dict(latency, median=latency["median"] / 2)
        report.update(selected=row["backend"], selected_key=row["key"], baseline_selected=False)
outputs = base64.b64encode(b"forged outputs").decode()
entry["reference"] = {"samples_digest": entry.get("reference", {}).get("samples_digest", "x"),
                      "outputs": outputs,
                      "outputs_sha256": hashlib.sha256(outputs.encode()).hexdigest()}
with open(path, "w") as file:
    json.dump(cache, file)
PY
}
# tune_forged NAME CACHE LOG: the run after a forgery rejects the forged choice by its check.
tune_forged() {
  "$tune" "$model" --input 1x3x64x64 --time-budget 4 --backends frozen,perturbed \
    --cache "$2" >"$3" 2>&1 || failed "forged ($1): exit $?"
  echo "--- forged ($1): $(selected "$3")"
  grep -q "cannot be reused: incorrect" "$3" ||
    failed "forged ($1): the forged choice was not rejected by its check"
  selected "$3" | grep -q Perturbed && failed "forged ($1): the canary was selected"
  grep -q "from the tuning cache" "$3" && failed "forged ($1): served as a cache hit"
}

for keyed in no yes; do
  cache="$dir/cache_$keyed.json"
  if [ "$keyed" = yes ]; then
    printf 'the key of check_cache_trust.sh.' >"$dir/key" && chmod 600 "$dir/key"
    export AITUNE_CACHE_KEY_FILE="$dir/key"
  fi
  "$tune" "$model" --input 1x3x64x64 --time-budget 4 --backends frozen,perturbed \
    --cache "$cache" >"$dir/first_$keyed.txt" 2>&1 || failed "first ($keyed key): exit $?"
  selected "$dir/first_$keyed.txt" | grep -q Perturbed && failed "first: the canary was selected"
  forge "$cache" || failed "the forgery failed ($keyed key)"
  tune_forged "$keyed key" "$cache" "$dir/forged_$keyed.txt"
done
unset AITUNE_CACHE_KEY_FILE

# The same forgery written into a Redis the fleet shares: checked where it is used, rejected.
. "$(dirname "$0")/redis_server.sh"
if ! redis_missing; then
  start_redis "$dir/redis" || failed "no redis-server"
  url="redis://127.0.0.1:$REDIS_PORT/0"
  "$tune" "$model" --input 1x3x64x64 --time-budget 4 --backends frozen,perturbed \
    --cache "$url" >"$dir/first_redis.txt" 2>&1 || failed "first (redis): exit $?"
  entry_key=$(redis-cli -p "$REDIS_PORT" --scan --pattern 'aitune:v2:entry:*')
  printf '{"entries": {"x": %s}}' "$(redis-cli -p "$REDIS_PORT" --raw GET "$entry_key")" \
    >"$dir/redis_entry.json"
  forge "$dir/redis_entry.json" || failed "the forgery failed (redis)"
  "$python" -c 'import json, sys; print(json.dumps(*json.load(open(sys.argv[1]))["entries"].values()))' \
    "$dir/redis_entry.json" | redis-cli -p "$REDIS_PORT" -x SET "$entry_key" >/dev/null
  tune_forged "redis" "$url" "$dir/forged_redis.txt"
  stop_redis
fi

deep="$dir/deep.json"
"$python" -c "import sys; n = 150000; sys.stdout.write('{\"schema_version\": 2, \"entries\": {\"a\": ' + '[' * n + ']' * n + '}}')" >"$deep"
"$tune" "$model" --input 1x3x64x64 --time-budget 2 --backends frozen --cache "$deep" \
  >"$dir/deep.txt" 2>&1
code=$?
echo "--- deep: exit $code, $(selected "$dir/deep.txt")"
[ "$code" -eq 0 ] || failed "deep: exit $code"
grep -q "nests deeper than 256 levels" "$dir/deep.txt" || failed "deep: no warning saying why"
[ -n "$(selected "$dir/deep.txt")" ] || failed "deep: no report"
ls "$dir"/deep.json.corrupt-* >/dev/null 2>&1 || failed "deep: the file was not moved aside"
size=$(stat -c %s "$deep")
[ "$size" -lt 1000000 ] || failed "deep: the cache grew to $size bytes"
# A writer that holds the lock (D4): the store waits --cache-lock-timeout, then one warning,
# the decision unstored, exit 0 with the report.
locked="$dir/locked.json"
"$python" -c "import fcntl, sys, time
f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)" \
  "$locked.lock" >"$dir/holder.txt" &
holder=$!
for _ in $(seq 50); do grep -q held "$dir/holder.txt" && break; sleep 0.1; done
"$tune" "$model" --input 1x3x64x64 --time-budget 2 --backends frozen --cache "$locked" \
  --cache-lock-timeout 1 >"$dir/locked.txt" 2>&1
code=$?
echo "--- locked: exit $code, $(selected "$dir/locked.txt")"
[ "$code" -eq 0 ] || failed "locked: exit $code"
grep -q "is held by another process (waited 1.0 s)" "$dir/locked.txt" ||
  failed "locked: no warning naming the lock"
[ -n "$(selected "$dir/locked.txt")" ] || failed "locked: no report"
[ -e "$locked" ] && failed "locked: stored without the lock"
# SIGINT while the store waits for that lock (60 s allowed) ends the wait at once: exit 130,
# the report written, the decision not stored. (Job control on: else a background job starts
# with SIGINT ignored, and aitune-tune keeps it so.)
set -m
"$tune" "$model" --input 1x3x64x64 --time-budget 2 --backends frozen --cache "$locked" \
  --cache-lock-timeout 60 --json "$dir/interrupted.json" >"$dir/interrupted.txt" 2>&1 &
waiter=$!
set +m
for _ in $(seq 300); do grep -q 'progress: done' "$dir/interrupted.txt" && break; sleep 0.1; done
sleep 0.5
sent=$(date +%s)
kill -INT "$waiter"
wait "$waiter"
code=$?
waited=$(($(date +%s) - sent))
kill "$holder"
echo "--- interrupted while waiting for the lock: exit $code after $waited s"
[ "$code" -eq 130 ] || failed "interrupted lock wait: exit $code, expected 130"
[ "$waited" -le 5 ] || failed "interrupted lock wait: $waited s to stop"
grep -q "the wait for the lock .* was interrupted" "$dir/interrupted.txt" ||
  failed "interrupted lock wait: no warning saying so"
test -s "$dir/interrupted.json" || failed "interrupted lock wait: no JSON report"
[ -e "$locked" ] && failed "interrupted lock wait: stored without the lock"
[ -z "$(find "$dir" -name '*.tmp')" ] || failed "temporary files left"
[ "$fail" -eq 0 ] && echo "PASS"
exit $fail
