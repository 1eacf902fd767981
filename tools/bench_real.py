#!/usr/bin/env python3
"""The real-model benchmark: architectures from torchvision, Hugging Face transformers and timm,
at their default sizes with random weights (built from their configs: no hub, no download),
each exported as a user would (tools/export_model.py: the ExportedProgram and AOTInductor
variants, eager PyTorch's outputs saved beside it) and tuned on the CPU by aitune-tune, whose
tuned module's outputs are then compared with eager PyTorch's (--expect).

One table: model, export ok, baseline loads, candidates ok / total, outputs equal to eager,
selected, its latency ratio to the baseline with the interval, and for each failure its one-line
cause naming the owner: ours (aitune-cpp: the export tool, the C++ library) or PyTorch's
(torch.export, Inductor, the native runtime). The same goes to a JSON file.

Each export runs in a process of its own (a crash or an out-of-memory there costs one row).

Usage: tools/bench_real.py --tune BUILD/aitune-tune [--out DIR] [--json FILE]
       [--variants default] [--time-budget 60] [name ...]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time


SEQ = 128  # tokens of the text models' inputs


def tv(name, **kwargs):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kwargs)
    return make


def tv_detection(name):
    def make():
        import torchvision
        return getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None)
    return make


def hf(model_class, config_class, **config):
    def make():
        import transformers
        return getattr(transformers, model_class)(getattr(transformers, config_class)(**config))
    return make


def timm_model(name):
    def make():
        import timm
        return timm.create_model(name, pretrained=False)
    return make


def tokens(vocab):
    return [f"input_ids=1x{SEQ}:int64[0,{vocab})", f"attention_mask=1x{SEQ}:int64[1,2)"]


IMAGE = ["1x3x224x224"]
# name -> (library, factory, --input texts)
MODELS = {
    "resnet18": ("torchvision", tv("resnet18"), IMAGE),
    "mobilenet_v3_small": ("torchvision", tv("mobilenet_v3_small"), IMAGE),
    "vit_b_16": ("torchvision", tv("vit_b_16"), IMAGE),
    "fasterrcnn_mobilenet_v3_large_320_fpn": (
        "torchvision", tv_detection("fasterrcnn_mobilenet_v3_large_320_fpn"), ["1x3x320x320"]),
    "bert-base": ("transformers", hf("BertModel", "BertConfig"), tokens(30522)),
    "gpt2": ("transformers", hf("GPT2Model", "GPT2Config", use_cache=False), tokens(50257)),
    "vit-base": ("transformers", hf("ViTModel", "ViTConfig"), ["pixel_values=1x3x224x224"]),
    "t5-small-encoder": ("transformers", hf("T5EncoderModel", "T5Config"), tokens(32128)),
    "distilbert": ("transformers", hf("DistilBertModel", "DistilBertConfig"), tokens(30522)),
    "convnext_atto": ("timm", timm_model("convnext_atto"), IMAGE),
    "efficientnet_b0": ("timm", timm_model("efficientnet_b0"), IMAGE),
    "vit_tiny_patch16_224": ("timm", timm_model("vit_tiny_patch16_224"), IMAGE),
}


def first_line(text):
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def export_one(name, out_dir, variants):
    """In a process of its own: exports `name`; prints one JSON line with what happened."""
    import torch
    from aitune_export import export, make_inputs, parse_input
    library, factory, texts = MODELS[name]
    result = {"export_ok": False, "compiled": [], "failed_variants": [], "cause": ""}
    try:
        torch.manual_seed(0)
        module = factory()
        specs = [parse_input(text) for text in texts]
        inputs = make_inputs(specs, "cpu", seed=0)
        start = time.monotonic()
        compiled, failed = export(module, inputs, os.path.join(out_dir, f"{name}.pt2"), variants,
                                  "cpu", specs=specs, save_io=os.path.join(out_dir, f"{name}.io"),
                                  log=lambda line: print(line, file=sys.stderr))
        result.update(export_ok=True, compiled=compiled, failed_variants=failed,
                      export_s=time.monotonic() - start)
        if failed:
            result["cause"] = f"PyTorch's Inductor: {', '.join(failed)} failed to compile"
    except SystemExit as error:  # the export tool refused it, with its reason
        result["cause"] = f"ours (export tool): {first_line(error)}"
    except Exception as error:  # noqa: BLE001 - every failure becomes a row
        kind = type(error).__module__ + "." + type(error).__name__
        owner = "PyTorch's torch.export" if "torch" in kind else "the model"
        result["cause"] = f"{owner}: {type(error).__name__}: {first_line(error)}"
    print("RESULT " + json.dumps(result))


def tune_one(name, out_dir, tune, budget):
    """Runs aitune-tune on the exported model; returns what the report says."""
    path = os.path.join(out_dir, f"{name}.pt2")
    io = os.path.join(out_dir, f"{name}.io")
    report_path = os.path.join(out_dir, f"{name}.report.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    start = time.monotonic()
    done = subprocess.run([tune, path, "--sample", f"{io}/inputs.pt", "--expect",
                           f"{io}/outputs.pt", "--time-budget", str(budget), "--json",
                           report_path, "--quiet"], capture_output=True, text=True)
    row = {"tune_exit": done.returncode, "tune_s": time.monotonic() - start}
    if not os.path.exists(report_path):
        row["cause"] = f"ours (aitune-tune): exit {done.returncode}, {first_line(done.stderr)}"
        return row
    with open(report_path) as f:
        report = json.load(f)
    baseline = report.get("baseline") or {}
    candidates = report.get("candidates", [])
    row["baseline_ok"] = baseline.get("status") == "ok"
    row["candidates_ok"] = sum(c.get("status") == "ok" for c in candidates)
    row["candidates"] = len(candidates)
    row["selected"] = report.get("selected", "")
    row["candidate_rows"] = [{k: c.get(k) for k in ("backend", "status", "reason", "speedup")}
                             for c in candidates]
    # The selected candidate's latency ratio to the baseline; when the baseline stays, the best
    # measured candidate's (the one that did not beat it).
    measured = [c for c in candidates if c.get("vs_baseline")]
    chosen = [c for c in measured if c.get("selected")] or sorted(
        measured, key=lambda c: c["vs_baseline"]["ratio"])[:1]
    if chosen:
        v = chosen[0]["vs_baseline"]
        row["ratio"] = [v.get("ratio"), v.get("ci_low"), v.get("ci_high")]
        row["ratio_of"] = chosen[0].get("backend")
    expected = report.get("expected_outputs")
    row["outputs_equal"] = expected.get("equal") if expected else None
    error = report.get("error", "")
    causes = []
    if error and not expected:
        owner = "PyTorch's native runtime" if "native runtime" in error else "ours (aitune-tune)"
        causes.append(f"{owner}: {first_line(error)}")
    for c in candidates:
        if c.get("status") != "ok":
            causes.append(f"{c.get('backend')}: {c.get('status')}: {first_line(c.get('reason'))}")
    if expected and not expected.get("equal"):
        causes.append("ours: the tuned module differs from eager: "
                      f"{first_line(expected['reason'])}")
    row["cause"] = "; ".join(causes)
    return row


def ratio_text(ratio):
    if not ratio:
        return "-"
    value, low, high = ratio
    if low is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def yes_no(value):
    return "-" if value is None else ("yes" if value else "no")


def cpu_name():
    """The CPU's model name (/proc/cpuinfo), else what the platform says, else "unknown"."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"

PRECISION_FEATURES = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16",
                      "amx_bf16", "amx_int8")


def cpu_features():
    """The instruction sets that decide reduced precision (/proc/cpuinfo's flags), in the order
    the C++ reports list them (aitune::precision_cpu_features)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line.split(":", 1)[1].split() for line in f if line.startswith("flags"))
    except (OSError, StopIteration):
        return []
    return [feature for feature in PRECISION_FEATURES if feature in flags]


def describe_cpu():
    """The CPU in one line: `AMD EPYC (avx2)`."""
    return f"{cpu_name()} ({' '.join(cpu_features()) or 'no AVX2, AVX-512 or AMX'})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"default: all of {', '.join(MODELS)}")
    parser.add_argument("--tune", help="the aitune-tune program")
    parser.add_argument("--out", default="models/real", help="where the archives go")
    parser.add_argument("--json", default="real.json")
    parser.add_argument("--variants", default="default")
    parser.add_argument("--time-budget", type=float, default=60.0)
    parser.add_argument("--export-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    variants = args.variants.split(",")
    if args.export_one:
        export_one(args.export_one, args.out, variants)
        return 0
    if not args.tune:
        parser.error("--tune BUILD/examples/aitune-tune is required")
    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.names or MODELS:
        library = MODELS[name][0]
        print(f"== {name} ({library})", file=sys.stderr, flush=True)
        start = time.monotonic()
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--export-one", name,
                               "--out", args.out, "--variants", args.variants],
                              capture_output=True, text=True)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if lines:
            row = json.loads(lines[-1][len("RESULT "):])
        else:
            row = {"export_ok": False,
                   "cause": f"the export process died (exit {done.returncode}): "
                            f"{first_line(done.stderr.splitlines()[-1] if done.stderr else '')}"}
        row.update(model=name, library=library, export_wall_s=time.monotonic() - start)
        if row["export_ok"]:
            export_cause = row.pop("cause", "")
            row.update(tune_one(name, args.out, args.tune, args.time_budget))
            if export_cause:
                row["cause"] = "; ".join(c for c in (export_cause, row.get("cause")) if c)
        rows.append(row)
        shown = ("export_ok", "baseline_ok", "candidates_ok", "outputs_equal", "selected", "cause")
        print(f"   {json.dumps({k: row.get(k) for k in shown})}", file=sys.stderr, flush=True)

    header = (f"{'model':<40} {'library':<13} {'export':<7} {'baseline':<9} {'ok/total':<9} "
              f"{'= eager':<8} {'selected':<50} {'ratio [99.x % CI]':<26} cause")
    lines = [header]
    for row in rows:
        ok = (f"{row.get('candidates_ok', 0)}/{row.get('candidates', 0)}"
              if "candidates" in row else "-")
        lines.append(f"{row['model']:<40} {row['library']:<13} {yes_no(row['export_ok']):<7} "
                     f"{yes_no(row.get('baseline_ok')):<9} {ok:<9} "
                     f"{yes_no(row.get('outputs_equal')):<8} {row.get('selected', '-'):<50} "
                     f"{ratio_text(row.get('ratio')):<26} {row.get('cause') or ''}")
    import torch
    machine = {"cpu": cpu_name(), "cpu_features": cpu_features(),
               "hardware_threads": os.cpu_count()}
    print(f"aitune real-model benchmark on {describe_cpu()} ({machine['hardware_threads']} "
          f"hardware threads), torch {torch.__version__}, variants {args.variants}, "
          f"time budget {args.time_budget:g} s")
    print("\n".join(lines))
    working = sum(1 for r in rows if r.get("candidates_ok") and r.get("outputs_equal"))
    print(f"{working} of {len(rows)} models have a correct candidate and outputs equal to eager")
    with open(args.json + ".tmp", "w") as f:
        json.dump({"benchmark": "real", "machine": machine, "torch": torch.__version__,
                   "variants": variants, "time_budget_s": args.time_budget, "models": rows}, f,
                  indent=2)
    os.replace(args.json + ".tmp", args.json)
    print(f"JSON written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
