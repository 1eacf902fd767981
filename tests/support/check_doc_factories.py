# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Every `--factory FILE.py:FUNCTION` the docs and README run names a file that ships with the
project and a function in it that builds an nn.Module which runs on a short input of the
command's own --input names (docs/libtorch.md once ran hf_models.py, which did not ship).

Usage: check_doc_factories.py (from anywhere; exits 1 naming each factory that fails, 77 where
the Python has no transformers)
"""
import importlib.util
import pathlib
import re
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"--factory\s+(\S+\.py):(\w+)((?:\\\n|[^\n`])*)")
INPUT = re.compile(r"--input\s+'(\w+)=1x\d+:int64\[(\d+),(\d+)\)'")


def factories():
    """(document, file, function, {input: (low, high)}) for each command with a FILE.py factory."""
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for match in COMMAND.finditer(doc.read_text()):
            inputs = {name: (int(low), int(high)) for name, low, high in INPUT.findall(match[3])}
            yield doc.relative_to(ROOT), match[1], match[2], inputs


def main():
    try:
        import transformers  # noqa: F401  (the docs' factories build its models)
    except ImportError:
        print("skipped: this Python has no transformers (the LibTorch 1.13 preset's)")
        return 77
    failures, checked = [], 0
    for doc, file, function, inputs in factories():
        checked += 1
        where = f"{doc}: --factory {file}:{function}"
        path = ROOT / file
        if not path.is_file():
            failures.append(f"{where}: {file} is not in the project")
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(module, function):
            failures.append(f"{where}: {file} has no {function}()")
            continue
        model = getattr(module, function)()
        if not isinstance(model, torch.nn.Module):
            failures.append(f"{where}: returned a {type(model).__name__}, not an nn.Module")
            continue
        with torch.no_grad():
            model(**{name: torch.randint(low, high, (1, 8)) for name, (low, high) in inputs.items()})
        print(f"ok: {where} ({type(model).__name__}, inputs {', '.join(inputs) or 'none'})")
    if checked == 0:
        failures.append("no --factory FILE.py:FUNCTION command found in README.md or docs/")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
