"""The values an integer input may hold (aitune.json's `inputs[i].domain`): the rows of the
embedding it indexes, which the exported graph proves, or what --domain declares. A token id
outside them reads out of bounds in a compiled model (AOTInductor aborts the process) and is
answered with numbers by ONNX Runtime and OpenVINO; aitune-cpp refuses it on every call. The
range an --input spec draws random example values from (`[0,30522)`) is no domain: an attention
mask drawn from [1,2) may still hold 0s."""
import argparse
import collections
import re

import torch

from .inputs import input_index

# Ops that hand an input's values on unchanged (its shape may change): an index reaches its
# embedding through them.
PASS_THROUGH = {"view", "reshape", "_unsafe_view", "unsqueeze", "squeeze", "expand", "contiguous",
                "clone", "alias", "flatten", "permute", "transpose", "t", "slice", "select",
                "_to_copy", "to", "detach", "lift_fresh_copy"}


class Domain(collections.namedtuple("Domain", "input low high")):
    """The values `input` (a name, or a position as text) may hold, `low` to `high` inclusive."""

    def __str__(self):
        return f"{self.input}:{self.low}..{self.high}"


def parse_domain(text):
    """'input_ids:0..30521' (or '0:0..30521' for the first positional input) -> Domain."""
    match = re.fullmatch(r"(\w+):(-?\d+)\.\.(-?\d+)", text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"bad --domain '{text}': expected NAME:MIN..MAX, e.g. input_ids:0..30521")
    low, high = int(match.group(2)), int(match.group(3))
    if low > high:
        raise argparse.ArgumentTypeError(f"bad --domain '{text}': MIN is over MAX")
    return Domain(match.group(1), low, high)


def _op_name(node):
    packet = getattr(node.target, "_overloadpacket", None)
    return getattr(packet, "__name__", None)


def proved_domains(program):
    """{user input position: rows} for each integer input that indexes an embedding, through
    ops that pass its values on (PASS_THROUGH); the fewest rows where it indexes several."""
    position = {name: i for i, name in enumerate(program.graph_signature.user_inputs)}
    rows = {}
    for node in program.graph.nodes:
        if node.op != "call_function" or _op_name(node) != "embedding":
            continue
        weight, source = node.args[0], node.args[1]
        while (isinstance(source, torch.fx.Node) and source.op == "call_function"
               and _op_name(source) in PASS_THROUGH and source.args
               and isinstance(source.args[0], torch.fx.Node)):
            source = source.args[0]
        if not isinstance(source, torch.fx.Node) or source.name not in position:
            continue
        count = int(weight.meta["val"].shape[0])
        index = position[source.name]
        rows[index] = min(rows.get(index, count), count)
    return rows


def domains_of(program, names, specs, declared):
    """{input position: aitune.json's domain record}: each declared one (Domain, by name or
    position; its input must be an integer tensor), else each proved one. Raises ValueError
    naming what does not fit."""
    records = {index: {"min": 0, "max": count - 1, "source": "embedding"}
               for index, count in proved_domains(program).items()}
    for domain in declared:
        index = input_index("--domain", domain, names)
        if specs[index].dtype.is_floating_point or specs[index].dtype == torch.bool:
            raise ValueError(f"--domain {domain}: input '{names[index]}' is "
                             f"{specs[index].dtype}, not an integer input")
        records[index] = {"min": domain.low, "max": domain.high, "source": "declared"}
    return records
