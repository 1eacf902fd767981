#!/usr/bin/env bash
# A load test of examples/inference_server.cpp: THREADS callers send REQUESTS requests each to the
# winner of each backend family (the default candidates' selection, then --family aoti, onnx and
# openvino: that family's fastest), after a warm-up in which every caller calls. It must hold: no
# error, every checked output (one request in ten) equal to the baseline's within the winner's
# tolerance, and the resident memory after the warm-up grown by less than 5 % at the end.
#   check_load.sh INFERENCE_SERVER MODEL DIR THREADS REQUESTS --input SHAPE [--input SHAPE ...]
set -u
server=$1 model=$2 dir=$3 threads=$4 requests=$5
shift 5
rm -rf "$dir" && mkdir -p "$dir"
fail=0
for family in selected aoti onnx openvino; do
  select=()
  [ "$family" = selected ] || select=(--family "$family")
  out="$dir/$family.txt"
  "$server" "$model" "$@" --cache "$dir/$family-cache.json" --threads "$threads" \
    --requests "$requests" --warm-up 20 --check-every 10 --time-budget 10 "${select[@]}" \
    >"$out" 2>&1
  code=$?
  echo "--- $family (exit $code):"
  grep -E "^(start-up:|served |latency:|memory:|checked:|errors:)" "$out"
  [ "$code" -eq 0 ] || { tail -5 "$out"; echo "FAIL: $family: exit code $code"; fail=1; }
  grep -Eq "^served $((threads * requests)) requests from $threads threads" "$out" ||
    { echo "FAIL: $family did not serve $((threads * requests)) requests"; fail=1; }
  grep -Eq "^errors: 0$" "$out" || { echo "FAIL: $family: requests failed"; fail=1; }
  grep -Eq "^checked: [1-9][0-9]* requests against the baseline, 0 differed" "$out" ||
    { echo "FAIL: $family: outputs were not checked, or differed"; fail=1; }
  growth=$(sed -nE 's/^memory: .*\(([-+][0-9.]+) %\)$/\1/p' "$out")
  if [ -z "$growth" ] || ! awk -v g="$growth" 'BEGIN { exit !(g < 5.0) }'; then
    echo "FAIL: $family: resident memory grew by ${growth:-?} % after the warm-up (limit 5 %)"
    fail=1
  fi
  if [ "$family" != selected ]; then
    prefix=$(case "$family" in aoti) echo AOTInductor ;; onnx) echo OnnxRuntime ;;
                               openvino) echo OpenVino ;; esac)
    grep -Eq "^start-up: $prefix\(" "$out" ||
      { echo "FAIL: --family $family did not serve a $prefix session"; fail=1; }
  fi
done
[ "$fail" -eq 0 ] && echo "PASS"
exit $fail
