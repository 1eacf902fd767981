#!/usr/bin/env python3
"""Makes real model architectures (seeded random weights) into model files for aitune-cpp.

--format pt2 (PyTorch 2.x): a torch.export archive <out>/<name>.pt2 holding the ExportedProgram
and its --variants (tools/export_model.py: by default the AOTInductor default and freezing
compilations, and the onnx and openvino conversions where their Python packages import; a
failed one is left out and recorded in the archive). --format torchscript (the default; also
Debian's python3-torch 1.13): <out>/<name>.pt, traced. Needs no network and no weights. Each
model gets <name>.shape beside it, the --input arguments aitune-tune needs (one per line).
Existing files are kept unless --force. Files are written to a temporary name and renamed, so a
crash leaves no half-written model.

Usage: tools/make_models.py [--out models] [--force] [--format pt2 [--variants LIST]] [name ...]
"""
import argparse
import os
import sys

# PyTorch deprecated Python's torch.jit in 2.11: a FutureWarning in 2.11 to 2.15. A proposed
# upstream change (not in 2.15) makes it an error unless this variable is set. Tracing is what the
# TorchScript files are for.
os.environ.setdefault("TORCH_2_14_ONLY_UNSAFE_SILENCE_TORCHSCRIPT_ERROR", "I promise to migrate by 2.15")

import torch  # noqa: E402

from aitune_export import (  # noqa: E402
    VARIANT_NAMES, default_variants, write_atomically)


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


# name -> (constructor, input shapes)
MODELS = {
    "resnet18": (torchvision_model("resnet18"), [(1, 3, 224, 224)]),
    "resnet50": (torchvision_model("resnet50"), [(1, 3, 224, 224)]),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), [(1, 3, 224, 224)]),
    "mobilenet_v3_large": (torchvision_model("mobilenet_v3_large"), [(1, 3, 224, 224)]),
    "squeezenet1_1": (torchvision_model("squeezenet1_1"), [(1, 3, 224, 224)]),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), [(1, 3, 224, 224)]),
    "transformer_encoder": (TransformerEncoderModel, [(1, 64, 256)]),
}


def calibrate_batchnorm(module, shapes, batches=4, batch_size=8):
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
            module(*(torch.randn(batch_size, *shape[1:]) for shape in shapes))
    module.eval()


def build_module(name):
    """The model `name` in eval mode with its (seeded, so reproducible) random weights, and its
    input shapes. The TorchScript and the .pt2 files of a model hold the very same weights."""
    make_module, shapes = MODELS[name]
    torch.manual_seed(0)
    module = make_module()
    calibrate_batchnorm(module, shapes)
    module.eval()
    return module, shapes


def make(name, out_dir, force, model_format="torchscript", variants=(), device="cpu"):
    path = os.path.join(out_dir, f"{name}.pt2" if model_format == "pt2" else f"{name}.pt")
    if os.path.exists(path) and not force:
        print(f"{path}: exists")
        return 0
    module, shapes = build_module(name)
    failed = 0
    if model_format == "pt2":
        from aitune_export import export
        inputs = tuple(torch.randn(*shape, device=device) for shape in shapes)
        failed = len(export(module, inputs, path, variants, device)[1])
    else:
        inputs = tuple(torch.randn(*shape) for shape in shapes)
        with torch.no_grad():
            traced = torch.jit.trace(module, inputs, check_trace=False)
        write_atomically(path, lambda tmp: traced.save(tmp), suffix="")

    def write_shapes(tmp):
        with open(tmp, "w") as f:
            for shape in shapes:
                f.write("x".join(str(d) for d in shape) + "\n")
    write_atomically(os.path.join(out_dir, f"{name}.shape"), write_shapes, suffix="")
    print(f"{path}: {name} with input {' '.join('x'.join(map(str, s)) for s in shapes)}")
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"models to make (default: all): {', '.join(MODELS)}")
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
        failed += make(name, args.out, args.force, args.format, variants, args.device)
    if failed:
        print(f"{failed} variant(s) failed to compile or convert (see above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
