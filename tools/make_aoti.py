#!/usr/bin/env python3
"""Compiles a model of tools/make_models.py (same seeded weights) into an AOTInductor package.

Needs PyTorch >= 2.6 (torch._inductor.aoti_compile_and_package) and, for --device cuda, a GPU.
The package is written as <out>/<name>.pt2 through a temporary file and a rename.

Usage: tools/make_aoti.py [--out models] [--device cuda] name ...
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import MODELS, build_module  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help=f"models: {', '.join(MODELS)}")
    parser.add_argument("--out", default="models")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if not hasattr(torch._inductor, "aoti_compile_and_package"):
        print(f"torch {torch.__version__} has no aoti_compile_and_package (needs 2.6+)")
        return 1
    os.makedirs(args.out, exist_ok=True)
    for name in args.names:
        module, shapes = build_module(name)
        module = module.to(args.device)
        inputs = tuple(torch.randn(*shape, device=args.device) for shape in shapes)
        with torch.no_grad():
            program = torch.export.export(module, inputs)
            path = os.path.join(args.out, f"{name}.pt2")
            tmp = f"{path}.tmp{os.getpid()}.pt2"
            torch._inductor.aoti_compile_and_package(program, package_path=tmp)
            os.replace(tmp, path)
        print(f"{path}: AOTInductor package of {name} for {args.device}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
