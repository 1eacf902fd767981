#!/usr/bin/env bash
# examples/inference_server.cpp as a server would run it, twice with one cache file: the first
# start-up tunes and stores, the second takes the decision from the cache; both serve requests
# from several threads and print latency percentiles. A third, with --background and a cache of
# its own, serves the baseline from the start and switches when its tuning ends.
#   check_server.sh INFERENCE_SERVER MODEL DIR
set -u
server=$1 model=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
fail=0
for start in first second background; do
  cache="$dir/cache.json" background=""
  [ "$start" = background ] && cache="$dir/background-cache.json" background="--background"
  "$server" "$model" --input 1x3x224x224 --cache "$cache" --threads 3 --requests 20 \
    --time-budget 5 $background >"$dir/$start.txt" 2>&1
  code=$?
  echo "--- $start start-up (exit $code):"
  grep -E "^(start-up|served|latency|tuning):" "$dir/$start.txt"
  [ "$code" -eq 0 ] || { cat "$dir/$start.txt"; echo "FAIL: exit code $code"; fail=1; }
  grep -Eq "^served 60 requests from 3 threads" "$dir/$start.txt" ||
    { echo "FAIL: $start did not serve 60 requests"; fail=1; }
  grep -Eq "^latency: p50 [0-9.]+ ms, p90 [0-9.]+ ms, p99 [0-9.]+ ms" "$dir/$start.txt" ||
    { echo "FAIL: $start printed no percentiles"; fail=1; }
done
grep -q "(tuned now, and stored)" "$dir/first.txt" || { echo "FAIL: the first did not tune"; fail=1; }
grep -q "(from the tuning cache)" "$dir/second.txt" ||
  { echo "FAIL: the second did not take the cached decision"; fail=1; }
[ "$(grep '^start-up' "$dir/first.txt" | cut -d' ' -f2)" = \
  "$(grep '^start-up' "$dir/second.txt" | cut -d' ' -f2)" ] ||
  { echo "FAIL: the two start-ups chose differently"; fail=1; }
grep -Eq "^start-up: (TorchEager|NativeRuntime)\(.*\) in [0-9.]+ s \(serving it while the tuning runs\)" \
  "$dir/background.txt" || { echo "FAIL: --background did not serve the baseline at once"; fail=1; }
grep -Eq "^tuning: (switched to|kept the baseline) .* \(tuned in [0-9.]+ s while serving, and stored\)" \
  "$dir/background.txt" || { echo "FAIL: --background did not switch after its tuning"; fail=1; }
[ -s "$dir/background-cache.json" ] || { echo "FAIL: --background stored nothing"; fail=1; }
[ "$fail" -eq 0 ] && echo "PASS"
exit $fail
