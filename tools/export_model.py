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

and, for the CPU, the same program converted for other runtimes, which join the candidates:

  onnx       torch.onnx's exporter (dynamo), for ONNX Runtime: record aitune/onnx/model.onnx
  openvino   openvino.convert_model, f32 weights: aitune/openvino/model.xml and model.bin

Each converted model is run on the example inputs (ONNX Runtime's CPU provider; OpenVINO's CPU
plugin in f32) and must match eager PyTorch's outputs, or it is left out. Their outputs are the
program's flattened in pytree order, without its None leaves (extra/aitune.json records the
program's "out_spec" and, as "none_leaves", where the Nones were). They are records of their
own, not under extra/: load_pt2 reads every extra/ record as UTF-8 text.

`aitune-tune model.pt2 --input ...` then needs nothing else. Each variant is a separate
compilation (about 30-60 s on 2 cores for a small CNN; max_autotune much longer; a conversion
takes seconds); one that fails is reported and left out, and extra/aitune.json records it under
"failed" with its cause. The archive is written to a temporary name and renamed, so a crash
leaves no half-written file. AOTInductor compilations need the torch version of the LibTorch
that runs them (the C++ loader refuses others), and a CUDA compilation needs a GPU.

Your own model: give a factory that returns an nn.Module (weights loaded), as MODULE:FUNCTION
(importable; --path adds folders to sys.path) or FILE.py:FUNCTION, and one --input per forward
argument, by position (SHAPE) or by name (NAME=SHAPE, passed as a keyword argument; named ones
come after the positional ones):

  tools/export_model.py --factory mypackage.models:make_net --input 1x3x224x224 --out net.pt2
  tools/export_model.py --factory ./net.py:build --input 1x128:int64[0,30522) --variants onnx
  tools/export_model.py --factory ./hf.py:gpt2 --input input_ids=1x64:int64[0,50257) \\
      --input attention_mask=1x64:int64[1,2) --out gpt2.pt2

The program takes every input by position, in the order given, under its name (the archive
records the names: `aitune-tune --input NAME=SHAPE` finds each one's place by them).

Outputs are exported as plain tensors, tuples, lists and dicts, which LibTorch's native runtime
rebuilds in C++: a Hugging Face ModelOutput, a namedtuple (torch.return_types too) or a
dataclass becomes a dict of the same keys, in the same order (the archive records what was
converted). Any other output type stops the export with its name and what to do.

--save-io DIR writes DIR/inputs.pt (the example inputs, a tuple in the program's order, as
`aitune-tune --sample` reads it) and DIR/outputs.pt (what eager PyTorch returned for them, in
the exported structure, as `aitune-tune --expect` compares the tuned module's outputs with).

Usage: tools/export_model.py --factory F --input [NAME=]SHAPE [...] --out FILE.pt2
       [--variants LIST] [--device cpu|cuda] [--seed N] [--save-io DIR]
"""
import argparse
import collections
import contextlib
import copy
import dataclasses
import importlib
import importlib.util
import inspect
import json
import keyword
import logging
import os
import re
import sys
import tempfile
import time
import warnings

import torch

# Notices from PyTorch's own code that no user of this tool can act on, once per variant: pytree's
# deprecation of LeafSpec (raised while PyTorch copies its own TreeSpecs) and Inductor's note that
# this machine has no CUDA runtime (it compiles for the CPU). Anything else still shows.
warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                        category=FutureWarning)
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)

VARIANTS = {
    # No name may be a prefix of another: LibTorch 2.11's package loader finds a model's files
    # by prefix, so "aoti" would load "aoti_bf16"'s code.
    "default": ("aoti_default", {}, None),
    "freezing": ("aoti_freezing", {"freezing": True}, None),
    "max_autotune": ("aoti_max_autotune", {"max_autotune": True}, None),
    "bf16": ("aoti_bf16", {}, torch.bfloat16),
}
# Converted from the same program for other runtimes, each recorded under its own name.
RUNTIME_VARIANTS = ("onnx", "openvino")
# The Python packages each runtime variant needs (onnxruntime checks the converted model).
RUNTIME_PACKAGES = {"onnx": ("onnx", "onnxscript", "onnxruntime"), "openvino": ("openvino",)}
ONNX_RECORD = "aitune/onnx/model.onnx"
OPENVINO_RECORDS = ("aitune/openvino/model.xml", "aitune/openvino/model.bin")
# How close a converted model's outputs must come to eager PyTorch's: |a - e| <= ATOL * scale +
# RTOL * |e|, scale being the output's largest magnitude (at least 1), so that large outputs are
# not held to an absolute round-off their sums cannot keep.
ATOL, RTOL = 1e-4, 1e-4
PRECISION_NAMES = {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
DTYPES = {"float32": torch.float32, "float": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "long": torch.int64,
          "int32": torch.int32, "int": torch.int32, "bool": torch.bool}


class Input(collections.namedtuple("Input", "shape dtype range name text")):
    """One forward() argument: its shape, dtype, integer range, keyword name (None: positional)
    and the text it was given as (without the name)."""


def parse_input(text):
    """'1x3x224x224', '1x64:int64', '1x64:int64[0,30522)' or 'NAME=' before any of them ->
    Input."""
    name, sep, spec = text.partition("=")
    if not sep:
        name, spec = None, text
    elif not name.isidentifier() or keyword.iskeyword(name) or name == "self":
        raise argparse.ArgumentTypeError(
            f"bad input '{text}': '{name}' is not a Python argument name")
    match = re.fullmatch(r"(\d+(?:x\d+)*)(?::(\w+)(?:\[(-?\d+),(-?\d+)\))?)?", spec)
    if not match:
        raise argparse.ArgumentTypeError(
            f"bad input '{text}': expected e.g. 1x3x224x224, 1x64:int64, 1x64:int64[0,100) or "
            f"NAME=SHAPE")
    shape = tuple(int(d) for d in match.group(1).split("x"))
    dtype_name = match.group(2) or "float32"
    if dtype_name not in DTYPES:
        raise argparse.ArgumentTypeError(f"unknown dtype '{dtype_name}' in '{text}'")
    low, high = (int(match.group(3)), int(match.group(4))) if match.group(3) else (0, 100)
    if low >= high:
        raise argparse.ArgumentTypeError(f"empty integer range in '{text}'")
    return Input(shape, DTYPES[dtype_name], (low, high), name, spec)


def make_inputs(specs, device, seed):
    """Random example inputs for `specs` (Input, or (shape, dtype, range) tuples)."""
    generator = torch.Generator().manual_seed(seed)
    inputs = []
    for shape, dtype, (low, high), *_ in specs:
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


def _record_type(value):
    return f"{type(value).__module__}.{type(value).__qualname__}"


def to_plain(value, converted=None, path="output"):
    """`value` with every record type made a plain container the native runtime rebuilds in C++:
    a Hugging Face ModelOutput (an OrderedDict subclass), another dict subclass, a namedtuple
    (torch.return_types too) or a dataclass becomes a dict of the same keys in the same order;
    other tuple and list subclasses become tuples and lists. Runs inside the exported forward,
    so the trace sees it. With `converted` (a dict), records what it converted, by path. Raises
    TypeError naming any other type."""
    def note(kind):
        if converted is not None:
            converted[path] = f"{_record_type(value)} -> {kind}"

    if value is None or isinstance(value, (torch.Tensor, bool, int, float, str)):
        return value
    if isinstance(value, dict):
        if type(value) is not dict:
            note("dict")
        return {k: to_plain(v, converted, f"{path}[{k!r}]") for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # namedtuple
        note("dict")
        return {k: to_plain(getattr(value, k), converted, f"{path}[{k!r}]")
                for k in type(value)._fields}
    if isinstance(value, tuple) and hasattr(type(value), "n_sequence_fields"):
        # A structseq (torch.return_types.max): named fields, in __match_args__.
        fields = getattr(type(value), "__match_args__", ())[:type(value).n_sequence_fields]
        if len(fields) == len(value):
            note("dict")
            return {k: to_plain(getattr(value, k), converted, f"{path}[{k!r}]") for k in fields}
    if isinstance(value, (tuple, list)):
        if type(value) not in (tuple, list):
            note("tuple" if isinstance(value, tuple) else "list")
        kind = tuple if isinstance(value, tuple) else list
        return kind(to_plain(v, converted, f"{path}[{i}]") for i, v in enumerate(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        note("dict")
        return {f.name: to_plain(getattr(value, f.name), converted, f"{path}[{f.name!r}]")
                for f in dataclasses.fields(value)}
    raise TypeError(
        f"{path} is a {_record_type(value)}, which LibTorch's native runtime cannot rebuild in "
        f"C++; make forward() return tensors in tuples, lists or dicts (a wrapper module around "
        f"yours can convert it)")


class AsExported(torch.nn.Module):
    """`module` as the archive's program: every input by position (keyword inputs passed on by
    name), outputs made plain (to_plain). Subclassed per model with a forward() whose parameters
    carry the inputs' names, so the ExportedProgram names them too."""

    def __init__(self, module, positional, keywords, plain_outputs):
        super().__init__()
        self.module = module
        self.positional = positional
        self.keywords = tuple(keywords)
        self.plain_outputs = plain_outputs

    def call(self, args):
        out = self.module(*args[:self.positional],
                          **dict(zip(self.keywords, args[self.positional:])))
        return to_plain(out) if self.plain_outputs else out


def wrap_for_export(module, names, keywords, plain_outputs):
    """An AsExported around `module` whose forward takes `names` (valid, distinct Python names),
    the last len(keywords) of them passed on as the keyword arguments `keywords`."""
    params = ", ".join(names)
    namespace = {}
    exec(f"def forward(self, {params}):\n    return self.call(({params},))\n", namespace)
    cls = type("AsExported_" + type(module).__name__, (AsExported,),
               {"forward": namespace["forward"]})
    return cls(module, len(names) - len(keywords), keywords, plain_outputs)


def input_names(module, specs):
    """Each input's name: its own (the keyword it is passed as), or for a positional one, the
    name of forward()'s parameter in that place (`input_N` where there is none, or where that
    name is taken)."""
    try:
        params = [p.name for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    taken = {spec.name for spec in specs if spec.name} | {"self"}
    names = []
    for i, spec in enumerate(specs):
        if spec.name:
            names.append(spec.name)
            continue
        name = params[i] if i < len(params) else f"input_{i}"
        suffix = ""
        while name in taken or keyword.iskeyword(name) or not name.isidentifier():
            name, suffix = f"input_{i}{suffix}", suffix + "_"
        taken.add(name)
        names.append(name)
    return names


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


def clone_inputs(inputs):
    return tuple(t.clone() for t in inputs)


def default_variants():
    """default and freezing, and each runtime variant whose Python packages import here."""
    names = ["default", "freezing"]
    for variant in RUNTIME_VARIANTS:
        try:
            for package in RUNTIME_PACKAGES[variant]:
                importlib.import_module(package)
        except Exception:  # a missing package, or one whose native libraries do not load
            continue
        names.append(variant)
    return names


def cause_of(error):
    """Why `error` happened, in one line of at most 300 characters: its innermost chained cause
    (the ONNX exporter wraps the real one in advice), without colour codes or the C++ source
    locations OpenVINO starts its messages with."""
    while error.__cause__ is not None:
        error = error.__cause__
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines()]
    lines = [line for line in lines
             if line and not re.match(r"Check '.*' failed at |FrontEnd API failed with", line)]
    return f"{type(error).__name__}: {' '.join(lines)}"[:300].rstrip()


def check_outputs(outputs, expected, runtime):
    """Raises ValueError unless `outputs` (numpy arrays) match `expected` (eager PyTorch's
    tensors) in number, shape and, within ATOL and RTOL, value (integers and bools exactly)."""
    import numpy

    if len(outputs) != len(expected):
        raise ValueError(f"{runtime} returns {len(outputs)} outputs, eager PyTorch "
                         f"{len(expected)}")
    for i, (out, want) in enumerate(zip(outputs, expected)):
        want = want.detach().cpu().numpy()
        out = numpy.asarray(out)
        if out.shape != want.shape:
            raise ValueError(f"{runtime}'s output {i} has shape {list(out.shape)}, eager "
                             f"PyTorch's {list(want.shape)}")
        if not numpy.issubdtype(want.dtype, numpy.floating):
            if not numpy.array_equal(out, want):
                raise ValueError(f"{runtime}'s output {i} ({want.dtype}) differs from eager "
                                 f"PyTorch's")
            continue
        out, want = out.astype(numpy.float64), want.astype(numpy.float64)
        scale = max(1.0, float(numpy.nanmax(numpy.abs(want), initial=0.0)))
        if not numpy.allclose(out, want, rtol=RTOL, atol=ATOL * scale, equal_nan=True):
            with numpy.errstate(invalid="ignore"):
                worst = float(numpy.nanmax(numpy.abs(out - want), initial=numpy.inf))
            raise ValueError(f"{runtime}'s output {i} differs from eager PyTorch's by up to "
                             f"{worst:.3g} (allowed {ATOL * scale:.3g} + {RTOL:g} * |expected|)")


def convert_onnx(program, inputs, names, expected):
    """`program` as ONNX (bytes), checked with ONNX Runtime on `inputs` against `expected`, and
    what aitune.json records of it."""
    import onnx
    import onnxruntime

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        # The program's input names name the graph's inputs, which the C++ side feeds by name.
        torch.onnx.export(program, args=clone_inputs(inputs), f=path, dynamo=True,
                          external_data=False, input_names=list(names), verbose=False)
        with open(path, "rb") as f:
            data = f.read()
    proto = onnx.load_from_string(data)
    graph_inputs = [i.name for i in proto.graph.input]
    by_name = dict(zip(names, inputs))
    if any(name not in by_name for name in graph_inputs):
        raise ValueError(f"the ONNX graph's inputs {graph_inputs} are not the program's {names}")
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    outputs = session.run(None, {name: by_name[name].detach().cpu().numpy()
                                 for name in graph_inputs})
    check_outputs(outputs, expected, "ONNX Runtime")
    opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    info = {"record": ONNX_RECORD, "onnx": onnx.__version__, "opset": opset,
            "exporter": "torch.onnx (dynamo)", "inputs": graph_inputs,
            "outputs": len(proto.graph.output)}
    return {ONNX_RECORD: data}, info


def convert_openvino(program, inputs, names, expected):
    """`program` as an OpenVINO model (.xml and .bin bytes, f32 weights), checked with its CPU
    plugin in f32 on `inputs` against `expected`, and what aitune.json records of it."""
    import openvino

    model = openvino.convert_model(program)
    model_inputs = [next(iter(sorted(port.get_names())), "") for port in model.inputs]
    if model_inputs != list(names):
        raise ValueError(f"the OpenVINO model's inputs {model_inputs} are not the program's "
                         f"{list(names)}, in order")
    # The converter leaves every dimension dynamic; the program (like the AOTInductor
    # compilations) is for the example inputs' shapes, and static shapes run faster.
    model.reshape({port: list(t.shape) for port, t in zip(model.inputs, inputs)})
    with tempfile.TemporaryDirectory() as folder:
        xml = os.path.join(folder, "model.xml")
        openvino.save_model(model, xml, compress_to_fp16=False)
        # What is checked is the saved model, as the C++ side reads it.
        model = openvino.Core().read_model(xml)
        files = {}
        for record, path in zip(OPENVINO_RECORDS, (xml, os.path.join(folder, "model.bin"))):
            with open(path, "rb") as f:
                files[record] = f.read()
    compiled = openvino.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    results = compiled([t.detach().cpu().numpy() for t in inputs])
    check_outputs([results[i] for i in range(len(model.outputs))], expected, "OpenVINO")
    info = {"xml": OPENVINO_RECORDS[0], "bin": OPENVINO_RECORDS[1],
            "openvino": openvino.__version__.split("-")[0], "precision": "f32",
            "inputs": model_inputs, "outputs": len(model.outputs)}
    return files, info


CONVERTERS = {"onnx": convert_onnx, "openvino": convert_openvino}


def package(path, program, compiled, texts, records):
    """package_pt2 with `records` (name -> bytes) added beside its own: its extra_files takes
    text only, and load_pt2 reads every extra/ record as UTF-8, so binary records go elsewhere.
    Both load_pt2 and LibTorch's PyTorchStreamReader ignore records they do not know."""
    from torch.export.pt2_archive import _package

    with _package.PT2ArchiveWriter(path) as writer:
        _package._package_exported_programs(writer, {"model": program})
        _package._package_aoti_files(writer, compiled or None)
        _package._package_extra_files(writer, texts)
        for name, data in records.items():
            writer.write_bytes(name, data)


def export(module, inputs, out, variants, device, log=print, specs=None, save_io=None):
    """Writes `out`: the ExportedProgram of `module` (eval mode, on `device`) and its `variants`
    (keys of VARIANTS, AOTInductor, and RUNTIME_VARIANTS, converted for the CPU). `specs` (Input
    per input, optional) name the inputs; named ones are passed as keyword arguments. Outputs
    are made plain (to_plain). With `save_io`, a folder, writes the inputs and eager PyTorch's
    outputs there (inputs.pt, outputs.pt). Returns the names of the variants written (aoti_*,
    onnx, openvino) and of those that failed (a variant the device cannot run is skipped,
    neither)."""
    module = module.eval().to(device)
    specs = specs or [Input(t.shape, t.dtype, None, None, None) for t in inputs]
    keywords = [s.name for s in specs if s.name]
    positional = len(specs) - len(keywords)
    if any(s.name for s in specs[:positional]):
        raise SystemExit("export_model: give the positional inputs (SHAPE) before the named ones "
                         "(NAME=SHAPE)")
    # Eager PyTorch's outputs, on copies (a model may write to its inputs): what every backend
    # must match, and what tells whether the outputs need converting.
    with torch.no_grad():
        args = clone_inputs(inputs)
        eager = module(*args[:positional], **dict(zip(keywords, args[positional:])))
    converted = {}
    try:
        plain = to_plain(eager, converted)
    except TypeError as error:
        raise SystemExit(f"export_model: cannot export {type(module).__name__}: {error}")
    for where, what in converted.items():
        log(f"{out}: {where} is returned as a plain container ({what})")
    names = input_names(module, specs)
    if keywords or converted:
        module = wrap_for_export(module, names, keywords, bool(converted))
    with torch.no_grad():
        program = torch.export.export(module, clone_inputs(inputs))
    if save_io:
        os.makedirs(save_io, exist_ok=True)
        for name, value in (("inputs.pt", tuple(t.cpu() for t in inputs)),
                            ("outputs.pt", torch.utils._pytree.tree_map(
                                lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, plain))):
            write_atomically(os.path.join(save_io, name),
                             lambda tmp, value=value: torch.save(value, tmp), suffix=".pt")
    leaves = torch.utils._pytree.tree_leaves(plain)
    # What a converted model must return: the flat outputs, which leave out the Nones.
    expected = [leaf for leaf in leaves if leaf is not None]
    constants = sorted({type(leaf).__name__ for leaf in expected
                        if not isinstance(leaf, torch.Tensor)})
    # A converted model computes on copies of its inputs: what the model writes to them (a
    # cache it updates in place) would be lost, and its outputs alone would not show it.
    written = [name for name, arg in zip(names, args) if arg._version > 0]
    compiled, recorded, runtimes, records, failed = {}, {}, {}, {}, {}
    for variant in variants:
        if variant in RUNTIME_VARIANTS:
            if not device.startswith("cpu"):
                log(f"{out}: {variant} skipped: the archive is for {device}, and {variant} runs "
                    f"on the CPU here")
                continue
            start = time.monotonic()
            try:
                if constants:
                    raise ValueError(f"the outputs hold {', '.join(constants)} values, which "
                                     f"{variant} cannot return")
                if written:
                    raise ValueError(f"the model writes to its input(s) {', '.join(written)}, "
                                     f"which {variant} would not")
                with torch.no_grad():
                    files, runtimes[variant] = CONVERTERS[variant](program, inputs, names,
                                                                   expected)
                records.update(files)
                log(f"{out}: {variant} converted in {time.monotonic() - start:.0f} s")
            except Exception as error:  # one variant failing must not lose the others
                failed[variant] = cause_of(error)
                log(f"{out}: {variant} failed to convert: {failed[variant]}")
            continue
        name, configs, dtype = VARIANTS[variant]
        if dtype is not None and not supports_bf16(device):
            log(f"{out}: {name} skipped: {device} has no bf16 kernels")
            continue
        start = time.monotonic()
        try:
            with torch.no_grad():
                source = program
                if dtype is not None:
                    source = torch.export.export(ComputeIn(copy.deepcopy(module), dtype),
                                                 clone_inputs(inputs))
                options = dict(configs, **{"aot_inductor.package": True})
                compiled[name] = torch._inductor.aot_compile(source.module(), clone_inputs(inputs),
                                                             options=options)
            recorded[name] = {"precision": PRECISION_NAMES[dtype], "inductor_configs": configs,
                              "device": device}
            log(f"{out}: {name} compiled in {time.monotonic() - start:.0f} s")
        except Exception as error:  # one variant failing must not lose the others
            failed[name] = cause_of(error)
            log(f"{out}: {name} failed to compile: {failed[name]}")
    extra = {"aitune.json": json.dumps({
        "aoti": recorded, "torch": torch.__version__,
        "inputs": [{"name": n, "shape": list(s.shape), **({"spec": s.text} if s.text else {})}
                   for n, s in zip(names, specs)],
        "outputs_converted": converted,
        # The structure the flat outputs of a compiled or converted model are rebuilt into, as
        # AOTInductor's call spec has it; the converted models leave out its None leaves.
        "out_spec": torch.utils._pytree.treespec_dumps(program.call_spec.out_spec),
        "none_leaves": [i for i, leaf in enumerate(leaves) if leaf is None],
        "runtimes": runtimes, "failed": failed})}
    write_atomically(out, lambda tmp: package(tmp, program, compiled, extra, records))
    return list(compiled) + list(runtimes), list(failed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("--factory", required=True, help="MODULE:FUNCTION or FILE.py:FUNCTION")
    parser.add_argument("--path", action="append", default=[],
                        help="a folder to import the factory's module from (repeatable)")
    parser.add_argument("--input", action="append", type=parse_input, required=True,
                        help="one forward() argument: [NAME=]SHAPE[:dtype[LOW,HIGH)] "
                             "(repeatable; NAME= passes it by keyword)")
    parser.add_argument("--out", required=True, help="the archive to write (.pt2)")
    parser.add_argument("--variants",
                        help=f"comma-separated, from {', '.join([*VARIANTS, *RUNTIME_VARIANTS])} "
                             "(default: default,freezing, and onnx and openvino where their "
                             "packages import; 'none' for the ExportedProgram only)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]")
    parser.add_argument("--seed", type=int, default=0, help="seed of the example inputs")
    parser.add_argument("--save-io", metavar="DIR",
                        help="write the example inputs and eager PyTorch's outputs to "
                             "DIR/inputs.pt and DIR/outputs.pt")
    args = parser.parse_args()
    variants = (default_variants() if args.variants is None else
                [] if args.variants == "none" else args.variants.split(","))
    known = [*VARIANTS, *RUNTIME_VARIANTS]
    unknown = [v for v in variants if v not in known]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if not args.out.endswith(".pt2"):
        parser.error("--out must end in .pt2")
    module = load_factory(args.factory, args.path)()
    if not isinstance(module, torch.nn.Module):
        parser.error(f"the factory returned a {type(module).__name__}, not an nn.Module")
    inputs = make_inputs(args.input, args.device, args.seed)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    names = [s.name for s in args.input if s.name]
    if len(set(names)) != len(names):
        parser.error("an input name is given twice")
    names, failed = export(module, inputs, args.out, variants, args.device, specs=args.input,
                           save_io=args.save_io)
    print(f"{args.out}: ExportedProgram 'model'" + (f" and {', '.join(names)}" if names else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
