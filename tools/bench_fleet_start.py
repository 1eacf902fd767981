#!/usr/bin/env python3
"""What a fleet start costs with a warm shared store: N aitune-tune processes started at once,
each served its pick from a Redis (one server, as a fleet shares) against the same N processes
each with a warm local cache file (one file per process, as each machine has its own).

Both caches are filled by one tuning first; then rounds alternate which side goes first, and
each round starts N processes together and times each to its exit. Prints a table and writes
JSON: per side the median and p90 of the batch time (first start to last exit) and of the
processes' times, and per round the ratio Redis / files of the batch times, with its median and
the range of the ratios (with 7 rounds, the interval between the smallest and the largest holds
the median ratio with 98 % confidence; an exact order-statistic interval).

    tools/bench.sh fleet-start     (builds aitune-tune and makes SqueezeNet 1.1 first)
    python3 tools/bench_fleet_start.py --tune build/ci/examples/aitune-tune \
        --model MODEL.pt --input 1x3x224x224 --processes 8 --rounds 7 --json out.json
"""
import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_line():
    model, flags = platform.processor(), set()
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    wanted = ["amx_bf16", "amx_int8", "avx2", "avx512_bf16", "avx512_vnni", "avx512f"]
    return f"{model}, ISA: {' '.join(f for f in wanted if f in flags)}"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def start_redis(folder):
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", folder, "--logfile", os.path.join(folder, "redis.log")])
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as connection:
                connection.sendall(b"PING\r\n")
                if connection.recv(16).startswith(b"+PONG"):
                    return server, port
        except OSError:
            time.sleep(0.05)
    server.kill()
    sys.exit("redis-server did not answer")


def batch(commands, folder, label):
    """Starts every command at once; returns (batch seconds, each process's seconds, hits)."""
    start = time.monotonic()
    running = []
    for index, command in enumerate(commands):
        log = open(os.path.join(folder, f"{label}_{index}.txt"), "w")
        running.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log))
    times, hits = [], 0
    for process, log in running:
        code = process.wait()
        times.append(time.monotonic() - start)
        log.close()
        with open(log.name) as text:
            output = text.read()
        if code != 0:
            sys.exit(f"{label}: a process failed (exit {code}):\n{output[-2000:]}")
        hits += "from the tuning cache" in output
    return max(times), times, hits


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", default="1x3x224x224")
    parser.add_argument("--backends", default="frozen,optimized,channels_last")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is missing: tools/install-deps.sh")

    folder = tempfile.mkdtemp(prefix="aitune_fleet_")
    server, port = start_redis(folder)
    os.environ["XDG_CACHE_HOME"] = os.path.join(folder, "xdg")  # the Redis side's digest memo
    url = f"redis://127.0.0.1:{port}/0"
    base = [args.tune, args.model, "--input", args.input, "--backends", args.backends,
            "--time-budget", "6"]
    try:
        # One tuning fills each cache; every process's local file is a copy of the warm one
        # (its digest memo too), and the Redis side's memo is warmed by one hit.
        warm_file = os.path.join(folder, "warm.json")
        subprocess.run(base + ["--cache", warm_file], check=True, capture_output=True)
        subprocess.run(base + ["--cache", url], check=True, capture_output=True)
        time.sleep(2.1)  # a file changed in the last 2 s is not remembered in the memo
        subprocess.run(base + ["--cache", warm_file], check=True, capture_output=True)
        subprocess.run(base + ["--cache", url], check=True, capture_output=True)
        files = []
        for index in range(args.processes):
            path = os.path.join(folder, f"machine_{index}.json")
            shutil.copy(warm_file, path)
            shutil.copy(warm_file + ".digests", path + ".digests")
            files.append(path)
        sides = {
            "files": [base + ["--cache", path] for path in files],
            "redis": [base + ["--cache", url] for _ in files],
        }
        results = {side: {"batch_s": [], "process_s": [], "hits": 0} for side in sides}
        ratios = []
        for round_index in range(args.rounds):
            order = ["files", "redis"] if round_index % 2 == 0 else ["redis", "files"]
            batch_s = {}
            for side in order:
                seconds, each, hits = batch(sides[side], folder, f"{side}_{round_index}")
                batch_s[side] = seconds
                results[side]["batch_s"].append(seconds)
                results[side]["process_s"].extend(each)
                results[side]["hits"] += hits
            ratios.append(batch_s["redis"] / batch_s["files"])
            print(f"round {round_index + 1}: files {batch_s['files']:.2f} s, "
                  f"redis {batch_s['redis']:.2f} s, ratio {ratios[-1]:.3f}", flush=True)
    finally:
        server.kill()
        server.wait()

    summary = {
        "machine": cpu_line(), "cores": os.cpu_count(), "processes": args.processes,
        "rounds": args.rounds, "model": os.path.basename(args.model), "input": args.input,
        "sides": {}, "ratio_redis_over_files": {
            "median": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
            "each": ratios},
    }
    print(f"\n{args.processes} processes at once, {args.rounds} rounds; {summary['machine']}, "
          f"{os.cpu_count()} cores")
    print(f"{'cache':<8} {'batch median':>13} {'batch p90':>10} {'process median':>15} "
          f"{'process p90':>12} {'hits':>6}")
    for side, result in results.items():
        row = {
            "batch_median_s": statistics.median(result["batch_s"]),
            "batch_p90_s": percentile(result["batch_s"], 0.9),
            "process_median_s": statistics.median(result["process_s"]),
            "process_p90_s": percentile(result["process_s"], 0.9),
            "hits": result["hits"], "starts": len(result["process_s"]),
        }
        summary["sides"][side] = row
        print(f"{side:<8} {row['batch_median_s']:>12.2f}s {row['batch_p90_s']:>9.2f}s "
              f"{row['process_median_s']:>14.2f}s {row['process_p90_s']:>11.2f}s "
              f"{row['hits']:>3}/{row['starts']}")
    ratio = summary["ratio_redis_over_files"]
    print(f"Redis / files, batch time per round: median {ratio['median']:.3f} "
          f"(range {ratio['min']:.3f} to {ratio['max']:.3f})")
    with open(args.json, "w") as out:
        json.dump(summary, out, indent=2)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
