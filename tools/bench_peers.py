#!/usr/bin/env python3
"""The peers benchmark: the tuner's selection against what a user could run instead.

For each model (a .pt2 archive from tools/make_models.py, with its .shape file beside it, whose
inputs may be token ids: 1x128:int64[0,30522)):
1. aitune-tune tunes it with its default candidates and writes its JSON report;
2. in this one process, the selected backend, rebuilt from the report's selected_identity and run
   as the tuner runs it (the same runtime, model file and settings), and the peers, each run as a
   user would with default settings - eager PyTorch, torch.compile (default and max-autotune),
   each AOTInductor model in the archive, ONNX Runtime and OpenVINO on the archive's converted
   models - are timed in shuffled interleaved rounds (every contestant once per round, in a new
   random order each round, so drift and the pools' after-effects fall on all alike);
3. and times each contestant alone, half before the race and half after: rounds of long blocks
   of consecutive calls, each block's second half kept, as a server calling one model runs it;
4. prints, per contestant, the median and p90 of its rounds (each round's block less its first
   call, as the tuner's race discards it), the median first call after a switch, the median
   alone and how far the interleaved median moved from it (the thread pools' interference), and
   its outputs' largest difference from eager PyTorch's (relative to their largest value); then
   the paired ratio "selected / best peer" (the peer of lowest median; per round, then its
   median) with a 95 % interval, from the interleaved rounds and from the alone ones (the
   runtimes' pools slow each other by different amounts when interleaved, so a pick that is
   fastest served alone can lose the interleaved race); writes the same to JSON.

With --alone-bench (tools/bench.sh passes it), the contestants a C++ server could run - the
selection, eager PyTorch's counterpart (the ExportedProgram on the native runtime), each
AOTInductor model, ONNX Runtime and OpenVINO as shipped, and under --accuracy the peers
quantised by hand - are also timed alone from C++ by aitune-bench-alone, first, before this
process builds anything: the "C++ alone" column and ratio. The hand-quantised peers are made once,
in a process of their own, into a copy of the model's archive (tools/peers_int8.py
write_peer_archive), so both timings run the same model; the copy is removed once they are built.
From Python each call also pays for argument conversion and output copies, and torch's own
threads share the process (on MobileNetV3-Small on a 2-core AVX2 EPYC the harness alone had ONNX
Runtime 11 % ahead of OpenVINO where the tuner's C++ timing had OpenVINO 5 % ahead); the C++
figures are what a C++ server sees, and they decide.

With --accuracy cosine=C,top1=P% (tools/peers_int8.py): aitune-tune tunes under that budget
(the archive's int8 variants join its race), the peers that quantise by hand join the contestants
(ONNX Runtime's quantiser and NNCF, each at its defaults, calibrated on --calibration-samples
random inputs), every contestant's outputs are measured on --accuracy-samples held-out inputs
against eager PyTorch's (least cosine, top-1 agreement) and judged by the budget, and the
selection is compared twice: with the best peer as shipped (no quantising peer), and with the
best peer, quantising ones included, whose outputs are within the budget. The models are then
the five and a config-built BERT-base (128 tokens, make_models.py's bert_base); a model whose
outputs are not class scores (BERT's and the transformer encoder's hidden states) is judged, and
tuned, without top-1. A model trained on the synthetic task (make_models.py --task synthetic,
which tools/bench.sh peers --accuracy makes: <name>.samples/ beside its archive) is tuned on those
held-out samples (aitune-tune --sample), and its peers calibrate, and every contestant is judged,
on the task's inputs, each from seeds of their own (synthetic_task.SEEDS).

The selected backend runs from Python here, not through the C++ TunedModule: the same runtime
and settings, so its ratio says whether the tuner chose well; the TunedModule's own overhead
over a direct call is what tools/bench.sh overhead measures.

Usage: tools/bench_peers.py --tune BUILD/aitune-tune [--alone-bench BUILD/aitune-bench-alone]
       --models-dir DIR [--rounds 100]
       [--calls 3] [--alone-rounds 20] [--alone-calls 20] [--cpp-alone-rounds 80] [--settle-ms 0]
       [--switch-warmup-ms 0]
       [--final-settle-ms 20 --final-settle-calls 3]
       [--json FILE] [--peers eager,compile,...] [--tune-args "--runtime-threads sweep"]
       [--accuracy cosine=0.999,top1=98% [--accuracy-samples 100] [--calibration-samples 300]]
       [name ...]
"""
import argparse
import json
import math
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy
import torch

from bench_real import cpu_features, cpu_name, describe_cpu
from aitune_export import ONNX_RECORD, OPENVINO_RECORDS
from aitune_export.inputs import make_inputs, parse_input
import aitune_judge
import peers_int8
import synthetic_task

FIVE = ("resnet18", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0",
        "transformer_encoder")
# Under --accuracy, a config-built BERT-base (128 tokens) too: int8's gain is largest on it.
WITH_BUDGET = FIVE + ("bert_base",)
PEERS = ("eager", "compile", "compile_max_autotune", "aoti", "onnxruntime", "openvino")
# What a user could do by hand beyond the shipped runtimes: quantise (with --accuracy only).
QUANTISING_PEERS = ("onnxruntime_int8", "openvino_int8")
INT8_LABELS = {"onnxruntime_int8": "ONNX Runtime int8", "openvino_int8": "OpenVINO NNCF int8"}


def read_inputs(models_dir, name):
    """The model's inputs, from its .shape file: aitune_export.inputs.Input (shape, dtype, range
    and the text, which aitune-tune and aitune-bench-alone take as --input)."""
    with open(os.path.join(models_dir, f"{name}.shape")) as f:
        return [parse_input(line.strip()) for line in f if line.strip()]


def input_args(specs):
    """The --input arguments of aitune-tune and aitune-bench-alone for `specs`."""
    return [arg for spec in specs for arg in ("--input", spec.text)]


def tune(tuner, archive, inputs, budget_s, report_path, more=()):
    """Tunes `archive` with aitune-tune (its default candidates, or as `more` says) on `inputs`
    (its --input or --sample arguments); returns its JSON report."""
    command = [tuner, archive, "--json", report_path, "--quiet", "--time-budget", str(budget_s),
               *more, *inputs]
    start = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        raise RuntimeError(f"aitune-tune failed ({done.returncode}):\n{done.stdout}")
    with open(report_path) as f:
        report = json.load(f)
    report["_tuning_s"] = seconds
    return report


def cpp_contestants(selected_label, selected_key, archive, wanted, peer_variants):
    """The contestants a C++ server could run, as (label, spec) for aitune-bench-alone: the
    selection (`selected_label`) by its key, and the peers with a C++ counterpart, under their
    labels here. Eager PyTorch's counterpart is the baseline (the archive's ExportedProgram on the
    native runtime); a peer quantised here by hand is its variant (`peer_variants`:
    peers_int8.write_peer_archive) on its runtime at the runtime's defaults; torch.compile has
    none."""
    specs = [(selected_label, selected_key)]
    if "eager" in wanted:
        specs.append(("eager PyTorch", "baseline"))
    if "aoti" in wanted:
        specs += [(f"AOTInductor {name}", f"aoti:{name}") for name in aoti_names(archive)]
    if "onnxruntime" in wanted:
        specs.append(("ONNX Runtime", "onnxruntime"))
    if "openvino" in wanted:
        specs.append(("OpenVINO", "openvino"))
    for peer, (variant, family) in peer_variants.items():
        runtime = {"onnx": "onnxruntime", "openvino": "openvino"}[family]
        specs.append((INT8_LABELS[peer], f"{runtime}:{variant}"))
    return specs


def alone_in_cpp(program, archive, input_specs, specs, rounds, calls, json_path, log):
    """Each of `specs` timed alone by aitune-bench-alone, as a C++ server calling only it runs
    it: per label, its rounds' means in ms (a contestant it cannot build is logged, left out)."""
    command = [program, archive, "--rounds", str(rounds), "--calls", str(calls),
               "--json", json_path, *input_args(input_specs)]
    for label, spec in specs:
        command += ["--contestant", f"{label}={spec}"]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"aitune-bench-alone failed ({done.returncode}):\n{done.stdout}")
    with open(json_path) as f:
        result = json.load(f)
    for failed in result["failed"]:
        log(f"  C++ alone: {failed['label']}: failed: {failed['error'][:200]}")
    return {row["label"]: row["round_means_ms"] for row in result["contestants"]}


def archive_record(archive, suffix):
    """The bytes of the archive's record whose name ends with `suffix` (records sit under the
    archive's own top folder)."""
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():
            if name == suffix or name.endswith("/" + suffix):
                return z.read(name)
    raise KeyError(f"{archive} has no record {suffix}")


def aoti_names(archive):
    """The archive's AOTInductor compilations a user gets from torch as shipped: not aoti_int8,
    which our export tool quantises (a candidate of the tuner's, judged by its budget)."""
    with zipfile.ZipFile(archive) as z:
        found = {n.split("/data/aotinductor/")[1].split("/")[0] for n in z.namelist()
                 if "/data/aotinductor/" in n}
    return sorted(found - {"aoti_int8"})


def as_tensors(value):
    """A model's outputs as a flat list of float tensors."""
    if isinstance(value, torch.Tensor):
        return [value.float()]
    if isinstance(value, numpy.ndarray):
        return [torch.from_numpy(numpy.asarray(value, dtype=numpy.float32))]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in as_tensors(v)]
    raise TypeError(f"unexpected output {type(value)}")


# Each maker returns a call: () -> outputs, on the inputs it was given.

def bindable(bind, inputs):
    """`bind(inputs)` (a call on those inputs, made ready once), which can be bound again to
    other inputs by its `bind` attribute (the accuracy check runs it on held-out ones)."""
    call = bind(inputs)
    call.bind = bind
    return call


def onnx_session(archive, inputs, optimization=None, threads=0, spinning_stop=False,
                 record=ONNX_RECORD):
    import onnxruntime
    options = onnxruntime.SessionOptions()
    if spinning_stop:
        options.add_session_config_entry("session.force_spinning_stop", "1")
    if optimization is not None:
        options.graph_optimization_level = {
            "disabled": onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL,
            "basic": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL}[optimization]
    if threads > 0:
        options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(archive_record(archive, record),
                                           options, providers=["CPUExecutionProvider"])

    def bind(tensors):
        feed = {i.name: t.numpy() for i, t in zip(session.get_inputs(), tensors)}
        return lambda: session.run(None, feed)
    return bindable(bind, inputs)


def openvino_read(archive, records=OPENVINO_RECORDS):
    import openvino
    xml, weights = (archive_record(archive, record) for record in records)
    return openvino.Core().read_model(xml.decode(),
                                      openvino.Tensor(numpy.frombuffer(weights, numpy.uint8)))


def openvino_model(archive, inputs, config=None, records=OPENVINO_RECORDS):
    import openvino
    compiled = openvino.Core().compile_model(openvino_read(archive, records), "CPU",
                                             config or {})
    request = compiled.create_infer_request()

    def bind(tensors):
        arrays = [t.numpy() for t in tensors]

        def call():
            request.infer(arrays)
            return [request.get_output_tensor(i).data.copy()
                    for i in range(len(compiled.outputs))]
        return call
    return bindable(bind, inputs)


def aoti_model(archive, name, inputs):
    from torch._inductor.package import load_package
    compiled = load_package(archive, model_name=name)
    return bindable(lambda tensors: lambda: compiled(*tensors), inputs)


def torch_call(module, inputs):
    def bind(tensors):
        def call():
            with torch.inference_mode():
                return module(*tensors)
        return call
    return bindable(bind, inputs)


def selected_call(report, archive, inputs):
    """The tuner's selection, run as the tuner runs it: rebuilt from the report's
    selected_identity (its family, variant, precision and thread counts, field by field)."""
    identity = report.get("selected_identity") or {}
    family, variant = identity.get("family"), identity.get("variant")
    if family == "onnx":
        return onnx_session(archive, inputs, identity["optimization"], identity["threads"],
                            identity["spinning"] == "stop", f"aitune/{variant}/model.onnx")
    if family == "openvino":
        threads, streams, copies = identity["threads"], identity["streams"], identity["copies"]
        # The identity names aitune's Precision ("fp32"); OpenVINO's hint spells it "f32".
        precision = identity["precision"]
        hint = {"fp32": "f32", "fp16": "f16"}.get(precision, precision)
        config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": hint}
        if streams > 0:
            config["NUM_STREAMS"] = streams
        if threads > 0:  # the compiled model's threads, shared by its streams
            config["INFERENCE_NUM_THREADS"] = threads * max(streams, 1)
        if copies > 1:  # as OpenVino::set_copies compiles each copy
            config["ENABLE_CPU_PINNING"] = False
        return openvino_model(archive, inputs, config,
                              tuple(f"aitune/{variant}/model.{ext}" for ext in ("xml", "bin")))
    if family == "aoti":
        return aoti_model(archive, variant, inputs)
    if family == "nativert":  # the baseline kept: the ExportedProgram, as torch.export runs it
        from torch.export.pt2_archive._package import load_pt2
        program = load_pt2(archive).exported_programs[variant]
        return torch_call(program.module(), inputs)
    raise ValueError(f"no way to run the selection {report['selected']} here "
                     f"(its identity: {identity})")


def peer_calls(name, archive, inputs, wanted, log, quantised=(None, {}), trained=False):
    """The peers a user could run instead, with default settings: [(label, call)]. The
    quantising ones (QUANTISING_PEERS) run their variants of another archive (`quantised`: its
    path and {peer: (variant, family)}, from quantising_peers_archive), the others `archive`'s
    models.
    Eager PyTorch runs the model make_models.py builds, where its outputs are the archive's;
    else (a model it `trained`, --task synthetic, whose weights no seed rebuilds, or an archive
    made otherwise) the archive's own ExportedProgram, whose outputs every contestant is judged
    against."""
    module = torch.export.load(archive).module()
    if not trained:
        from make_models import build_module
        built = build_module(name)[0]
        with torch.inference_mode():
            difference = largest_difference(module(*inputs), built(*inputs))
        if difference <= 1e-4:
            module = built
        else:
            log(f"  eager PyTorch: the archive's ExportedProgram (make_models.py's {name} differs "
                f"from it by {difference:.2g}: other weights)")
    peers = []

    def add(label, make):
        try:
            start = time.monotonic()
            call = make()
            call()  # compiles where it compiles lazily
            peers.append((label, call))
            log(f"  {label}: ready in {time.monotonic() - start:.0f} s")
        except Exception as error:  # a peer that cannot run is named, not fatal
            log(f"  {label}: failed: {str(error).splitlines()[0][:200]}")

    if "eager" in wanted:
        add("eager PyTorch", lambda: torch_call(module, inputs))
    if "compile" in wanted:
        add("torch.compile", lambda: torch_call(torch.compile(module), inputs))
    if "compile_max_autotune" in wanted:
        add("torch.compile max-autotune",
            lambda: torch_call(torch.compile(module, mode="max-autotune"), inputs))
    if "aoti" in wanted:
        for model_name in aoti_names(archive):
            add(f"AOTInductor {model_name}", lambda m=model_name: aoti_model(archive, m, inputs))
    if "onnxruntime" in wanted:
        add("ONNX Runtime", lambda: onnx_session(archive, inputs))
    if "openvino" in wanted:
        add("OpenVINO", lambda: openvino_model(archive, inputs))
    copy, variants = quantised
    for peer, (_, family) in variants.items():
        records = peers_int8.peer_records(peer)
        if family == "onnx":
            add(INT8_LABELS[peer], lambda r=records: onnx_session(copy, inputs, record=r[0]))
        else:
            add(INT8_LABELS[peer], lambda r=records: openvino_model(copy, inputs, records=r))
    return module, peers


def quantising_peers_archive(args, name, archive, wanted, calibration, source, log):
    """The quantising peers of `wanted`, made at their defaults (calibrated on `calibration`,
    from `source`) into a copy of `archive` in the report folder, in a process of its own so
    that this one builds nothing before the C++ alone timing: (the copy's path,
    {peer: (variant, family)}), or (`archive`, {}) where no quantising peer is wanted."""
    peers = [peer for peer in QUANTISING_PEERS if peer in wanted]
    if not peers:
        return archive, {}
    copy = os.path.join(args.report_dir, f"{name}.peers.pt2")
    start = time.monotonic()
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        made = pool.apply(peers_int8.write_peer_archive,
                          (archive, copy, peers, calibration, source))
    log(f"  quantised by hand at defaults in {time.monotonic() - start:.0f} s: "
        f"{', '.join(INT8_LABELS[p] for p in made) or 'none'} (in {copy})")
    return copy, made


def median_interval(values):
    """The median of `values` and its 95 % interval, as the tuner computes them (the sign test:
    aitune_judge.median_interval)."""
    interval = aitune_judge.median_interval(values)
    return interval.median, interval.low, interval.high


def timed_block(call, calls, settle_s, warmup_s=0.0):
    """`calls` consecutive calls after a pause of `settle_s`; each call's latency in ms. After
    the first call, untimed calls until `warmup_s` has passed since the block began."""
    if settle_s > 0:
        time.sleep(settle_s)
    block = []
    began = time.perf_counter()
    for _ in range(calls):
        start = time.perf_counter()
        call()
        block.append((time.perf_counter() - start) * 1e3)
        while len(block) == 1 and time.perf_counter() - began < warmup_s:
            call()
    return block


def steady_block(call, calls, settle_calls, settle_s):
    """As the tuner's steady-state final times a finalist: untimed calls until `settle_s` has
    passed since the block began (at least `settle_calls` of them), then `calls` timed calls;
    their latencies in ms."""
    began = time.perf_counter()
    done = 0
    while done < settle_calls or time.perf_counter() - began < settle_s:
        call()
        done += 1
    block = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        block.append((time.perf_counter() - start) * 1e3)
    return block


def race(contestants, rounds, calls, settle_s, warmup_s, final=None):
    """Shuffled interleaved rounds, each contestant a block of `calls` calls per round, as the
    tuner's race runs them (or, with `final` = (settle calls, settle s), as its steady-state
    final does): per contestant, its blocks (each call's latency in ms)."""
    times = {label: [] for label, _ in contestants}
    order = list(contestants)
    for _ in range(rounds):
        random.shuffle(order)
        for label, call in order:
            times[label].append(steady_block(call, calls, *final) if final else
                                timed_block(call, calls, settle_s, warmup_s))
    return times


def alone(contestants, rounds, calls, settle_s):
    """Each contestant alone: in each of `rounds` shuffled rounds, a long block of `calls`
    consecutive calls, of which the second half is kept - a steady state, as a server calling
    one model repeatedly runs it, spread over time like the race's rounds. Per contestant, its
    kept half-blocks, one per round."""
    times = {label: [] for label, _ in contestants}
    order = list(contestants)
    for _ in range(rounds):
        random.shuffle(order)
        for label, call in order:
            times[label].append(timed_block(call, calls, settle_s)[calls // 2:])
    return times


def paired_ratio(times, selected, peers):
    """The peer of lowest median in `times` (per contestant, one value per round) and the
    median of the per-round ratios selected / that peer, with its 95 % interval."""
    medians = {label: statistics.median(times[label]) for label in peers}
    best = min(peers, key=medians.get)
    return (best, *median_interval([s / b for s, b in zip(times[selected], times[best])]))


def largest_difference(expected, got):
    """The worst relative error of `got`'s outputs against `expected`'s, as the tuner measures
    it (finite values; infinite where NaN or Inf sit elsewhere, or the structure differs)."""
    problem, outputs = aitune_judge.measure(as_tensors(expected), as_tensors(got), None)
    errors = [o.relative_error for o in outputs if o.relative_error is not None]
    return math.inf if problem else max(errors, default=0.0)


def time_budget(args, name):
    """aitune-tune's --time-budget for `name`: --time-budget, or the model's own."""
    from make_models import MODELS
    if args.time_budget is not None:
        return args.time_budget
    return MODELS[name].time_budget_s if name in MODELS else 60


def has_class_scores(name):
    """Whether the model's first output is class scores (make_models.py says; hidden states are
    not: their largest feature is no class), so that top-1 agreement means something."""
    from make_models import MODELS
    return name not in MODELS or MODELS[name].class_scores


def model_budget(args, name):
    """The budget `name` is judged by, parsed and as aitune-tune's --accuracy text: --accuracy's,
    without its topK and scores for a model whose outputs are not class scores."""
    if not args.accuracy or has_class_scores(name):
        return args.budget, args.accuracy
    text = ",".join(p for p in args.accuracy.split(",")
                    if not p.startswith(("top", "scores=")))
    try:
        return aitune_judge.parse_budget(text), text
    except ValueError:
        raise SystemExit(f"bench_peers: {name}'s outputs are not class scores, so top-k cannot "
                         f"judge them: add cosine=C or relative=R to --accuracy") from None


def bench_model(args, name, log):
    archive = os.path.join(args.models_dir, f"{name}.pt2")
    input_specs = read_inputs(args.models_dir, name)
    log(f"== {name}: tuning")
    budget, accuracy_text = model_budget(args, name)
    if accuracy_text != args.accuracy:
        log(f"  its outputs are not class scores: judged by {accuracy_text} (no top-1)")
    budget_args = ["--accuracy", accuracy_text] if args.accuracy else []
    # A model trained on the synthetic task is tuned, calibrated and judged on the task's inputs
    # (make_models.py --task synthetic), each use from seeds of its own.
    samples = synthetic_task.sample_files(args.models_dir, name)
    if samples:
        log(f"  trained on the synthetic task: tuned on its {len(samples)} held-out samples")
    report = tune(args.tune, archive,
                  [a for f in samples for a in ("--sample", f)] or input_args(input_specs),
                  time_budget(args, name),
                  os.path.join(args.report_dir, f"{name}.json"),
                  [*budget_args, *args.tune_args.split()])
    log(f"  selected {report['selected']} (tuning {report['_tuning_s']:.0f} s)")
    selected_label = "selected: " + report["selected"]

    def task_or_random_inputs(count, use, random_seed):  # `use`: a key of synthetic_task.SEEDS
        if samples:
            return synthetic_task.draw(input_specs[0].shape, count, synthetic_task.SEEDS[use])[0]
        return peers_int8.random_inputs(input_specs, count, random_seed)

    calibration = (task_or_random_inputs(args.calibration_samples, "calibration",
                                         peers_int8.CALIBRATION_SEED)
                   if any(p in args.peers for p in QUANTISING_PEERS) else ())
    # The quantising peers are variants of a copy of the archive, from which the C++ alone
    # timing runs every contestant (the selection's key names the same backend there), and the
    # harness its quantising peers; the copy is gone once they are built.
    timed, peer_variants = quantising_peers_archive(
        args, name, archive, args.peers, calibration,
        "synthetic task" if samples else "random", log)
    try:
        cpp = {}
        if args.alone_bench:  # first, while this process has built nothing to run beside it
            log(f"  each alone from C++, {args.cpp_alone_rounds} rounds of {args.alone_calls} "
                "calls")
            cpp = alone_in_cpp(args.alone_bench, timed, input_specs,
                               cpp_contestants(selected_label,
                                               report["selected_key"].replace(
                                                   f":{archive}:", f":{timed}:", 1),
                                               timed, args.peers, peer_variants),
                               args.cpp_alone_rounds, args.alone_calls,
                               os.path.join(args.report_dir, f"{name}.alone.json"), log)
        inputs = list(make_inputs(input_specs, "cpu", 1))
        module, peers = peer_calls(name, archive, inputs, args.peers, log,
                                   (timed, peer_variants), trained=bool(samples))
    finally:
        if timed != archive:
            os.remove(timed)
    selected = (selected_label, selected_call(report, archive, inputs))
    with torch.inference_mode():
        expected = module(*inputs)
    contestants = [selected, *peers]
    differences = {label: largest_difference(expected, call()) for label, call in contestants}
    accuracy = {}
    if args.accuracy:
        log(f"  accuracy of each on {args.accuracy_samples} held-out inputs")
        held_out = task_or_random_inputs(args.accuracy_samples, "harness", peers_int8.HELD_OUT_SEED)
        with torch.inference_mode():
            wanted = [module(*sample) for sample in held_out]
        for label, call in contestants:
            accuracy[label] = peers_int8.measure(lambda sample, c=call: c.bind(sample)(),
                                                 held_out, wanted, as_tensors, budget)
    for _, call in contestants:
        for _ in range(args.warmup):
            call()
    # Alone before and after the race, so that drift falls on both sides alike.
    settle_s = args.settle_ms / 1e3
    log(f"  each alone, {args.alone_rounds} rounds of {args.alone_calls} calls, half before the "
        "race and half after")
    solo = alone(contestants, args.alone_rounds // 2, args.alone_calls, settle_s)
    log(f"  racing {len(contestants)} in {args.rounds} rounds of {args.calls} calls")
    final = ((args.final_settle_calls, args.final_settle_ms / 1e3)
             if args.final_settle_ms is not None else None)
    blocks = race(contestants, args.rounds, args.calls, settle_s, args.switch_warmup_ms / 1e3,
                  final)
    for label, kept in alone(contestants, args.alone_rounds - args.alone_rounds // 2,
                             args.alone_calls, settle_s).items():
        solo[label] += kept
    # A round's value is the mean of its block less the first call, which pays for the caches
    # the previous contestant evicted (the tuner's race discards it too); in the final's blocks,
    # the median of the timed calls, as the tuner takes it.
    times = {label: [statistics.median(b) if final else statistics.fmean(b[1:]) for b in bs]
             for label, bs in blocks.items()}
    # "As shipped": the runtimes as a user installs them, without quantising by hand.
    int8_labels = set(INT8_LABELS.values())
    peer_labels = [label for label, _ in peers if label not in int8_labels]
    best, ratio, low, high = paired_ratio(times, selected[0], peer_labels)
    # The same pairing on the alone rounds: each contestant as a server calling only it runs it,
    # without the other pools' after-effects that interleaving leaves (they differ by runtime).
    steady = {label: [statistics.fmean(b) for b in bs] for label, bs in solo.items()}
    steady_best, steady_ratio, steady_low, steady_high = paired_ratio(steady, selected[0],
                                                                      peer_labels)
    # And on the rounds timed from C++, among the contestants a C++ server could run.
    cpp_peers = [label for label in peer_labels if label in cpp]
    nothing = (None, math.nan, math.nan, math.nan)
    cpp_found = (paired_ratio(cpp, selected[0], cpp_peers)
                 if selected[0] in cpp and cpp_peers else nothing)
    cpp_alone = dict(zip(("cpp_alone_best_peer", "cpp_alone_ratio", "cpp_alone_ratio_low",
                          "cpp_alone_ratio_high"), cpp_found))
    budget = {}
    if args.accuracy:  # against the best peer, quantising ones included, within the budget
        within = [label for label, _ in peers if accuracy[label]["within"]]
        for key, series, among in (("budget", times, within), ("alone_budget", steady, within),
                                   ("cpp_alone_budget", cpp,
                                    [label for label in within if label in cpp])):
            found = (paired_ratio(series, selected[0], among)
                     if among and selected[0] in series else nothing)
            budget.update(dict(zip((f"{key}_best_peer", f"{key}_ratio", f"{key}_ratio_low",
                                    f"{key}_ratio_high"), found)))
        budget["selected_within"] = accuracy[selected[0]]["within"]
    rows = []
    for label, _ in contestants:
        first = [b[0] for b in blocks[label]]  # in the final's blocks, the first timed call
        alone_calls = [ms for b in solo[label] for ms in b]
        rows.append({"contestant": label, "median_ms": statistics.median(times[label]),
                     "p90_ms": aitune_judge.p90(times[label]),
                     "first_call_median_ms": statistics.median(first),
                     "alone_median_ms": statistics.median(alone_calls),
                     "alone_p90_ms": aitune_judge.p90(alone_calls),
                     "cpp_alone_median_ms": (statistics.median(cpp[label]) if label in cpp
                                             else None),
                     "largest_difference": differences[label],
                     **({"accuracy": accuracy[label]} if accuracy else {})})
    return {"model": name, "selected": report["selected"], "selected_key": report["selected_key"],
            "tuning_s": report["_tuning_s"], "best_peer": best, "ratio": ratio,
            "ratio_low": low, "ratio_high": high, "alone_best_peer": steady_best,
            "alone_ratio": steady_ratio, "alone_ratio_low": steady_low,
            "alone_ratio_high": steady_high, **cpp_alone, **budget, "rounds": args.rounds,
            "calls": args.calls,
            "alone_rounds": args.alone_rounds, "alone_calls": args.alone_calls,
            "cpp_alone_rounds": args.cpp_alone_rounds,
            "settle_ms": args.settle_ms, "switch_warmup_ms": args.switch_warmup_ms,
            "final_settle_ms": args.final_settle_ms, "final_settle_calls": args.final_settle_calls,
            "contestants": rows}


def print_model(result):
    print(f"\n{result['model']}: selected {result['selected']} "
          f"(tuning {result['tuning_s']:.0f} s)")
    width = max(len(r["contestant"]) for r in result["contestants"])
    judged = "accuracy" in result["contestants"][0]
    print(f"  {'contestant':<{width}}  {'median ms':>9}  {'p90 ms':>8}  {'1st call':>8}  "
          f"{'alone':>8}  {'moved':>6}  {'C++ alone':>9}  {'vs eager':>8}"
          + (f"  {'cosine':>9}  {'top-1':>6}  budget" if judged else ""))
    for row in sorted(result["contestants"], key=lambda r: r["median_ms"]):
        moved = row["median_ms"] / row["alone_median_ms"] - 1
        cpp = row.get("cpp_alone_median_ms")
        line = (f"  {row['contestant']:<{width}}  {row['median_ms']:9.3f}  {row['p90_ms']:8.3f}  "
                f"{row['first_call_median_ms']:8.3f}  {row['alone_median_ms']:8.3f}  "
                f"{moved * 100:+5.1f}%  {'-' if cpp is None else f'{cpp:.3f}':>9}  "
                f"{row['largest_difference']:8.1e}")
        if judged:
            a = row["accuracy"]
            top1 = "-" if a["top1"] is None else f"{a['top1'] * 100:.0f}%"
            cosine = "-" if a["cosine"] is None else f"{a['cosine']:.6f}"
            line += (f"  {cosine:>9}  {top1:>6}  "
                     f"{'within' if a['within'] else 'outside'}")
        print(line)
    print(f"  selected / best peer ({result['best_peer']}): {result['ratio']:.3f} "
          f"[{result['ratio_low']:.3f}, {result['ratio_high']:.3f}] 95 % interleaved; "
          f"alone ({result['alone_best_peer']}): {result['alone_ratio']:.3f} "
          f"[{result['alone_ratio_low']:.3f}, {result['alone_ratio_high']:.3f}]")
    if result.get("cpp_alone_best_peer"):
        print(f"  selected / best peer alone from C++ ({result['cpp_alone_best_peer']}): "
              f"{result['cpp_alone_ratio']:.3f} [{result['cpp_alone_ratio_low']:.3f}, "
              f"{result['cpp_alone_ratio_high']:.3f}]")
    if judged:
        print(f"  selected / best peer within the budget ({result['budget_best_peer']}): "
              f"{result['budget_ratio']:.3f} [{result['budget_ratio_low']:.3f}, "
              f"{result['budget_ratio_high']:.3f}] interleaved; alone "
              f"({result['alone_budget_best_peer']}): {result['alone_budget_ratio']:.3f} "
              f"[{result['alone_budget_ratio_low']:.3f}, {result['alone_budget_ratio_high']:.3f}]"
              f"; the selection is {'within' if result['selected_within'] else 'OUTSIDE'} "
              "the budget")
        if result.get("cpp_alone_budget_best_peer"):
            print(f"  selected / best peer within the budget alone from C++ "
                  f"({result['cpp_alone_budget_best_peer']}): "
                  f"{result['cpp_alone_budget_ratio']:.3f} "
                  f"[{result['cpp_alone_budget_ratio_low']:.3f}, "
                  f"{result['cpp_alone_budget_ratio_high']:.3f}]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"models (default: {', '.join(FIVE)}; with "
                        "--accuracy also bert_base)")
    parser.add_argument("--tune", required=True, help="the aitune-tune program")
    parser.add_argument("--alone-bench",
                        help="the aitune-bench-alone program: times the contestants a C++ "
                        "server could run alone from C++ too (the C++ alone column)")
    parser.add_argument("--cpp-alone-rounds", type=int, default=80,
                        help="rounds of the C++ alone timing, each a block of --alone-calls "
                        "calls per contestant (default 80: cheap from C++; at 40 the interval "
                        "of one session configuration against itself reached 1.04, wider than "
                        "the 3 %% a pick may lose)")
    parser.add_argument("--models-dir", required=True, help="the .pt2 archives and .shape files")
    parser.add_argument("--rounds", type=int, default=100, help="interleaved rounds (default 100)")
    parser.add_argument("--calls", type=int, default=3, help="calls per contestant and round")
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls first")
    parser.add_argument("--alone-rounds", type=int, default=20,
                        help="rounds of each contestant alone, half before the race and half "
                        "after; their paired ratio is the alone one (default 20)")
    parser.add_argument("--alone-calls", type=int, default=20,
                        help="consecutive calls of a contestant alone per round (the second half "
                        "kept)")
    parser.add_argument("--switch-warmup-ms", type=float, default=0,
                        help="in the race, untimed calls after a block's first call until this "
                        "long since the block began (the other pools go idle meanwhile)")
    parser.add_argument("--settle-ms", type=float, default=0,
                        help="a pause before each block, for the thread pools to go idle")
    parser.add_argument("--final-settle-ms", type=float, default=None,
                        help="race as the tuner's steady-state final does: each block untimed "
                        "calls for this long (at least --final-settle-calls), then --calls timed, "
                        "their median the round's value")
    parser.add_argument("--final-settle-calls", type=int, default=3,
                        help="with --final-settle-ms: the fewest untimed calls (default 3)")
    parser.add_argument("--tune-args", default="",
                        help="more arguments for aitune-tune, in one string")
    parser.add_argument("--time-budget", type=float,
                        help="aitune-tune's, in s (default: the model's in make_models.py: 60, "
                        "and 400 for bert_base, whose held-out checks take longer)")
    parser.add_argument("--peers",
                        help=f"comma-separated, from {', '.join(PEERS + QUANTISING_PEERS)} "
                        "(default: all; the quantising ones with --accuracy only)")
    parser.add_argument("--accuracy",
                        help="an accuracy budget, as aitune-tune's --accuracy (cosine=C,top1=P%%, "
                        "relative=R, scores=NAME, NAME as the tuner names eager PyTorch's "
                        "outputs): aitune-tune tunes under it "
                        "(its int8 variants join the race), the quantising peers join, every "
                        "contestant's outputs are judged by it, and the selection is also "
                        "compared with the best peer within it")
    parser.add_argument("--accuracy-samples", type=int, default=100,
                        help="held-out inputs the accuracy is measured on (default 100)")
    parser.add_argument("--calibration-samples", type=int, default=300,
                        help="random inputs the quantising peers calibrate on (default 300)")
    parser.add_argument("--report-dir", help="keep aitune-tune's reports here (default: a "
                        "temporary folder)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    args.peers = (args.peers.split(",") if args.peers
                  else list(PEERS + (QUANTISING_PEERS if args.accuracy else ())))
    if any(p not in PEERS + QUANTISING_PEERS for p in args.peers):
        parser.error(f"--peers takes names from {', '.join(PEERS + QUANTISING_PEERS)}")
    if any(p in QUANTISING_PEERS for p in args.peers) and not args.accuracy:
        parser.error("the quantising peers need --accuracy: their outputs are judged by it")
    try:
        args.budget = aitune_judge.parse_budget(args.accuracy) if args.accuracy else None
    except ValueError as error:
        parser.error(str(error))
    if args.accuracy_samples < 1 or args.calibration_samples < 1:
        parser.error("--accuracy-samples and --calibration-samples take 1 or more")
    if (args.rounds < 10 or args.calls < 2 or args.alone_calls < 4 or args.alone_rounds < 6
            or args.cpp_alone_rounds < 6):
        parser.error("--rounds takes 10 or more, --calls 2 or more, --alone-calls 4 or more, "
                     "--alone-rounds and --cpp-alone-rounds 6 or more")
    random.seed(0)

    def log(line):
        print(line, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        args.report_dir = args.report_dir or scratch
        os.makedirs(args.report_dir, exist_ok=True)
        results = [bench_model(args, name, log)
                   for name in args.names or (WITH_BUDGET if args.accuracy else FIVE)]
    cpu = cpu_name()
    print(f"machine: {describe_cpu()}, {os.cpu_count()} hardware threads; "
          f"torch {torch.__version__}, "
          f"{torch.get_num_threads()} intra-op threads")
    for result in results:
        print_model(result)
    def geometric_mean(key):
        return math.exp(sum(math.log(r[key]) for r in results) / len(results))

    geomean, alone_geomean = geometric_mean("ratio"), geometric_mean("alone_ratio")
    cpp_geomean = (geometric_mean("cpp_alone_ratio")
                   if all(r["cpp_alone_best_peer"] for r in results) else None)
    print(f"\ngeometric mean of selected / best peer: {geomean:.3f} interleaved, "
          f"{alone_geomean:.3f} alone"
          + ("" if cpp_geomean is None else f", {cpp_geomean:.3f} alone from C++"))
    budget_geomeans = {}
    if args.accuracy:
        budget_geomeans = {"budget_geomean_ratio": geometric_mean("budget_ratio"),
                           "alone_budget_geomean_ratio": geometric_mean("alone_budget_ratio")}
        if all(r["cpp_alone_budget_best_peer"] for r in results):
            budget_geomeans["cpp_alone_budget_geomean_ratio"] = geometric_mean(
                "cpp_alone_budget_ratio")
        print(f"geometric mean of selected / best peer within the budget ({args.accuracy}): "
              f"{budget_geomeans['budget_geomean_ratio']:.3f} interleaved, "
              f"{budget_geomeans['alone_budget_geomean_ratio']:.3f} alone"
              + (f", {budget_geomeans['cpp_alone_budget_geomean_ratio']:.3f} alone from C++"
                 if "cpp_alone_budget_geomean_ratio" in budget_geomeans else "")
              + "; selections within "
              f"it: {sum(r['selected_within'] for r in results)} of {len(results)}")
    print(f"{'model':<20} {'selected':<44} {'best peer':<16} {'interleaved [95 %]':<22} "
          f"{'best alone':<16} {'alone [95 %]':<22} {'best C++ alone':<16} C++ alone [95 %]")
    for r in results:
        cpp = ("-" if not r["cpp_alone_best_peer"] else
               f"{r['cpp_alone_best_peer'][:16]:<16} {r['cpp_alone_ratio']:.3f} "
               f"[{r['cpp_alone_ratio_low']:.3f}, {r['cpp_alone_ratio_high']:.3f}]")
        print(f"{r['model']:<20} {r['selected'][:44]:<44} {r['best_peer'][:16]:<16} "
              f"{r['ratio']:.3f} [{r['ratio_low']:.3f}, {r['ratio_high']:.3f}]  "
              f"{r['alone_best_peer'][:16]:<16} "
              f"{r['alone_ratio']:.3f} [{r['alone_ratio_low']:.3f}, {r['alone_ratio_high']:.3f}]  "
              f"{cpp}")
    if args.accuracy:
        print(f"{'model':<20} {'best peer within the budget':<28} {'interleaved [95 %]':<22} "
              f"{'alone [95 %]':<22} {'best C++ alone':<16} C++ alone [95 %]")
        for r in results:
            cpp = ("-" if not r["cpp_alone_budget_best_peer"] else
                   f"{r['cpp_alone_budget_best_peer'][:16]:<16} "
                   f"{r['cpp_alone_budget_ratio']:.3f} [{r['cpp_alone_budget_ratio_low']:.3f}, "
                   f"{r['cpp_alone_budget_ratio_high']:.3f}]")
            print(f"{r['model']:<20} {str(r['budget_best_peer'])[:28]:<28} "
                  f"{r['budget_ratio']:.3f} [{r['budget_ratio_low']:.3f}, "
                  f"{r['budget_ratio_high']:.3f}]  {r['alone_budget_ratio']:.3f} "
                  f"[{r['alone_budget_ratio_low']:.3f}, {r['alone_budget_ratio_high']:.3f}]  "
                  f"{cpp}")
    if args.json:
        import onnxruntime
        import openvino
        with open(args.json, "w") as f:
            json.dump({"machine": cpu, "cpu_features": cpu_features(),
                       "hardware_threads": os.cpu_count(),
                       "torch": torch.__version__, "onnxruntime": onnxruntime.__version__,
                       "openvino": openvino.__version__, "geomean_ratio": geomean,
                       "alone_geomean_ratio": alone_geomean,
                       "cpp_alone_geomean_ratio": cpp_geomean, "accuracy": args.accuracy,
                       **budget_geomeans,
                       "models": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
