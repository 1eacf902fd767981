#!/usr/bin/env python3
"""Makes real model architectures (seeded random weights) into model files for aitune-cpp.

--format pt2 (PyTorch 2.x): a torch.export archive <out>/<name>.pt2 holding the ExportedProgram
and its --variants (tools/export_model.py: by default the AOTInductor default and freezing
compilations, and the onnx and openvino conversions where their Python packages import; a
failed one is left out and recorded in the archive). --format torchscript (the default; also
Debian's python3-torch 1.13): <out>/<name>.pt, traced. Needs no network and no weights. Each
model gets <name>.shape beside it, the --input arguments aitune-tune needs (one per line: a shape,
or for token ids a shape, dtype and range, as 1x128:int64[0,30522)).
--task synthetic trains each image model briefly on a synthetic 10-class task first
(tools/synthetic_task.py), so that its class scores have a trained model's margins, calibrates
its int8 variants on the task's inputs, and writes 100 held-out task inputs beside it
(<name>.samples/NNN.pt, for aitune-tune --sample); other models keep their random weights.
Existing files are kept unless --force. Files are written to a temporary name and renamed, so a
crash leaves no half-written model.

Usage: tools/make_models.py [--out models] [--force] [--format pt2 [--variants LIST]]
       [--task synthetic] [name ...]
"""
import argparse
import os
import shutil
import sys

# PyTorch deprecated Python's torch.jit in 2.11: a FutureWarning in 2.11 to 2.15. A proposed
# upstream change (not in 2.15) makes it an error unless this variable is set. Tracing is what the
# TorchScript files are for.
os.environ.setdefault("TORCH_2_14_ONLY_UNSAFE_SILENCE_TORCHSCRIPT_ERROR",
                      "I promise to migrate by 2.15")

import torch

from aitune_export import (
    VARIANT_NAMES, default_variants, write_atomically)
from aitune_export.inputs import make_inputs, parse_input
import synthetic_task


class TransformerEncoderModel(torch.nn.Module):
    """4-layer Transformer encoder, d=256, 4 heads, over 64 tokens of width 256."""

    def __init__(self, layers=4, d_model=256, heads=4):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(
            d_model, heads, dim_feedforward=4 * d_model, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)

    def forward(self, x):
        return self.encoder(x)


def torchvision_model(name):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None)
    return make


def bert_base():
    """transformers' BertModel at its default config (BERT-base: 12 layers, hidden size 768),
    random weights; its ModelOutput (last hidden state, pooled output) is exported as a dict."""
    import transformers
    return transformers.BertModel(transformers.BertConfig())


class Model:
    """A model of this script: its constructor, its inputs (aitune-tune's --input syntax),
    whether its first output is class scores (top-1 agreement means something for it), and the
    --time-budget a tuning of it needs (tools/bench_peers.py)."""

    def __init__(self, make, inputs, class_scores=True, time_budget_s=60):
        self.make, self.inputs = make, inputs
        self.class_scores, self.time_budget_s = class_scores, time_budget_s


IMAGE = ["1x3x224x224"]
MODELS = {
    "resnet18": Model(torchvision_model("resnet18"), IMAGE),
    "resnet50": Model(torchvision_model("resnet50"), IMAGE),
    "mobilenet_v3_small": Model(torchvision_model("mobilenet_v3_small"), IMAGE),
    "mobilenet_v3_large": Model(torchvision_model("mobilenet_v3_large"), IMAGE),
    "squeezenet1_1": Model(torchvision_model("squeezenet1_1"), IMAGE),
    "efficientnet_b0": Model(torchvision_model("efficientnet_b0"), IMAGE),
    "transformer_encoder": Model(TransformerEncoderModel, ["1x64x256"], class_scores=False),
    # Token ids over BERT's vocabulary and an attention mask of ones, 128 tokens. At 60 s a
    # tuning under an accuracy budget leaves every candidate unchecked (each check is 100 calls).
    "bert_base": Model(bert_base, ["1x128:int64[0,30522)", "1x128:int64[1,2)"],
                       class_scores=False, time_budget_s=400),
}


def calibrate_batchnorm(module, specs, batches=4, batch_size=8):
    """Sets BatchNorm running statistics from random batches.

    With random weights and default statistics, activations shrink layer after layer (the
    outputs of MobileNetV3 and EfficientNet end near 1e-9 and 1e-14), so output comparisons are
    dominated by round-off. Calibrated statistics normalise every layer as in a trained model.
    """
    norms = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # cumulative average over the calibration batches
    module.train()
    with torch.no_grad():
        for _ in range(batches):
            module(*(torch.randn(batch_size, *spec.shape[1:]) for spec in specs))
    module.eval()


def input_specs(name):
    """The inputs of model `name` (aitune_export.inputs.Input: shape, dtype, range)."""
    return [parse_input(text) for text in MODELS[name].inputs]


def build_module(name, task=None):
    """The model `name` in eval mode with its (seeded, so reproducible) random weights, trained
    on the synthetic task where `task` says so and the model takes an image, and its inputs
    (Input), and whether it was trained. The TorchScript and the .pt2 files of a model hold the
    very same weights."""
    specs = input_specs(name)
    torch.manual_seed(0)
    module = MODELS[name].make()
    calibrate_batchnorm(module, specs)
    trained = task == "synthetic" and synthetic_task.is_image(specs)
    if trained:
        synthetic_task.train(module, specs[0].shape, log=lambda line: print(f"{name}: {line}"))
    module.eval()
    return module, specs, trained


def make(name, out_dir, force, model_format="torchscript", variants=(), device="cpu", task=None):
    path = os.path.join(out_dir, f"{name}.pt2" if model_format == "pt2" else f"{name}.pt")
    if os.path.exists(path) and not force:
        print(f"{path}: exists")
        return 0
    module, specs, trained = build_module(name, task)
    failed = 0
    # Standard normal floats, token ids uniform over their range.
    inputs = make_inputs(specs, device if model_format == "pt2" else "cpu", 0)
    if model_format == "pt2":
        from aitune_export import export
        task_inputs = {}
        if trained:  # the int8 variants calibrate, and a repair judges, on the task's inputs
            from aitune_export.quantize import Calibration
            shape = specs[0].shape
            task_inputs = {
                "calibration": Calibration(synthetic_task.draw(
                    shape, 300, synthetic_task.SEEDS["calibration"])[0], "synthetic task"),
                "repair_inputs": lambda count: synthetic_task.draw(
                    shape, count, synthetic_task.SEEDS["repair"])[0]}
        failed = len(export(module, inputs, path, variants, device, specs=specs,
                            **task_inputs)[1])
    else:
        with torch.no_grad():
            # strict=False lets BERT's ModelOutput (a dict) out: its keys never change.
            traced = torch.jit.trace(module, inputs, check_trace=False, strict=False)
        write_atomically(path, lambda tmp: traced.save(tmp), suffix="")

    def write_shapes(tmp):
        with open(tmp, "w") as f:
            f.writelines(text + "\n" for text in MODELS[name].inputs)
    write_atomically(os.path.join(out_dir, f"{name}.shape"), write_shapes, suffix="")
    samples = os.path.join(out_dir, f"{name}.samples")
    if trained:
        synthetic_task.save_samples(samples, specs[0].shape)
    else:  # samples of an earlier --task would say these random weights were trained
        shutil.rmtree(samples, ignore_errors=True)
    print(f"{path}: {name} with input {' '.join(MODELS[name].inputs)}")
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*",
                        help=f"models to make (default: all): {', '.join(MODELS)}")
    parser.add_argument("--out", default="models", help="output folder (default: models)")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.add_argument("--format", choices=["torchscript", "pt2"], default="torchscript")
    parser.add_argument("--variants",
                        help="with --format pt2: the variants, comma-separated, from "
                             f"{', '.join(VARIANT_NAMES)} (tools/export_model.py; "
                             "default: default,freezing, and onnx and openvino where their "
                             "packages import)")
    parser.add_argument("--device", default="cpu",
                        help="with --format pt2: the device to export and compile for")
    parser.add_argument("--task", choices=["synthetic"],
                        help="train each image model briefly on a synthetic 10-class task first "
                             "(tools/synthetic_task.py), so its class scores have margins; its "
                             "int8 variants calibrate on the task, and 100 held-out task inputs "
                             "go to <name>.samples/ (default: random weights)")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(MODELS)}")
    if args.variants is None:  # what the Python packages here can make (pt2 only)
        variants = default_variants() if args.format == "pt2" else []
    else:
        variants = [] if args.variants == "none" else args.variants.split(",")
    known = list(VARIANT_NAMES)
    if any(v not in known for v in variants):
        parser.error(f"--variants takes names from {', '.join(known)}, got '{args.variants}'")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    failed = 0
    for name in args.names or list(MODELS):
        failed += make(name, args.out, args.force, args.format, variants, args.device, args.task)
    if failed:
        print(f"{failed} variant(s) failed to compile or convert (see above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
