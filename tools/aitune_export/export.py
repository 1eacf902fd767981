"""export(): the program, its variants and the archive, from a module and example inputs."""
import importlib
import os
import re
import time

import torch

from . import aoti_int8, aoti_variant, onnx_variant, openvino_variant, quantize
from .archive import aitune_json, check_names, package, write_atomically
from .domains import domains_of
from .inputs import Input, clone_inputs, input_names, make_inputs, resized, resolve_dynamics
from .outputs import to_plain, wrap_for_export

# The converted models, each recorded under its variant name, for the CPU.
CONVERTERS = {"onnx": onnx_variant, "openvino": openvino_variant}
# The converted models quantised to int8 (quantize.py): the converted variant each starts from,
# and the records it is written to.
QUANTIZED = {"onnx_int8": ("onnx", ("aitune/onnx_int8/model.onnx",)),
             "openvino_int8": ("openvino", ("aitune/openvino_int8/model.xml",
                                            "aitune/openvino_int8/model.bin"))}
# Every int8 variant: the converted models' and the PT2E compilation (aoti_int8.py).
INT8_VARIANTS = (*QUANTIZED, aoti_int8.NAME)
# How many held-out inputs judge an int8 variant's repair (and whether it needs one, where they
# are the task's).
HELD_OUT_COUNT = 100
VARIANT_NAMES = (*aoti_variant.AOTI_VARIANTS, *CONVERTERS, *INT8_VARIANTS)


def default_variants():
    """default and freezing, and each converted variant whose Python packages import here."""
    names = ["default", "freezing"]
    for variant, converter in CONVERTERS.items():
        try:
            for package_name in converter.PACKAGES:
                importlib.import_module(package_name)
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


def proved_ranges(program, names, resolved):
    """aitune.json's "dynamic": for each axis exported as a range, the range torch.export proved
    (range_constraints) and its symbol, which related axes share."""
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    user_inputs = program.graph_signature.user_inputs
    ranges = []
    for index, dynamic in resolved:
        size = placeholders[user_inputs[index]].meta["val"].shape[dynamic.axis]
        if not isinstance(size, torch.SymInt):
            raise ValueError(f"--dynamic {dynamic}: torch.export made the axis static ({size})")
        symbol = size.node.expr
        bounds = program.range_constraints.get(symbol)
        low, high = (int(bounds.lower), int(bounds.upper)) if bounds is not None else (
            dynamic.low, dynamic.high)
        ranges.append({"input": names[index], "axis": dynamic.axis, "min": low, "max": high,
                       "symbol": str(symbol)})
    return ranges


def run_eager(module, inputs, positional, keywords):
    """The module's outputs on copies of `inputs` (a model may write to its inputs), and the
    copies."""
    with torch.no_grad():
        args = clone_inputs(inputs)
        return module(*args[:positional], **dict(zip(keywords, args[positional:]))), args


def quantize_variant(variant, base_files, names, cases, calibration, transformer, log,
                     validation, repair_iterations, judged_on):
    """The int8 variant `variant` of QUANTIZED made from its converted variant's files
    (`base_files`, record name -> bytes): its files and record. validation() gives held-out
    (inputs, expected) to repair it on, where its quantiser can, reverting at most
    `repair_iterations` layer groups; whether it needs repair is judged on `judged_on`
    (held-out task inputs; None: on `cases`)."""
    base, records = QUANTIZED[variant]
    if base == "onnx":
        data, quantization, made = quantize.onnx_int8(
            base_files[onnx_variant.RECORD], names, cases, calibration, transformer, log,
            validation, repair_iterations=repair_iterations, judged_on=judged_on)
        files = (data,)
    else:
        files, quantization, made = quantize.openvino_int8(
            *(base_files[r] for r in openvino_variant.RECORDS), names, cases, calibration,
            transformer, log, validation, repair_iterations=repair_iterations,
            judged_on=judged_on)
    record = {"family": base, "precision": "fp32", "quantization": quantization,
              "records": list(records), "made": made}
    return dict(zip(records, files)), record


def judged_note(record):
    """The int8 variant's least cosine on the held-out task inputs that judged it, for the log
    ("" where the example did)."""
    made = record["made"]
    return (f"; {record['quantization']['judged_on']}: least cosine {made['judged_cosine']:.6f}"
            if "judged_cosine" in made else "")


def export(module, inputs, out, variants, device, log=print, specs=None, save_io=None,
           dynamic=(), seed=0, calibration=None, calibration_samples=300, model_type=None,
           int8_quantiser=None, repair_iterations=quantize.REPAIR_ITERATIONS, repair_inputs=None,
           domains=()):
    """Writes `out`: the ExportedProgram of `module` (eval mode, on `device`) and its `variants`
    (keys of AOTI_VARIANTS, AOTInductor, and of CONVERTERS, converted for the CPU). `specs`
    (Input per input, optional) name the inputs; named ones are passed as keyword arguments.
    `dynamic` (Dynamic, from parse_dynamic) are the axes exported as a range: every variant is
    made for it and the converted ones checked at its bounds too (inputs made with `seed` + 1
    and + 2). Outputs are made plain (to_plain). With `save_io`, a folder, writes the inputs
    and eager PyTorch's outputs there (inputs.pt, outputs.pt). The int8 variants (QUANTIZED)
    calibrate on `calibration` (quantize.Calibration; None: `calibration_samples` random inputs,
    with a warning) and take the model as a transformer where `model_type` says so
    ("transformer", "cnn"; None: from the graph); an onnx_int8 or openvino_int8 whose outputs
    break is made again with NNCF's accuracy control, reverting at most `repair_iterations` layer
    groups to f32, judged on `repair_inputs(count)` (input tuples the calibration never saw;
    None: random ones); given them, whether an int8 variant needs repair is judged on them too,
    not on the example (quantize.judge). Each integer input that indexes an embedding records
    the values it may hold, or those `domains` (domains.Domain, from --domain) declare. Returns
    the names of the variants written (aoti_*, onnx, openvino, *_int8) and of those that failed
    (a variant the device cannot run is skipped, neither). aoti_int8 is
    `module` quantised by PT2E (or `int8_quantiser`, aoti_int8.Pt2eQuantiser's stand-in) and
    compiled (aoti_int8.py), on the same calibration."""
    module = module.eval().to(device)
    specs = specs or [Input(t.shape, t.dtype, (0, 100), None, None) for t in inputs]
    keywords = [s.name for s in specs if s.name]
    positional = len(specs) - len(keywords)
    if any(s.name for s in specs[:positional]):
        raise SystemExit("export_model: give the positional inputs (SHAPE) before the named ones "
                         "(NAME=SHAPE)")
    # Eager PyTorch's outputs: what every backend must match, and what tells whether the
    # outputs need converting.
    eager, args = run_eager(module, inputs, positional, keywords)
    converted = {}
    try:
        plain = to_plain(eager, converted)
    except TypeError as error:
        raise SystemExit(f"export_model: cannot export {type(module).__name__}: {error}") from None
    for where, what in converted.items():
        log(f"{out}: {where} is returned as a plain container ({what})")
    names = input_names(module, specs)
    try:
        resolved = resolve_dynamics(dynamic, specs, names)
    except ValueError as error:
        raise SystemExit(f"export_model: {error}") from None
    if keywords or converted:
        module = wrap_for_export(module, names, keywords, bool(converted))
    dynamic_shapes = None
    if resolved:
        dynamic_shapes = [{} for _ in specs]
        for index, axis in resolved:
            dynamic_shapes[index][axis.axis] = torch.export.Dim.DYNAMIC(min=axis.low,
                                                                        max=axis.high)
        dynamic_shapes = tuple(shape or None for shape in dynamic_shapes)
    with torch.no_grad():
        try:
            program = torch.export.export(module, clone_inputs(inputs),
                                          dynamic_shapes=dynamic_shapes)
            ranges = proved_ranges(program, names, resolved)
        except Exception as error:
            if not resolved:
                raise
            raise SystemExit(f"export_model: torch.export cannot take the range "
                             f"{', '.join(map(str, dynamic))}: {cause_of(error)}") from None
    try:
        index_domains = domains_of(program, names, specs, domains)
    except ValueError as error:
        raise SystemExit(f"export_model: {error}") from None
    for index, domain in sorted(index_domains.items()):
        log(f"{out}: {names[index]} takes the values {domain['min']}..{domain['max']} ("
            + ("the rows of the embedding it indexes" if domain["source"] == "embedding"
               else "--domain") + "): a call outside them is refused")
    if save_io:
        os.makedirs(save_io, exist_ok=True)
        for name, value in (("inputs.pt", tuple(t.cpu() for t in inputs)),
                            ("outputs.pt", torch.utils._pytree.tree_map(
                                lambda t: t.cpu() if isinstance(t, torch.Tensor) else t, plain))):
            write_atomically(os.path.join(save_io, name),
                             lambda tmp, value=value: torch.save(value, tmp), suffix=".pt")
    leaves = torch.utils._pytree.tree_leaves(plain)

    def flat_outputs(outputs):
        # What a converted model must return: the flat outputs, which leave out the Nones.
        return [leaf for leaf in torch.utils._pytree.tree_leaves(to_plain(outputs))
                if leaf is not None]

    expected = flat_outputs(plain)
    # A converted model is checked on the example and, for a range, at its bounds.
    cases = [(inputs, expected)]
    for offset, bound in ((1, lambda d: d.low), (2, lambda d: d.high)):
        if resolved:
            bound_inputs = make_inputs(resized(specs, resolved, bound), device, seed + offset)
            cases.append((bound_inputs,
                          flat_outputs(run_eager(module, bound_inputs, len(specs), ())[0])))
    constants = sorted({type(leaf).__name__ for leaf in expected
                        if not isinstance(leaf, torch.Tensor)})
    # A converted model computes on copies of its inputs: what the model writes to them (a
    # cache it updates in place) would be lost, and its outputs alone would not show it.
    written = [name for name, arg in zip(names, args) if arg._version > 0]
    shapes = "range" if resolved else "static"
    compiled, recorded, records, failed = {}, {}, {}, {}
    for variant in variants:
        if variant in QUANTIZED or variant == aoti_int8.NAME:
            continue  # after the variants they start from, with the calibration
        if variant in CONVERTERS:
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
                    files, record = CONVERTERS[variant].convert(program, names, cases, resolved)
                records.update(files)
                recorded[variant] = dict(record, shapes=shapes)
                log(f"{out}: {variant} converted in {time.monotonic() - start:.0f} s")
            except Exception as error:  # one variant failing must not lose the others
                failed[variant] = cause_of(error)
                log(f"{out}: {variant} failed to convert: {failed[variant]}")
            continue
        name = aoti_variant.AOTI_VARIANTS[variant][0]
        why_not = aoti_variant.skipped(variant, device)
        if why_not:
            log(f"{out}: {name} skipped: {why_not}")
            continue
        start = time.monotonic()
        try:
            with torch.no_grad():
                compiled[name], record = aoti_variant.compile_variant(
                    variant, program, module, inputs, device, dynamic_shapes)
            recorded[name] = dict(record, shapes=shapes)
            log(f"{out}: {name} compiled in {time.monotonic() - start:.0f} s")
        except Exception as error:  # one variant failing must not lose the others
            failed[name] = cause_of(error)
            log(f"{out}: {name} failed to compile: {failed[name]}")
    held_out = []

    def validation():
        # HELD_OUT_COUNT held-out inputs (seeds apart from the example's, the bounds' and the
        # calibration's; fewer where repair_inputs has fewer) and eager PyTorch's outputs for
        # them, to repair an int8 model on; made once.
        if not held_out:
            samples = ([make_inputs(specs, device, seed + 5000 + i) for i in range(HELD_OUT_COUNT)]
                       if repair_inputs is None else
                       [tuple(t.to(device) for t in sample)
                        for sample in repair_inputs(HELD_OUT_COUNT)])
            held_out[:] = [(inputs, flat_outputs(run_eager(module, inputs, len(specs), ())[0]))
                           for inputs in samples]
        return held_out

    def judged_on():
        # Task inputs show what the model serves; random ones only that the int8 model runs.
        return validation() if repair_inputs is not None else None

    def calibration_inputs():
        nonlocal calibration
        if calibration is None:
            log(f"{out}: the int8 variants calibrate on {calibration_samples} random inputs: "
                f"the result is a benchmark, not a deployment (give --calibration for real "
                f"inputs)")
            calibration = quantize.Calibration.random(specs, calibration_samples, seed)
        return calibration

    for variant in (v for v in variants if v in QUANTIZED):
        start = time.monotonic()
        base = QUANTIZED[variant][0]
        try:
            if not device.startswith("cpu"):
                raise ValueError(f"the archive is for {device}, and {variant} runs on the CPU")
            if base in failed:
                raise ValueError(f"the {base} conversion it starts from failed")
            if constants or written:
                raise ValueError(f"{base} cannot take this model (see the {base} variant)")
            if base in recorded:
                base_files = records
            else:  # converted for it, not recorded
                with torch.no_grad():
                    base_files, _ = CONVERTERS[base].convert(program, names, cases, resolved)
            transformer = (model_type == "transformer" if model_type else
                           quantize.is_transformer(base_files, onnx_variant.RECORD,
                                                   openvino_variant.RECORDS[0]))
            files, record = quantize_variant(variant, base_files, names, cases,
                                             calibration_inputs(), transformer, log, validation,
                                             repair_iterations, judged_on())
            records.update(files)
            recorded[variant] = dict(record, shapes=shapes, inputs=names)
            made, repaired = record["made"], record["quantization"].get("repaired")
            log(f"{out}: {variant} quantised in {time.monotonic() - start:.0f} s (example: "
                f"cosine {made['example_cosine']:.6f}"
                f"{'' if made['example_finite'] else ', NOT FINITE'}"
                + judged_note(record)
                + (f"; repaired from cosine {repaired['before']['cosine']:.6f} on "
                   f"{repaired['before']['on']}: held-out least "
                   f"cosine {repaired['held_out_cosine']:.6f}"
                   + ("" if repaired["reached"] else
                      f", short of {1.0 - repaired['max_drop']:g} after at most "
                      f"{repaired['max_iterations']} layer group(s) reverted")
                   if repaired else "") + ")")
        except Exception as error:  # one variant failing must not lose the others
            failed[variant] = cause_of(error)
            log(f"{out}: {variant} failed to quantise: {failed[variant]}")
    if aoti_int8.NAME in variants:
        start = time.monotonic()
        try:
            if not device.startswith("cpu"):
                raise ValueError(f"the archive is for {device}, and PT2E's x86 int8 is for the CPU")
            with torch.no_grad():
                compiled[aoti_int8.NAME], record = aoti_int8.compile_int8(
                    module, inputs, dynamic_shapes, cases, calibration_inputs(), log, validation,
                    int8_quantiser, judged_on())
            recorded[aoti_int8.NAME] = dict(record, shapes=shapes)
            repaired = record["quantization"].get("repaired")
            log(f"{out}: {aoti_int8.NAME} quantised and compiled in {time.monotonic() - start:.0f} "
                f"s ({record['made']['quantised_kernel_calls']} quantised kernel call(s); "
                f"example: cosine {record['made']['example_cosine']:.6f}"
                + judged_note(record)
                + (f"; repaired from cosine {repaired['before']['cosine']:.6f} on "
                   f"{repaired['before']['on']}, "
                   f"{len(repaired['left_out'])} of {repaired['layers']} layer(s) left out"
                   if repaired else "") + ")")
        except Exception as error:  # one variant failing must not lose the others
            failed[aoti_int8.NAME] = cause_of(error)
            log(f"{out}: {aoti_int8.NAME} failed to quantise: {failed[aoti_int8.NAME]}")
    # The prefix rule is the AOTInductor compilations' (converted models are records of their own).
    check_names([n for n in (*recorded, *failed) if n not in CONVERTERS and n not in QUANTIZED])
    extra = {"aitune.json": aitune_json(
        torch=torch.__version__,
        inputs=[{"name": n, "shape": list(s.shape), **({"spec": s.text} if s.text else {}),
                 **({"domain": index_domains[i]} if i in index_domains else {})}
                for i, (n, s) in enumerate(zip(names, specs))],
        dynamic=ranges, variants=recorded, failed=failed,
        outputs_converted=converted,
        # The structure the flat outputs of a compiled or converted model are rebuilt into, as
        # AOTInductor's call spec has it; the converted models leave out its None leaves.
        out_spec=torch.utils._pytree.treespec_dumps(program.call_spec.out_spec),
        none_leaves=[i for i, leaf in enumerate(leaves) if leaf is None])}
    write_atomically(out, lambda tmp: package(tmp, program, compiled, extra, records))
    return list(recorded), list(failed)
