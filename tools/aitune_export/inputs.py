"""The example inputs: what --input and --dynamic say, the random tensors made from them, and
the names the exported program gives them."""
import argparse
import collections
import inspect
import keyword
import re

import torch

DTYPES = {"float32": torch.float32, "float": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "long": torch.int64,
          "int32": torch.int32, "int": torch.int32, "bool": torch.bool}


class Input(collections.namedtuple("Input", "shape dtype range name text")):
    """One forward() argument: its shape, dtype, integer range, keyword name (None: positional)
    and the text it was given as (without the name)."""


class Dynamic(collections.namedtuple("Dynamic", "input axis low high")):
    """One axis of one input that varies at serving time, from `low` to `high` inclusive. `input`
    is the input's name or, for an unnamed one, its position as text."""

    def __str__(self):
        return f"{self.input}:{self.axis}:{self.low}..{self.high}"


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


def parse_dynamic(text):
    """'input_ids:1:8..256' (or '0:1:8..256' for the first positional input) -> Dynamic."""
    match = re.fullmatch(r"(\w+):(\d+):(\d+)\.\.(\d+)", text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"bad --dynamic '{text}': expected NAME:AXIS:MIN..MAX, e.g. input_ids:1:8..256")
    name, axis, low, high = match.group(1), *(int(match.group(i)) for i in (2, 3, 4))
    if not 2 <= low <= high:
        # torch.export specialises sizes 0 and 1: a range must start at 2 or more.
        raise argparse.ArgumentTypeError(
            f"bad --dynamic '{text}': the range must be MIN..MAX with 2 <= MIN <= MAX")
    return Dynamic(name, axis, low, high)


def input_index(option, given, names):
    """The index of the input `given.input` names (its name, or its position as text, among
    `names`). Raises ValueError naming `option` and `given` when there is none."""
    if given.input in names:
        return names.index(given.input)
    if given.input.isdigit() and int(given.input) < len(names):
        return int(given.input)
    raise ValueError(f"{option} {given}: no input '{given.input}' (the inputs: "
                     f"{', '.join(names)})")


def resolve_dynamics(dynamics, specs, names):
    """Each Dynamic with its input's index, checked against the inputs: [(index, Dynamic)].
    Raises ValueError naming what does not fit (an unknown input, an axis it lacks, an example
    size outside the range, one axis given twice)."""
    resolved, seen = [], set()
    for dynamic in dynamics:
        index = input_index("--dynamic", dynamic, names)
        shape = specs[index].shape
        if dynamic.axis >= len(shape):
            raise ValueError(f"--dynamic {dynamic}: input '{names[index]}' has {len(shape)} "
                             f"axes ({'x'.join(map(str, shape))})")
        if not dynamic.low <= shape[dynamic.axis] <= dynamic.high:
            raise ValueError(f"--dynamic {dynamic}: the example's size {shape[dynamic.axis]} is "
                             f"outside the range")
        if (index, dynamic.axis) in seen:
            raise ValueError(f"--dynamic names axis {dynamic.axis} of '{names[index]}' twice")
        seen.add((index, dynamic.axis))
        resolved.append((index, dynamic._replace(input=names[index])))
    return resolved


def resized(specs, resolved, size_of):
    """`specs` with each dynamic axis at size_of(Dynamic): the range's smallest or largest
    inputs. Inputs whose axes export related stay related, since each takes its own bound."""
    specs = list(specs)
    for index, dynamic in resolved:
        shape = list(specs[index].shape)
        shape[dynamic.axis] = size_of(dynamic)
        specs[index] = specs[index]._replace(shape=tuple(shape))
    return specs


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


def clone_inputs(inputs):
    return tuple(t.clone() for t in inputs)


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
