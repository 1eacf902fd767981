#!/usr/bin/env python3
"""What the int8 variants cost a tuning: aitune-tune under --accuracy with its default pool (every
int8 variant of the archive in) against the same pool named without them (--backends: the
archive's AOTInductor compilations but aoti_int8, and each runtime session at one thread and at
the runtime's default, OpenVINO in bf16 too where the CPU has it), on the same samples and budget,
alternated tuning by tuning so that drift falls on both.

A model trained on the synthetic task (make_models.py --task synthetic: <name>.samples/ beside its
archive) is tuned on those samples under --accuracy; one with random weights on its .shape inputs,
without top-1 where its outputs are not class scores (as tools/bench_peers.py judges them).

Prints each model's tuning times (median and range) with and without, and the ratio of the sums
of means over the models with a bootstrap 95 % interval over the tunings; writes them as JSON.

Usage: bench_int8_tuning_time.py --tune AITUNE_TUNE --models-dir DIR [--tunings N]
       [--accuracy cosine=0.999,top1=98%] [--json FILE] [names...]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import synthetic_task
from bench_peers import aoti_names, has_class_scores, read_inputs, input_args

MODELS = ["resnet18", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0",
          "transformer_encoder"]
POOLS = ("with int8", "without")


def cpu_has_bf16():
    """Whether OpenVINO runs bf16 here, as the tuner's default pool decides (AVX-512 bf16, AMX)."""
    with open("/proc/cpuinfo") as f:
        return bool(set(f.read().split()) & {"avx512_bf16", "amx_bf16"})


def pool_without_int8(archive):
    """--backends naming the default pool under a budget less its int8 variants."""
    sessions = ["onnx", "openvino"] + (["openvino_bf16"] if cpu_has_bf16() else [])
    return ",".join([*aoti_names(archive), *(f"{s}{t}" for s in sessions for t in ("@1", ""))])


def tuning_args(models_dir, name, accuracy):
    """aitune-tune's inputs and --accuracy for `name`."""
    samples = synthetic_task.sample_files(models_dir, name)
    if samples:
        return [a for f in samples for a in ("--sample", f)], accuracy
    if not has_class_scores(name):
        accuracy = ",".join(p for p in accuracy.split(",") if not p.strip().startswith("top1="))
    return input_args(read_inputs(models_dir, name)), accuracy


def tune_once(tuner, archive, inputs, accuracy, more, report):
    command = [tuner, archive, "--quiet", "--accuracy", accuracy, "--json", report, *inputs, *more]
    start = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"aitune-tune failed ({done.returncode}): {' '.join(command)}\n"
                         f"{done.stdout[-3000:]}")
    with open(report) as f:
        return seconds, json.load(f)["selected"]


def ratio_of_sums(times, names):
    return (sum(statistics.mean(times[n][POOLS[0]]) for n in names)
            / sum(statistics.mean(times[n][POOLS[1]]) for n in names))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=MODELS, help="models (default: the five)")
    parser.add_argument("--tune", required=True, help="the aitune-tune executable")
    parser.add_argument("--models-dir", required=True, help="the archives' folder")
    parser.add_argument("--tunings", type=int, default=6, help="tunings of each pool (default 6)")
    parser.add_argument("--accuracy", default="cosine=0.999,top1=98%",
                        help="aitune-tune's --accuracy (default cosine=0.999,top1=98%%)")
    parser.add_argument("--json", help="where to write the times")
    args = parser.parse_args()
    if args.tunings < 2:
        parser.error("--tunings must be 2 or more")
    missing = [n for n in args.names
               if not os.path.exists(os.path.join(args.models_dir, f"{n}.pt2"))]
    if missing:
        parser.error(f"no archive for {', '.join(missing)} in {args.models_dir}")
    times = {n: {pool: [] for pool in POOLS} for n in args.names}
    with tempfile.TemporaryDirectory() as folder:
        for tuning in range(args.tunings):
            for name in args.names:
                archive = os.path.join(args.models_dir, f"{name}.pt2")
                inputs, accuracy = tuning_args(args.models_dir, name, args.accuracy)
                more = {POOLS[0]: [], POOLS[1]: ["--backends", pool_without_int8(archive)]}
                for pool in (POOLS if tuning % 2 == 0 else POOLS[::-1]):
                    seconds, selected = tune_once(args.tune, archive, inputs, accuracy,
                                                  more[pool], os.path.join(folder, "report.json"))
                    times[name][pool].append(seconds)
                    print(f"tuning {tuning} {name:20s} {pool:9s} {seconds:6.1f} s  selected "
                          f"{selected}", flush=True)
    draws = random.Random(0)
    boot = sorted(ratio_of_sums({n: {p: [draws.choice(v) for _ in v] for p, v in t.items()}
                                 for n, t in times.items()}, args.names) for _ in range(2000))
    interval = [boot[49], boot[1949]]
    print(f"\n{'model':20s} {'with int8 (s): median [range]':31s} without (s): median [range]")
    for name in args.names:
        cells = [f"{statistics.median(v):5.1f} [{min(v):.1f}-{max(v):.1f}]"
                 for v in times[name].values()]
        print(f"{name:20s} {cells[0]:31s} {cells[1]}")
    sums = [sum(statistics.mean(times[n][p]) for n in args.names) for p in POOLS]
    ratio = ratio_of_sums(times, args.names)
    print(f"sums of means {sums[0]:.1f} against {sums[1]:.1f} s: {ratio:.3f}x "
          f"[{interval[0]:.3f}, {interval[1]:.3f}] (95 % bootstrap over the tunings)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"accuracy": args.accuracy, "tunings": args.tunings, "seconds": times,
                       "ratio_of_sums_of_means": ratio, "interval_95": interval}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
