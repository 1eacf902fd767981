#!/usr/bin/env python3
"""What a fleet start costs: N aitune-tune processes started at once on one model, each a machine
of the fleet (a digest memo of its own), sharing one Redis against each with its own cache file,
on a cold store (nothing tuned yet) and a warm one (the decision stored).

Per batch: the time until each process has its pick (its exit: aitune-tune tunes or reuses, then
reports), median and max, and the CPU-seconds of all its processes (user + system, from wait4),
with how many tuned and how many reused. A shared cold store should tune once: the followers wait
for the leader's decision and reuse it. The check printed at the end is issue 68's: on a cold
store the fleet of 8 spends at most the CPU-seconds of one tuning process (cold, own file, N=1)
plus 7 x 1.2 x one warm local-hit process (warm, own file, N=1). Each cell runs --rounds times
(alternating which cache goes first); a row gives the medians over the rounds.

Each process stands for a machine of its own, but N of them share this machine's cores: with two
LibTorch threads each, OpenMP threads spin for cores the other processes hold, CPU-seconds no
machine of a fleet spends (8 warm hits at once cost 3 to 4 times 8 hits alone). So every process
runs LibTorch at --torch-threads intra-op threads (OMP_NUM_THREADS; default 1: no thread waits
for another, and CPU-seconds count work); 0 leaves LibTorch's default, to show what sharing the
cores costs.

    tools/bench.sh fleet           (builds aitune-tune and makes the models first)
    python3 tools/bench_fleet.py --tune build/ci/examples/aitune-tune \
        --model resnet18=MODELS/resnet18.pt:1x3x224x224 --processes 1,4,8 --rounds 2 \
        --json out.json
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


def redis_command(port, *words):
    """One command over RESP; returns the first line of the answer."""
    request = f"*{len(words)}\r\n" + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)
    with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
        connection.sendall(request.encode())
        return connection.recv(256).split(b"\r\n", 1)[0].decode()


def start_redis(folder):
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", folder, "--logfile", os.path.join(folder, "redis.log")])
    for _ in range(200):
        try:
            if redis_command(port, "PING") == "+PONG":
                return server, port
        except OSError:
            time.sleep(0.05)
    server.kill()
    sys.exit("redis-server did not answer")


def batch(commands, environments, folder, label):
    """Starts every command at once; returns each process's (seconds to exit, CPU-seconds,
    tuned, reused)."""
    start = time.monotonic()
    running = {}
    for index, (command, environment) in enumerate(zip(commands, environments)):
        log = open(os.path.join(folder, f"{label}_{index}.txt"), "w")
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env=environment)
        running[process.pid] = log
    results = []
    while running:
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue  # not one of this batch's (the Redis server, had it died)
        seconds = time.monotonic() - start
        log = running.pop(pid)
        log.close()
        with open(log.name) as text:
            output = text.read()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{label}: a process failed ({status}):\n{output[-2000:]}")
        reused = "from the tuning cache" in output
        tuned = not reused and "measuring " in output
        results.append((seconds, usage.ru_utime + usage.ru_stime, tuned, reused))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", required=True)
    parser.add_argument("--model", action="append", required=True,
                        help="NAME=PATH:INPUT (repeatable)")
    parser.add_argument("--processes", default="1,4,8")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="LibTorch's intra-op threads in each process (0: its default)")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is missing: tools/install-deps.sh")
    counts = [int(n) for n in args.processes.split(",")]

    if args.torch_threads > 0:
        os.environ["OMP_NUM_THREADS"] = str(args.torch_threads)
    folder = tempfile.mkdtemp(prefix="aitune_fleet_")
    server, port = start_redis(folder)
    url = f"redis://127.0.0.1:{port}/0"
    rows = []
    try:
        for spec in args.model:
            name, rest = spec.split("=", 1)
            path, shape = rest.rsplit(":", 1)
            base = [args.tune, path, "--input", shape]
            work = os.path.join(folder, name)
            os.makedirs(work)

            def machine(index, state, work=work):
                """A machine's own folder: its cache file and its digest memo (XDG)."""
                home = os.path.join(work, f"{state}_{index}")
                shutil.rmtree(home, ignore_errors=True)
                os.makedirs(home)
                environment = dict(os.environ, XDG_CACHE_HOME=os.path.join(home, "xdg"))
                if state == "warm":
                    shutil.copytree(os.path.join(work, "warm_xdg"), environment["XDG_CACHE_HOME"])
                    for suffix in ["", ".digests"]:
                        shutil.copy(os.path.join(work, "warm.json" + suffix),
                                    os.path.join(home, "cache.json" + suffix))
                return os.path.join(home, "cache.json"), environment

            # One tuning fills a file and Redis at once (a local file in front); one hit each
            # side then warms the digest memos (a file changed in the last 2 s is not kept).
            warm_env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "warm_xdg"))
            warm_file = os.path.join(work, "warm.json")
            print(f"{name}: one tuning to warm the stores", flush=True)
            subprocess.run(base + ["--cache", url, "--cache-local", warm_file], check=True,
                           capture_output=True, env=warm_env)
            time.sleep(2.1)
            subprocess.run(base + ["--cache", warm_file], check=True, capture_output=True)
            subprocess.run(base + ["--cache", url], check=True, capture_output=True,
                           env=warm_env)
            batches = {}  # (count, state, side) -> one result list per round
            for round_index in range(args.rounds):
                sides = ["files", "redis"] if round_index % 2 == 0 else ["redis", "files"]
                for count in counts:
                    for state in ["cold", "warm"]:
                        if state == "warm":  # the cold Redis side ran first: fill it again
                            subprocess.run(base + ["--cache", url, "--cache-local", warm_file],
                                           check=True, capture_output=True, env=warm_env)
                        for side in sides:
                            if side == "redis" and state == "cold":
                                redis_command(port, "FLUSHALL")
                            commands, environments = [], []
                            for index in range(count):
                                cache, environment = machine(index, state)
                                commands.append(
                                    base + ["--cache", url if side == "redis" else cache])
                                environments.append(environment)
                            results = batch(commands, environments, work,
                                            f"{side}_{state}_{count}_{round_index}")
                            batches.setdefault((count, state, side), []).append(results)
                            print(f"{name:<20} round {round_index + 1} N={count} {state} "
                                  f"{side:<6} max {max(r[0] for r in results):6.1f} s, CPU "
                                  f"{sum(r[1] for r in results):7.1f} s, tuned "
                                  f"{sum(r[2] for r in results)}", flush=True)
            for (count, state, side), rounds in batches.items():
                rows.append({
                    "model": name, "processes": count, "store": state, "cache": side,
                    "serves_median_s": statistics.median(
                        statistics.median(r[0] for r in results) for results in rounds),
                    "serves_max_s": statistics.median(
                        max(r[0] for r in results) for results in rounds),
                    "cpu_s": statistics.median(sum(r[1] for r in results) for results in rounds),
                    "tuned": sum(r[2] for results in rounds for r in results),
                    "reused": sum(r[3] for results in rounds for r in results),
                    "starts": sum(len(results) for results in rounds),
                    "rounds": [[{"serves_s": r[0], "cpu_s": r[1]} for r in results]
                               for results in rounds],
                })
    finally:
        server.kill()
        server.wait()

    def cell(model, count, state, side):
        return next(r for r in rows if (r["model"], r["processes"], r["store"], r["cache"]) ==
                    (model, count, state, side))

    summary = {"machine": cpu_line(), "cores": os.cpu_count(), "rounds": args.rounds,
               "torch_threads": args.torch_threads or "default", "rows": rows,
               "checks": []}
    print(f"\n{summary['machine']}, {os.cpu_count()} cores; each process a machine of the fleet;"
          f" medians of {args.rounds} round(s); LibTorch threads per process: "
          f"{summary['torch_threads']}")
    print(f"{'model':<20} {'N':>2} {'store':<5} {'cache':<10} {'serves median':>14} "
          f"{'max':>8} {'CPU-s':>8} {'tuned':>8} {'reused':>8}")
    for row in rows:
        cache = "one Redis" if row["cache"] == "redis" else "own files"
        print(f"{row['model']:<20} {row['processes']:>2} {row['store']:<5} {cache:<10} "
              f"{row['serves_median_s']:>13.1f}s {row['serves_max_s']:>7.1f}s "
              f"{row['cpu_s']:>8.1f} {row['tuned']:>4}/{row['starts']:<3} "
              f"{row['reused']:>4}/{row['starts']:<3}")
    fleet = max(counts)
    if 1 in counts and fleet > 1:
        for model in dict.fromkeys(r["model"] for r in rows):
            one_tuning = cell(model, 1, "cold", "files")["cpu_s"]
            one_hit = cell(model, 1, "warm", "files")["cpu_s"]
            bound = one_tuning + (fleet - 1) * 1.2 * one_hit
            spent = cell(model, fleet, "cold", "redis")["cpu_s"]
            own = cell(model, fleet, "cold", "files")["cpu_s"]
            check = {"model": model, "fleet": fleet, "cold_redis_cpu_s": spent,
                     "bound_cpu_s": bound, "cold_own_files_cpu_s": own, "holds": spent <= bound}
            summary["checks"].append(check)
            print(f"{model}: a cold fleet of {fleet} on one Redis spent {spent:.1f} CPU-s; the "
                  f"bound (one tuning {one_tuning:.1f} + {fleet - 1} x 1.2 x one warm hit "
                  f"{one_hit:.1f}) is {bound:.1f}: {'holds' if check['holds'] else 'EXCEEDED'}; "
                  f"with own files {own:.1f} CPU-s")
    with open(args.json, "w") as out:
        json.dump(summary, out, indent=2)
    shutil.rmtree(folder, ignore_errors=True)
    sys.exit(0 if all(c["holds"] for c in summary["checks"]) else 1)


if __name__ == "__main__":
    main()
