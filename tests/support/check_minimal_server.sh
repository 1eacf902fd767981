#!/usr/bin/env bash
# examples/minimal_server.cpp, the README's server, run twice with one cache file: the first
# start-up tunes and stores, the second takes the decision from the cache; both serve.
#   check_minimal_server.sh MINIMAL_SERVER MODEL DIR
set -u
server=$1 model=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
fail=0
for start in first second; do
  "$server" "$model" "$dir/cache.json" 1x3x224x224 5 >"$dir/$start.txt" 2>&1
  code=$?
  echo "--- $start start-up (exit $code):"
  grep -E "^(selected|served|from the tuning cache)" "$dir/$start.txt"
  [ "$code" -eq 0 ] || { cat "$dir/$start.txt"; echo "FAIL: exit code $code"; fail=1; }
  grep -Eq "^served 100 requests with " "$dir/$start.txt" ||
    { echo "FAIL: $start did not serve 100 requests"; fail=1; }
done
grep -q "^from the tuning cache" "$dir/first.txt" && { echo "FAIL: the first hit a cache"; fail=1; }
grep -q "^from the tuning cache" "$dir/second.txt" ||
  { echo "FAIL: the second did not take the cached decision"; fail=1; }
[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
