#!/usr/bin/env python3
"""Exports a PyTorch model into one torch.export .pt2 archive for aitune-cpp.

The archive holds the ExportedProgram (model name "model"), which aitune's baseline runs with
LibTorch's native runtime, and AOTInductor compilations of the same program, each under its own
name, which are aitune's candidates:

  aoti_default       Inductor's defaults
  aoti_freezing      freezing=True (weights become constants, folded into the kernels)
  aoti_max_autotune  max_autotune=True (Inductor times kernel choices; slow to compile)
  aoti_bf16          computed in bfloat16 (inputs cast in, outputs cast back), where the device
                     has bf16 kernels

`aitune-tune model.pt2 --input ...` then needs nothing else. Each variant is a separate
compilation (about 30-60 s on 2 cores for a small CNN; max_autotune much longer); one that fails
to compile is reported and left out. The archive is written to a temporary name and renamed,
so a crash leaves no half-written file. AOTInductor compilations need the torch version of the
LibTorch that runs them (the C++ loader refuses others), and a CUDA compilation needs a GPU.

Your own model: give a factory that returns an nn.Module (weights loaded), as MODULE:FUNCTION
(importable; --path adds folders to sys.path) or FILE.py:FUNCTION, and one --input per forward
argument:

  tools/export_model.py --factory mypackage.models:make_net --input 1x3x224x224 --out net.pt2
  tools/export_model.py --factory ./net.py:build --input 1x128:int64[0,30522) --variants default

Usage: tools/export_model.py --factory F --input SHAPE [...] --out FILE.pt2 [--variants LIST]
       [--device cpu|cuda] [--seed N]
"""
import argparse
import contextlib
import copy
import importlib
import importlib.util
import json
import os
import re
import sys
import time

import torch

VARIANTS = {
    # No name may be a prefix of another: LibTorch 2.11's package loader finds a model's files
    # by prefix, so "aoti" would load "aoti_bf16"'s code.
    "default": ("aoti_default", {}, None),
    "freezing": ("aoti_freezing", {"freezing": True}, None),
    "max_autotune": ("aoti_max_autotune", {"max_autotune": True}, None),
    "bf16": ("aoti_bf16", {}, torch.bfloat16),
}
PRECISION_NAMES = {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
DTYPES = {"float32": torch.float32, "float": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "long": torch.int64,
          "int32": torch.int32, "int": torch.int32, "bool": torch.bool}


def parse_input(text):
    """'1x3x224x224', '1x64:int64' or '1x64:int64[0,30522)' -> (shape, dtype, (low, high))."""
    match = re.fullmatch(r"(\d+(?:x\d+)*)(?::(\w+)(?:\[(-?\d+),(-?\d+)\))?)?", text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"bad input '{text}': expected e.g. 1x3x224x224, 1x64:int64 or 1x64:int64[0,100)")
    shape = tuple(int(d) for d in match.group(1).split("x"))
    dtype_name = match.group(2) or "float32"
    if dtype_name not in DTYPES:
        raise argparse.ArgumentTypeError(f"unknown dtype '{dtype_name}' in '{text}'")
    low, high = (int(match.group(3)), int(match.group(4))) if match.group(3) else (0, 100)
    if low >= high:
        raise argparse.ArgumentTypeError(f"empty integer range in '{text}'")
    return shape, DTYPES[dtype_name], (low, high)


def make_inputs(specs, device, seed):
    generator = torch.Generator().manual_seed(seed)
    inputs = []
    for shape, dtype, (low, high) in specs:
        if dtype.is_floating_point:
            tensor = torch.randn(*shape, generator=generator).to(dtype)
        elif dtype == torch.bool:
            tensor = torch.randint(0, 2, shape, generator=generator).bool()
        else:
            tensor = torch.randint(low, high, shape, generator=generator, dtype=dtype)
        inputs.append(tensor.to(device))
    return tuple(inputs)


def load_factory(text, paths):
    """'pkg.mod:fn' or 'file.py:fn' -> the callable."""
    module_name, _, function = text.rpartition(":")
    if not module_name or not function:
        raise SystemExit(f"export_model: --factory must be MODULE:FUNCTION or FILE.py:FUNCTION, "
                         f"got '{text}'")
    sys.path[:0] = [os.path.abspath(p) for p in paths]
    if module_name.endswith(".py"):
        spec = importlib.util.spec_from_file_location("aitune_user_model", module_name)
        if spec is None or not os.path.isfile(module_name):
            raise SystemExit(f"export_model: no such file '{module_name}'")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    if not hasattr(module, function):
        raise SystemExit(f"export_model: '{module_name}' has no '{function}'")
    return getattr(module, function)


class ComputeIn(torch.nn.Module):
    """Runs `module` in `dtype`: floating inputs cast in, floating outputs cast back, so the
    compiled variant takes and returns what the baseline does."""

    def __init__(self, module, dtype):
        super().__init__()
        self.module = module.to(dtype)
        self.dtype = dtype

    def forward(self, *args):
        cast = [a.to(self.dtype) if a.is_floating_point() else a for a in args]
        out = self.module(*cast)
        return torch.utils._pytree.tree_map(
            lambda t: t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t, out)


def supports_bf16(device):
    if device.startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def write_atomically(path, write, suffix=".pt2"):
    """Calls write(tmp) on a temporary name beside `path`, then renames it to `path`, so a crash
    leaves no half-written file. The name ends in `suffix` (the .pt2 writers insist on it)."""
    tmp = f"{path}.tmp{os.getpid()}{suffix}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def export(module, inputs, out, variants, device, log=print):
    """Writes `out`: the ExportedProgram of `module` (eval mode, on `device`) and the AOTInductor
    `variants` (keys of VARIANTS). Returns the names of the compilations written and of those
    that failed to compile (a variant the device cannot run is skipped, neither)."""
    from torch.export.pt2_archive._package import package_pt2

    module = module.eval().to(device)
    with torch.no_grad():
        program = torch.export.export(module, inputs)
    compiled, recorded, failed = {}, {}, []
    for variant in variants:
        name, configs, dtype = VARIANTS[variant]
        if dtype is not None and not supports_bf16(device):
            log(f"{out}: {name} skipped: {device} has no bf16 kernels")
            continue
        start = time.monotonic()
        try:
            with torch.no_grad():
                source = program
                if dtype is not None:
                    source = torch.export.export(ComputeIn(copy.deepcopy(module), dtype), inputs)
                options = dict(configs, **{"aot_inductor.package": True})
                compiled[name] = torch._inductor.aot_compile(source.module(), inputs,
                                                             options=options)
            recorded[name] = {"precision": PRECISION_NAMES[dtype], "inductor_configs": configs,
                              "device": device}
            log(f"{out}: {name} compiled in {time.monotonic() - start:.0f} s")
        except Exception as error:  # one variant failing must not lose the others
            log(f"{out}: {name} failed to compile: {type(error).__name__}: "
                f"{str(error).splitlines()[0] if str(error) else ''}")
            failed.append(name)
    extra = {"aitune.json": json.dumps({"aoti": recorded, "torch": torch.__version__})}
    write_atomically(out, lambda tmp: package_pt2(
        tmp, exported_programs={"model": program}, aoti_files=compiled or None, extra_files=extra))
    return list(compiled), failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("--factory", required=True, help="MODULE:FUNCTION or FILE.py:FUNCTION")
    parser.add_argument("--path", action="append", default=[],
                        help="a folder to import the factory's module from (repeatable)")
    parser.add_argument("--input", action="append", type=parse_input, required=True,
                        help="one forward() argument's shape[:dtype[low,high)] (repeatable)")
    parser.add_argument("--out", required=True, help="the archive to write (.pt2)")
    parser.add_argument("--variants", default="default,freezing",
                        help=f"comma-separated, from {', '.join(VARIANTS)} (default: "
                             "default,freezing; 'none' for the ExportedProgram only)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]")
    parser.add_argument("--seed", type=int, default=0, help="seed of the example inputs")
    args = parser.parse_args()
    variants = [] if args.variants == "none" else args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    if not args.out.endswith(".pt2"):
        parser.error("--out must end in .pt2")
    module = load_factory(args.factory, args.path)()
    if not isinstance(module, torch.nn.Module):
        parser.error(f"the factory returned a {type(module).__name__}, not an nn.Module")
    inputs = make_inputs(args.input, args.device, args.seed)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    names, failed = export(module, inputs, args.out, variants, args.device)
    print(f"{args.out}: ExportedProgram 'model'" + (f" and {', '.join(names)}" if names else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
