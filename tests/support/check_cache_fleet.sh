#!/usr/bin/env bash
# One tuning per key across processes (aitune-tune --cache), end to end on a real model:
#   check_cache_fleet.sh AITUNE_TUNE MODEL DIR
# Through a file: a leader killed with SIGKILL mid-tuning is taken over at once by the process
# waiting for it (the kernel drops a dead process's lock). Through a Redis of its own: eight
# processes started at once on a cold key tune once and reuse seven times; a leader killed with
# SIGKILL is taken over once its lease lapses, not before and within the lease's time to live; a
# leader that loses Redis mid-tuning ends well, keeps its decision in its local file, and that
# file pushes it at the next start, where another machine then finds it.
set -u
tune=$1 model=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
export XDG_CACHE_HOME="$dir/xdg"  # a Redis cache's digest memo, out of the user's home
fail=0
failed() { echo "FAIL: $*"; fail=1; }
args=(--input 1x3x96x96 --backends frozen,optimized,channels_last)
# wait_for FILE PATTERN SECONDS: until FILE holds PATTERN (1 when it never does).
wait_for() {
  local deadline=$(($(date +%s) + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}
hit() { grep -q "from the tuning cache" "$dir/$1.txt"; }
measured() { grep -Eq "measuring [0-9]+ backend" "$dir/$1.txt" && ! hit "$1"; }

# takeover NAME TTL LEAST MOST CACHE_ARGS...: a leader takes the key's lease (a time to live of
# TTL seconds) and is paused (SIGSTOP: it renews no more) so that a follower surely finds it
# tuning; the follower waits; the leader is killed (SIGKILL). The follower must not take over
# before the kill, must take over at least LEAST seconds after the leader's pause (its lease
# still lived until then) and at most MOST seconds after the kill, then tune and store.
takeover() {
  local name=$1 ttl=$2 least=$3 most=$4
  shift 4
  local leader_log="$dir/${name}_leader.txt" follower_log="$dir/${name}_follower.txt"
  local tuning=("$tune" "$model" "${args[@]}" --time-budget 6 --cache-lease-ttl "$ttl" "$@")
  "${tuning[@]}" >"$leader_log" 2>&1 &
  local leader=$!
  if ! wait_for "$leader_log" "Min Latency Strategy: tuning module" 120; then
    kill -9 "$leader" 2>/dev/null
    cat "$leader_log"
    failed "$name: the leader never started tuning"
    return
  fi
  kill -STOP "$leader"
  local paused killed took
  paused=$(date +%s.%N)
  "${tuning[@]}" --cache-wait 120 >"$follower_log" 2>&1 &
  local follower=$!
  wait_for "$follower_log" "another process is tuning this key" 120 ||
    failed "$name: the follower did not wait for the leader"
  grep -q "stopped without a decision" "$follower_log" &&
    failed "$name: the follower took over from a live leader"
  kill -9 "$leader"
  killed=$(date +%s.%N)
  wait "$leader" 2>/dev/null
  wait_for "$follower_log" "stopped without a decision: tuning here" 120 ||
    failed "$name: the follower never took over"
  took=$(date +%s.%N)
  wait "$follower" || { cat "$follower_log"; failed "$name: the follower failed"; }
  local since_pause since_kill
  since_pause=$(awk -v a="$paused" -v b="$took" 'BEGIN { printf "%.2f", b - a }')
  since_kill=$(awk -v a="$killed" -v b="$took" 'BEGIN { printf "%.2f", b - a }')
  echo "--- $name: the follower took over $since_kill s after the kill (at most $most)," \
    "$since_pause s after the leader's pause (at least $least)"
  awk -v p="$since_pause" -v k="$since_kill" -v l="$least" -v m="$most" \
    'BEGIN { exit !(p >= l && k <= m) }' || failed "$name: took over out of bounds"
  measured "${name}_follower" || failed "$name: the follower did not tune"
}

# A file: the lease is a lock the kernel drops with its holder; the follower polls every 0.2 s.
takeover file 2 0 1.5 --cache "$dir/cache.json"
[ "$(grep -c '"created"' "$dir/cache.json")" -eq 1 ] || failed "file: the follower's decision was not stored"

. "$(dirname "$0")/redis_server.sh"
if ! redis_missing; then
  start_redis "$dir/redis" || failed "no redis-server"
  url="redis://127.0.0.1:$REDIS_PORT/0"
  redis() { redis-cli -p "$REDIS_PORT" "$@"; }
  # Eight processes started at once on a cold key: one tunes (the lease's holder), seven wait
  # for its decision and reuse it, each checked.
  pids=()
  for i in 1 2 3 4 5 6 7 8; do
    "$tune" "$model" "${args[@]}" --time-budget 6 --cache "$url" >"$dir/flight_$i.txt" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed "a process of the eight failed"; done
  tuned=0 reused=0
  for i in 1 2 3 4 5 6 7 8; do
    if hit "flight_$i"; then reused=$((reused + 1)); elif measured "flight_$i"; then tuned=$((tuned + 1)); fi
  done
  echo "--- eight at once: $tuned tuned, $reused reused"
  [ "$tuned" -eq 1 ] && [ "$reused" -eq 7 ] ||
    failed "eight at once: $tuned tunings and $reused hits, expected 1 and 7"

  # Killed: the lease (8 s, renewed every 2.7 s) lapses 5.3 to 8 s after the leader's pause,
  # whenever it is killed; a slow renewal on a loaded machine may bring that forward a little.
  redis FLUSHALL >/dev/null
  takeover redis 8 5 9.5 --cache "$url"
  [ "$(redis ZCARD aitune:v2:entries)" = 1 ] || failed "redis: the follower's decision was not stored"
  [ -z "$(redis --scan --pattern 'aitune:v2:lease:*')" ] || failed "redis: a lease was left behind"

  # Redis lost mid-tuning: the leader's lease cannot be renewed, its decision stays in its local
  # file, and goes to a Redis (back, empty, on another port) at the next start of that machine.
  redis FLUSHALL >/dev/null
  "$tune" "$model" "${args[@]}" --time-budget 6 --cache-lease-ttl 1 --cache "$url" \
    --cache-local "$dir/local.json" >"$dir/lost.txt" 2>&1 &
  leader=$!
  wait_for "$dir/lost.txt" 'progress: \[1/3\]' 120 || failed "lost: the leader never started tuning"
  stop_redis
  wait "$leader" || { cat "$dir/lost.txt"; failed "lost: the leader failed without Redis"; }
  measured lost || failed "lost: the leader did not tune"
  grep -q "the lease on this key was lost" "$dir/lost.txt" || failed "lost: the lost lease was not said"
  grep -q "goes to the shared store at the next start" "$dir/lost.txt" ||
    failed "lost: the leader did not say where its decision went"
  grep -q '"created"' "$dir/local.json" || failed "lost: the decision was not kept locally"
  start_redis "$dir/redis_back" || failed "no redis-server"
  url="redis://127.0.0.1:$REDIS_PORT/0"
  "$tune" "$model" "${args[@]}" --time-budget 6 --cache "$url" --cache-local "$dir/local.json" \
    >"$dir/lost_next.txt" 2>&1 || failed "lost_next: exit code $?"
  hit lost_next || failed "lost_next: the local file did not serve"
  grep -q "was pushed to it" "$dir/lost_next.txt" || failed "lost_next: nothing was pushed"
  "$tune" "$model" "${args[@]}" --time-budget 6 --cache "$url" >"$dir/lost_other.txt" 2>&1 ||
    failed "lost_other: exit code $?"
  hit lost_other || failed "lost_other: another machine did not find the pushed decision"
  stop_redis
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit $fail
