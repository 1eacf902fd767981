# Sourced by the scripts that test a Redis tuning cache: a redis-server of the test's own, on a
# free loopback port, in a folder of its own, stopped by stop_redis (and at the script's exit).
#   start_redis DIR [CONFIG LINE...]   sets REDIS_PORT and REDIS_PID; waits until it answers
#   stop_redis                         kills it (SIGCONT first, for a paused one)
# redis_missing says whether to skip (redis-server absent and AITUNE_REQUIRE_REDIS unset); with
# AITUNE_REQUIRE_REDIS=1 an absent server is a failure.
redis_missing() {
  command -v redis-server >/dev/null && return 1
  if [ "${AITUNE_REQUIRE_REDIS:-0}" = 1 ]; then
    echo "FAIL: redis-server is missing (AITUNE_REQUIRE_REDIS=1)"
    return 1
  fi
  echo "note: redis-server is missing: the Redis part is skipped"
  return 0
}

start_redis() {
  local folder=$1
  shift
  mkdir -p "$folder"
  REDIS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  {
    echo "port $REDIS_PORT"
    echo "bind 127.0.0.1"
    echo 'save ""'
    echo "appendonly no"
    echo "dir $folder"
    echo "logfile $folder/redis.log"
    printf '%s\n' "$@"
  } >"$folder/redis.conf"
  redis-server "$folder/redis.conf" &
  REDIS_PID=$!
  trap stop_redis EXIT
  for _ in $(seq 100); do
    redis-cli -p "$REDIS_PORT" PING 2>/dev/null | grep -Eq "PONG|NOAUTH" && return 0
    sleep 0.05
  done
  echo "FAIL: redis-server did not answer on port $REDIS_PORT"
  return 1
}

stop_redis() {
  [ -n "${REDIS_PID:-}" ] || return 0
  kill -CONT "$REDIS_PID" 2>/dev/null
  kill -9 "$REDIS_PID" 2>/dev/null
  wait "$REDIS_PID" 2>/dev/null
  REDIS_PID=
}
