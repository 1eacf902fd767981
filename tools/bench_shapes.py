#!/usr/bin/env python3
"""The shapes benchmark: the price of a range (issue 50, item 4).

A model exported for a range of sequence lengths (a dynamic axis) can run slower than the same
model exported for one length. This measures how much, per runtime, on BERT (BertModel) and
GPT-2 (GPT2Model, use_cache=False) built from their transformers configs at their default sizes
(random weights, seeded; no download), eval mode, fp32, batch 1, inputs input_ids and
attention_mask (all ones) by name:

1. each model is exported by the repository's exporter (tools/aitune_export, as
   tools/export_model.py does) once with the sequence length as a range (--dynamic
   input_ids:1:8..256 and attention_mask:1:8..256, example length 128) and once statically at
   each measured length (32, 128, 256), each archive with its AOTInductor compilation
   (aoti_default; --aoti adds freezing), its ONNX model and its OpenVINO model (bounded to the
   range, or static), made and checked as the exporter makes them; the archives are kept in
   --work-dir, and a rerun reuses them; each export runs in a process of its own;
2. the contestants, per runtime family - ONNX Runtime (CPU provider, default session options),
   OpenVINO (CPU plugin, INFERENCE_PRECISION_HINT f32, otherwise its defaults) and AOTInductor
   (torch._inductor's package loader) - are the dynamic model at each length and each static
   model at its own length; eager PyTorch runs at each length as the reference. Every runtime
   gets torch.get_num_threads() threads (ONNX Runtime's intra_op_num_threads, OpenVINO's
   INFERENCE_NUM_THREADS, torch's own);
3. each compiled model's outputs are compared with eager PyTorch's at the same inputs (largest
   absolute difference relative to the largest magnitude), so that a broken export shows;
4. all contestants of a model are timed in shuffled interleaved rounds (every contestant once per
   round, in a new random order each round, seeded), each a block of --calls calls of which the
   first is discarded (it pays for the caches the previous contestant evicted, and for a dynamic
   model's change of shape) and the rest averaged;
5. prints, per model, a table with a row per runtime and length: the dynamic model's median (and
   p90) latency, the static model's, the paired ratio dynamic / static (per round, then its
   median) with its 95 % interval, the static model at the padding length's (256: what padding
   every input to 256 costs at any length) and the paired ratio dynamic / padded with its
   interval; then, per length, which runtime's dynamic model is fastest (eager PyTorch counted),
   with the paired ratio of the fastest to the second, and whether the winner changes between
   short and long sequences. The machine (CPU model, ISA flags), the versions and the thread
   count are printed beside the tables; the same goes to JSON.

Usage: tools/bench_shapes.py [--models bert,gpt2] [--lengths 32,128,256] [--range 8..256]
       [--pad 256] [--rounds 20] [--calls 3] [--warmup 3] [--aoti default[,freezing]]
       [--small] [--work-dir DIR] [--json FILE] [--seed 0] [--export-only]
--small makes tiny configs (2 layers, hidden 64), for a quick check that everything runs.
"""
import argparse
import gc
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time


# name -> (transformers model class, config class, default config arguments, small ones, vocab)
MODELS = {
    "bert": ("BertModel", "BertConfig", {},
             {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2,
              "intermediate_size": 256}, 30522),
    "gpt2": ("GPT2Model", "GPT2Config", {"use_cache": False},
             {"use_cache": False, "n_layer": 2, "n_embd": 64, "n_head": 2}, 50257),
}
EXAMPLE_LENGTH = 128  # the dynamic export's example, as a user exporting the range gives one
FAMILIES = {"onnxruntime": "ONNX Runtime", "openvino": "OpenVINO",
            "aoti_default": "AOTInductor", "aoti_freezing": "AOTInductor freezing",
            "eager": "eager PyTorch"}


def log(line):
    print(line, file=sys.stderr, flush=True)


# --- the models and their exports -------------------------------------------------------------

def build_model(name, small):
    import torch
    import transformers
    model_class, config_class, config, small_config, _ = MODELS[name]
    torch.manual_seed(0)  # the same random weights in every process
    config = getattr(transformers, config_class)(**(small_config if small else config))
    return getattr(transformers, model_class)(config).eval()


def specs_at(name, length):
    from aitune_export import parse_input
    vocab = MODELS[name][4]
    return [parse_input(f"input_ids=1x{length}:int64[0,{vocab})"),
            parse_input(f"attention_mask=1x{length}:int64[1,2)")]


def archive_path(work_dir, name, small, shape):
    """shape: "dynamic" or a length."""
    kind = f"range{shape}" if isinstance(shape, str) else f"static{shape}"
    return os.path.join(work_dir, f"{name}{'-small' if small else ''}-{kind}.pt2")


def export_one(job):
    """In a process of its own: one archive, made by the exporter; prints one RESULT line."""
    import torch
    from aitune_export import export, make_inputs, parse_dynamic
    torch.set_num_threads(job["threads"])
    module = build_model(job["model"], job["small"])
    dynamic = []
    if job["range"]:
        low, high = job["range"]
        dynamic = [parse_dynamic(f"{n}:1:{low}..{high}") for n in ("input_ids", "attention_mask")]
    specs = specs_at(job["model"], job["length"])
    inputs = make_inputs(specs, "cpu", seed=0)
    start = time.monotonic()
    made, failed = export(module, inputs, job["out"], job["variants"], "cpu", log=log,
                          specs=specs, dynamic=dynamic)
    print("RESULT " + json.dumps({"made": made, "failed": failed,
                                  "export_s": time.monotonic() - start}), flush=True)


def archive_json(archive):
    from bench_peers import archive_record
    return json.loads(archive_record(archive, "extra/aitune.json"))


def ensure_archive(args, name, shape, variants):
    """The archive for `name` at `shape` ("dynamic" or a length), exported unless one with every
    variant tried is there: {path, made, failed, export_s, reused} or {path, error}."""
    dynamic = shape == "dynamic"
    path = archive_path(args.work_dir, name, args.small,
                        f"{args.range[0]}-{args.range[1]}" if dynamic else shape)
    note = path + ".export.json"  # the export's time and outcome, beside the archive
    if os.path.exists(path):
        try:
            record = archive_json(path)
            tried = set(record["variants"]) | set(record["failed"])
            if all(v in tried for v in variant_names(variants)):
                saved = {}
                if os.path.exists(note):
                    with open(note) as f:
                        saved = json.load(f)
                return {"path": path, "made": sorted(record["variants"]),
                        "failed": record["failed"], "export_s": saved.get("export_s"),
                        "reused": True}
        except Exception as error:  # an unreadable archive is made again
            log(f"  {path}: unreadable ({error}), exported again")
    job = {"model": name, "small": args.small, "out": path, "variants": variants,
           "range": list(args.range) if dynamic else None,
           "length": EXAMPLE_LENGTH if dynamic else shape, "threads": args.threads}
    log(f"  exporting {os.path.basename(path)} ({', '.join(variants)})")
    start = time.monotonic()
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--export-one",
                           json.dumps(job)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    for line in done.stderr.splitlines():
        if line.startswith(path):  # the exporter's own lines
            log(f"    {line[len(path) + 2:]}")
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if not results or not os.path.exists(path):
        tail = [line for line in done.stderr.splitlines() if line.strip()][-3:]
        return {"path": path, "error": f"the export failed (exit {done.returncode}): "
                                       f"{' | '.join(tail)[-600:]}"}
    result = json.loads(results[-1][len("RESULT "):])
    result["export_wall_s"] = time.monotonic() - start
    with open(note, "w") as f:
        json.dump(result, f)
    record = archive_json(path)
    return {"path": path, "made": sorted(record["variants"]), "failed": record["failed"],
            "export_s": result["export_s"], "reused": False}


def variant_names(variants):
    """The exporter's variant names -> the names they are recorded under."""
    from aitune_export.aoti_variant import AOTI_VARIANTS
    return [AOTI_VARIANTS[v][0] if v in AOTI_VARIANTS else v for v in variants]


# --- running each runtime ---------------------------------------------------------------------
# Each loader returns bind(inputs) -> call, inputs being {name: tensor}; a dynamic model's loader
# is bound once per length, so that one session, compiled model or runner serves every length.

def onnxruntime_loader(archive, threads):
    import onnxruntime
    from bench_peers import archive_record
    from aitune_export import ONNX_RECORD
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(archive_record(archive, ONNX_RECORD), options,
                                           providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]

    def bind(inputs):
        feed = {n: inputs[n].numpy() for n in names}
        return lambda: session.run(None, feed)
    return bind


def openvino_loader(archive, threads):
    import numpy
    import openvino
    from bench_peers import archive_record
    from aitune_export import OPENVINO_RECORDS
    core = openvino.Core()
    xml, weights = (archive_record(archive, record) for record in OPENVINO_RECORDS)
    model = core.read_model(xml.decode(), openvino.Tensor(numpy.frombuffer(weights, numpy.uint8)))
    names = [next(iter(sorted(port.get_names()))) for port in model.inputs]
    # The archive's model is bounded to the range (or static), as the exporter saved it.
    shapes = {n: str(port.get_partial_shape()) for n, port in zip(names, model.inputs)}
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                 "INFERENCE_NUM_THREADS": threads})
    request = compiled.create_infer_request()
    outputs = len(compiled.outputs)

    def bind(inputs):
        arrays = [inputs[n].numpy() for n in names]

        def call():
            request.infer(arrays)
            return [request.get_output_tensor(i).data.copy() for i in range(outputs)]
        return call
    bind.shapes = shapes
    return bind


def aoti_loader(archive, model_name):
    from torch._inductor.package import load_package
    compiled = load_package(archive, model_name=model_name)

    def bind(inputs):
        args = [inputs["input_ids"], inputs["attention_mask"]]  # the program's order
        return lambda: compiled(*args)
    return bind


def eager_loader(module):
    import torch

    def bind(inputs):
        def call():
            with torch.inference_mode():
                return module(**inputs)
        return call
    return bind


# --- statistics -------------------------------------------------------------------------------

def race(contestants, rounds, calls):
    """Shuffled interleaved rounds: per contestant key, per round, its block's calls in ms."""
    blocks = {key: [] for key in contestants}
    order = list(contestants)
    for done in range(rounds):
        random.shuffle(order)
        for key in order:
            call = contestants[key]
            block = []
            for _ in range(calls):
                start = time.perf_counter()
                call()
                block.append((time.perf_counter() - start) * 1e3)
            blocks[key].append(block)
        if (done + 1) % max(1, rounds // 5) == 0:
            log(f"  round {done + 1}/{rounds}")
    return blocks


def ratio(top, bottom):
    """The paired ratio top / bottom (per round, then the median) and its 95 % interval, as the
    tuner computes them (aitune_judge.median_interval)."""
    import aitune_judge
    if not top or not bottom:
        return None
    interval = aitune_judge.median_interval([t / b for t, b in zip(top, bottom)])
    return {"ratio": interval.median, "low": interval.low, "high": interval.high}


# --- one model --------------------------------------------------------------------------------

def bench_model(args, name):
    import torch
    from aitune_export import make_inputs
    from aitune_judge import p90
    from bench_peers import as_tensors, largest_difference
    log(f"== {name}{' (small)' if args.small else ''}")
    variants = ["onnx", "openvino", *args.aoti]
    lengths = sorted(set(args.lengths) | {args.pad})
    archives = {"dynamic": ensure_archive(args, name, "dynamic", variants)}
    for length in lengths:
        archives[length] = ensure_archive(args, name, length, variants)
    if args.export_only:
        return None
    families = ["onnxruntime", "openvino", *variant_names(args.aoti)]
    failures = []  # (what, cause)
    for archive in archives.values():
        if "error" in archive:
            failures.append((f"export {os.path.basename(archive['path'])}", archive["error"]))
        for variant, cause in archive.get("failed", {}).items():
            failures.append((f"{variant} of {os.path.basename(archive['path'])}", cause))

    module = build_model(name, args.small)
    inputs = {length: dict(zip(("input_ids", "attention_mask"),
                               make_inputs(specs_at(name, length), "cpu", seed=1)))
              for length in lengths}
    with torch.inference_mode():
        expected = {length: module(**inputs[length]) for length in lengths}

    def load(family, archive):
        made = {"onnxruntime": "onnx"}.get(family, family)
        if "error" in archive or made not in archive["made"]:
            return None
        start = time.monotonic()
        try:
            if family == "onnxruntime":
                bind = onnxruntime_loader(archive["path"], args.threads)
            elif family == "openvino":
                bind = openvino_loader(archive["path"], args.threads)
            else:
                bind = aoti_loader(archive["path"], family)
        except Exception as error:  # one runtime failing to load must not lose the others
            failures.append((f"{FAMILIES[family]} loading {os.path.basename(archive['path'])}",
                             f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"))
            return None
        log(f"  {FAMILIES[family]} {os.path.basename(archive['path'])}: loaded in "
            f"{time.monotonic() - start:.0f} s"
            + (f", inputs {bind.shapes}" if hasattr(bind, "shapes") else ""))
        return bind

    # Contestants: (family, "dynamic" | "static", length) -> call; eager PyTorch's are "dynamic"
    # (it takes every length), and its row's padded latency is eager's at the padding length.
    contestants = {("eager", "dynamic", length): eager_loader(module)(inputs[length])
                   for length in lengths}
    for family in families:
        bind = load(family, archives["dynamic"])
        for length in lengths:
            if bind is not None:
                contestants[(family, "dynamic", length)] = bind(inputs[length])
        for length in lengths:
            static = load(family, archives[length])
            if static is not None:
                contestants[(family, "static", length)] = static(inputs[length])
    # The outputs of each against eager PyTorch's; a contestant that cannot run is left out.
    differences = {}
    for key, call in list(contestants.items()):
        try:
            got = call()
            differences[key] = largest_difference(expected[key[2]], got)
            if len(as_tensors(got)) != len(as_tensors(expected[key[2]])):
                raise ValueError(f"{len(as_tensors(got))} outputs, eager PyTorch "
                                 f"{len(as_tensors(expected[key[2]]))}")
        except Exception as error:
            failures.append((f"{FAMILIES[key[0]]} {key[1]} at {key[2]}",
                             f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"))
            del contestants[key]
    for call in contestants.values():
        for _ in range(args.warmup):
            call()
    log(f"  racing {len(contestants)} contestants in {args.rounds} rounds of {args.calls} calls")
    start = time.monotonic()
    blocks = race(contestants, args.rounds, args.calls)
    race_s = time.monotonic() - start
    # A round's value: the mean of its block less the first call.
    times = {key: [statistics.fmean(b[1:]) for b in bs] for key, bs in blocks.items()}

    def summary(key):
        if key not in times:
            return None
        return {"median_ms": statistics.median(times[key]), "p90_ms": p90(times[key]),
                "first_call_median_ms": statistics.median(b[0] for b in blocks[key]),
                "difference": differences.get(key)}

    rows = []
    for family in [*families, "eager"]:
        padded_key = (family, "dynamic" if family == "eager" else "static", args.pad)
        for length in args.lengths:
            dynamic_key, static_key = (family, "dynamic", length), (family, "static", length)
            rows.append({
                "runtime": FAMILIES[family], "family": family, "length": length,
                "dynamic": summary(dynamic_key), "static": summary(static_key),
                "padded": summary(padded_key),
                "dynamic_vs_static": ratio(times.get(dynamic_key), times.get(static_key)),
                "dynamic_vs_padded": ratio(times.get(dynamic_key), times.get(padded_key))})
    winners = []
    for length in args.lengths:
        ranked = sorted((k for k in times if k[1] == "dynamic" and k[2] == length),
                        key=lambda k: statistics.median(times[k]))
        statics = sorted((k for k in times if k[1] == "static" and k[2] == length),
                         key=lambda k: statistics.median(times[k]))
        winner = {"length": length,
                  "ranking": [{"runtime": FAMILIES[k[0]],
                               "median_ms": statistics.median(times[k])} for k in ranked]}
        if len(ranked) > 1:
            winner["first_vs_second"] = ratio(times[ranked[0]], times[ranked[1]])
        if statics:
            winner["fastest_static"] = {"runtime": FAMILIES[statics[0][0]],
                                        "median_ms": statistics.median(times[statics[0]])}
        winners.append(winner)
    del contestants
    gc.collect()
    config = module.config
    return {"model": name, "class": type(module).__name__,
            "config": {k: getattr(config, k) for k in (
                "num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")},
            "parameters": sum(p.numel() for p in module.parameters()),
            "archives": {str(k): v for k, v in archives.items()},
            "race_s": race_s, "rows": rows, "winners": winners,
            "rounds_ms": {"/".join(map(str, key)): values for key, values in times.items()},
            "failures": [{"what": w, "cause": c} for w, c in failures]}


# --- printing ---------------------------------------------------------------------------------

def ms(summary):
    return f"{summary['median_ms']:9.2f} {summary['p90_ms']:8.2f}" if summary else \
        f"{'-':>9} {'-':>8}"


def ratio_text(value):
    if not value:
        return "-"
    return f"{value['ratio']:.3f} [{value['low']:.3f}, {value['high']:.3f}]"


def diff_text(summary):
    if not summary or summary.get("difference") is None:
        return "-"
    return f"{summary['difference']:.1e}"


def print_model(result, args):
    config = result["config"]
    print(f"\n{result['model']}: {result['class']}, {config['num_hidden_layers']} layers, hidden "
          f"{config['hidden_size']}, {result['parameters'] / 1e6:.1f} M parameters; batch 1, "
          f"fp32; range {args.range[0]}..{args.range[1]}, padded to {args.pad}; "
          f"{args.rounds} rounds x {args.calls} calls ({result['race_s']:.0f} s)")
    print(f"  {'runtime':<20} {'len':>4}  {'dynamic ms':>9} {'p90':>8}  {'static ms':>9} "
          f"{'p90':>8}  {'dynamic/static [95 % CI]':<24}  {'static-' + str(args.pad) + ' ms':>13}  "
          f"{'dynamic/padded [95 % CI]':<24}  {'diff dyn':>8} {'diff st':>8}")
    for row in result["rows"]:
        padded = row["padded"]
        print(f"  {row['runtime']:<20} {row['length']:>4}  {ms(row['dynamic'])}  "
              f"{ms(row['static'])}  {ratio_text(row['dynamic_vs_static']):<24}  "
              f"{padded['median_ms'] if padded else float('nan'):13.2f}  "
              f"{ratio_text(row['dynamic_vs_padded']):<24}  {diff_text(row['dynamic']):>8} "
              f"{diff_text(row['static']):>8}")
    print("  (eager PyTorch: one module at every length; its 'padded' is eager at "
          f"{args.pad}; diff: largest |output - eager| / largest |eager|)")
    print("  fastest dynamic model at each length (eager PyTorch counted):")
    firsts = []
    for winner in result["winners"]:
        ranking = winner["ranking"]
        if not ranking:
            continue
        firsts.append((winner["length"], ranking[0]["runtime"]))
        order = ", ".join(f"{r['runtime']} {r['median_ms']:.2f}" for r in ranking)
        versus = winner.get("first_vs_second")
        static = winner.get("fastest_static")
        print(f"    {winner['length']:>4}: {order}; 1st/2nd {ratio_text(versus)}"
              + (f"; fastest static export: {static['runtime']} {static['median_ms']:.2f} ms"
                 if static else ""))
    if firsts:
        changes = len({first for _, first in firsts}) > 1
        each = ", ".join(f"{length}: {first}" for length, first in firsts)
        print(f"  the winner {'changes' if changes else 'does not change'} between short and "
              f"long sequences ({each})")
    exports = []
    for shape, archive in result["archives"].items():
        if archive.get("export_s") is not None:
            exports.append(f"{'range' if shape == 'dynamic' else shape} "
                           f"{archive['export_s']:.0f} s"
                           f"{' (reused)' if archive.get('reused') else ''}")
    if exports:
        print(f"  export times (all variants): {', '.join(exports)}")
    for failure in result["failures"]:
        print(f"  FAILED {failure['what']}: {failure['cause']}")


def machine():
    """The CPU's model name, its instruction sets that decide reduced precision and the hardware
    threads (tools/bench_real.py's readers of /proc/cpuinfo)."""
    from bench_real import cpu_features, cpu_name
    return {"cpu": cpu_name(), "cpu_features": cpu_features(), "hardware_threads": os.cpu_count()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="bert,gpt2", help="comma-separated: bert, gpt2")
    parser.add_argument("--lengths", default="32,128,256", help="sequence lengths measured")
    parser.add_argument("--range", default="8..256", help="the dynamic export's range, MIN..MAX")
    parser.add_argument("--pad", type=int, default=256,
                        help="the padding length: its static model's latency at every length")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds (default 20)")
    parser.add_argument("--calls", type=int, default=3,
                        help="calls per contestant and round, the first discarded (default 3)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls of each first")
    parser.add_argument("--aoti", default="default",
                        help="AOTInductor variants, from default, freezing (default: default)")
    parser.add_argument("--small", action="store_true",
                        help="tiny configs (2 layers, hidden 64): a quick functional check")
    parser.add_argument("--work-dir", default="build/ci/bench/shapes-models",
                        help="where the exported archives are kept and reused")
    parser.add_argument("--json", default="build/ci/bench/shapes.json")
    parser.add_argument("--seed", type=int, default=0, help="seed of the rounds' orders")
    parser.add_argument("--export-only", action="store_true",
                        help="export the archives (or find them in --work-dir), measure nothing")
    parser.add_argument("--export-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.export_one:
        export_one(json.loads(args.export_one))
        return 0
    import torch
    args.threads = torch.get_num_threads()
    args.models = args.models.split(",")
    args.lengths = [int(n) for n in args.lengths.split(",")]
    args.aoti = args.aoti.split(",")
    match = re.fullmatch(r"(\d+)\.\.(\d+)", args.range)
    if not match:
        parser.error("--range takes MIN..MAX")
    args.range = (int(match.group(1)), int(match.group(2)))
    if any(m not in MODELS for m in args.models):
        parser.error(f"--models takes names from {', '.join(MODELS)}")
    if any(v not in ("default", "freezing") for v in args.aoti):
        parser.error("--aoti takes default, freezing")
    if not all(args.range[0] <= n <= args.range[1] for n in [*args.lengths, args.pad,
                                                             EXAMPLE_LENGTH]):
        parser.error(f"the lengths, --pad and the example length {EXAMPLE_LENGTH} must lie in "
                     "--range")
    if args.rounds < 6 or args.calls < 2:
        parser.error("--rounds takes 6 or more, --calls 2 or more")
    random.seed(args.seed)
    os.makedirs(args.work_dir, exist_ok=True)
    start = time.monotonic()
    results = [bench_model(args, name) for name in args.models]
    wall_s = time.monotonic() - start
    if args.export_only:
        log(f"exported in {wall_s / 60:.1f} min")
        return 0
    import onnxruntime
    import openvino
    import transformers
    box = machine()
    versions = {"torch": torch.__version__, "onnxruntime": onnxruntime.__version__,
                "openvino": openvino.__version__.split("-")[0],
                "transformers": transformers.__version__}
    print(f"machine: {box['cpu']}, {box['hardware_threads']} hardware threads, ISA: "
          f"{' '.join(box['cpu_features']) or 'no AVX2, AVX-512 or AMX'}")
    print(f"versions: {', '.join(f'{k} {v}' for k, v in versions.items())}; threads: "
          f"{args.threads} for every runtime (torch.get_num_threads(): torch's own, ONNX "
          f"Runtime's intra_op_num_threads, OpenVINO's INFERENCE_NUM_THREADS); OpenVINO f32; "
          f"wall time {wall_s / 60:.1f} min")
    for result in results:
        print_model(result, args)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json + ".tmp", "w") as f:
        json.dump({"benchmark": "shapes", "machine": box, "versions": versions,
                   "threads": args.threads, "small": args.small, "lengths": args.lengths,
                   "range": list(args.range), "pad": args.pad, "example_length": EXAMPLE_LENGTH,
                   "rounds": args.rounds, "calls": args.calls, "warmup": args.warmup,
                   "seed": args.seed, "aoti": args.aoti, "wall_s": wall_s,
                   "models": results}, f, indent=2)
    os.replace(args.json + ".tmp", args.json)
    print(f"\nJSON written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
