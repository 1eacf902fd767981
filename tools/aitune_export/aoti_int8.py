"""aoti_int8: the program quantised to int8 by PT2E (torchao's X86InductorQuantizer, from
tools/requirements-quantize.txt, which tools/setup-venv.sh --quantize installs) and compiled by
AOTInductor with freezing=True, which is what folds the weights' quantisation into oneDNN's int8
convolutions and matmuls (without it the quantise/dequantise pairs stay and the compilation is
slower than f32's).

PT2E annotates the graph by the modules its nodes came from, which only a strict torch.export
records, so the program is exported again with strict=True; the quantised graph is then exported
as the program was (same dynamic shapes) and compiled. The generated code must call quantised
kernels, or the variant is left out with that cause.

Repair before refusal: where the quantised model's outputs on the example (on the held-out task
inputs where the export has them: quantize.judge) are not finite or their
least cosine similarity with eager PyTorch's is below REPAIR_BELOW, layers are left out of the
quantiser's annotation, those whose calibrated activations span the least first (an int8 scale
cannot go below float32's epsilon, so a layer whose activations are that small quantises to
zeros: random-weight networks whose activations fade layer after layer break this way), as few
as keep the least cosine over the held-out inputs at or above REPAIR_BELOW (found by bisection).
The compilation itself is then run on the same inputs (Inductor's int8 kernels round otherwise
than PT2E's reference model), and more layers are left out while it breaks. Where it would take
every layer, the variant is left out with its figures.
"""
import copy
import math
import os
import tempfile

import torch

from .inputs import clone_inputs
from .quantize import REPAIR_BELOW, compare, ensure_torchao, judge, kept, least_cosine

NAME = "aoti_int8"
INDUCTOR_CONFIGS = {"freezing": True}
# What Inductor's x86 int8 lowering calls in the generated code (onednn::qconv*, qlinear*).
QUANTISED_KERNELS = ("qconv", "qlinear")


class Pt2eQuantiser:
    """PT2E with X86InductorQuantizer's default static int8 (per-channel weights, uint8
    activations): what aoti_int8 is made with. (The tests stand a fake in for it, with the same
    members, where torchao is not installed.)"""

    method = ("pt2e X86InductorQuantizer (default static: int8 weights per channel, "
              "uint8 activations)")
    strict = True  # PT2E annotates by the modules the nodes came from: a strict export's record
    kernels_required = True  # its graph must lower to quantised kernels

    def __init__(self):
        self.version = {"torchao": ensure_torchao().__version__}

    @staticmethod
    def quantizer(left_out):
        import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as x86

        chosen = x86.X86InductorQuantizer()
        chosen.set_global(x86.get_default_x86_inductor_quantization_config())
        for name in left_out:  # kept in f32
            chosen.set_module_name_qconfig(name, None)
        return chosen

    def quantise(self, graph, calibration, left_out):
        """`graph` (a strict export's module) prepared, calibrated on `calibration`'s inputs and
        converted, with the modules named in `left_out` kept in f32: its layers by activation
        range (layers_by_range) and the converted module."""
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        prepared = prepare_pt2e(copy.deepcopy(graph), self.quantizer(left_out))
        for sample in calibration.inputs:
            prepared(*clone_inputs(sample))
        ranked = layers_by_range(prepared)
        return ranked, convert_pt2e(prepared)


def layers_by_range(prepared):
    """The modules whose nodes an activation observer of `prepared` (calibrated) watches, by the
    largest magnitude it saw, least first: the layers int8 represents worst."""
    bounds = {}
    for node in prepared.graph.nodes:
        if node.op != "call_module":
            continue
        observer = getattr(prepared, node.target, None)
        low, high = getattr(observer, "min_val", None), getattr(observer, "max_val", None)
        if low is None or high is None or low.numel() != 1:
            continue  # not an activation's per-tensor observer
        bound = max(abs(float(low)), abs(float(high)))
        for neighbour in (node.args[0], *node.users):
            stack = getattr(neighbour, "meta", {}).get("nn_module_stack")
            name = list(stack.values())[-1][0] if stack else ""
            if name:  # the root's own nodes: leaving "" out would leave every module out
                bounds[name] = min(bounds.get(name, math.inf), bound)
    return sorted(bounds, key=lambda name: bounds[name])


def flat_outputs(outputs):
    return [leaf for leaf in torch.utils._pytree.tree_leaves(outputs) if leaf is not None]


def repair(quantiser, graph, calibration, items, ranked, log):
    """The fewest of `ranked` layers (least activation range first) to leave out for the least
    cosine over `items` ([(inputs, expected)]) to reach REPAIR_BELOW; None where leaving all of
    them out does not, or is needed (nothing would be quantised)."""
    def score(count):
        converted = quantiser.quantise(graph, calibration, ranked[:count])[1]
        value = least_cosine(lambda inputs: flat_outputs(converted(*clone_inputs(inputs))),
                             items)[0]
        log(f"{NAME}: {count} of {len(ranked)} layer(s) left out: least cosine {value:.6f}")
        return value

    good, bad = len(ranked), 0  # score(0) failed on the example: that is why we repair
    if not ranked or score(good) < REPAIR_BELOW:
        return None
    while good - bad > 1:
        middle = (good + bad) // 2
        if score(middle) >= REPAIR_BELOW:
            good = middle
        else:
            bad = middle
    return None if good == len(ranked) else ranked[:good]


def compile_int8(module, inputs, dynamic_shapes, cases, calibration, log, validation,
                 quantiser=None, judged_on=None):
    """The aoti_int8 compilation of `module` (the module the program was exported from) and its
    record: family aoti, precision fp32 (its inputs and outputs), and "quantization" (how, the
    calibration's digests, what a repair left out). `quantiser`: Pt2eQuantiser by default.
    Whether it needs repair is judged on `judged_on` (held-out task inputs; None: on `cases`).
    Raises where it cannot be made."""
    quantiser = quantiser or Pt2eQuantiser()
    shapes = None if dynamic_shapes is None else {"args": dynamic_shapes}
    graph = torch.export.export(module, clone_inputs(inputs), dynamic_shapes=dynamic_shapes,
                                strict=quantiser.strict).module()
    ranked, converted = quantiser.quantise(graph, calibration, ())

    def reference(model):
        return lambda sample: flat_outputs(model(*clone_inputs(sample)))

    def compile_and_load(model):
        # The compilation's files (what the archive gets) and a function running them here:
        # Inductor's kernels round otherwise than the reference.
        from torch._inductor.package import package_aoti

        program = torch.export.export(model, clone_inputs(inputs), dynamic_shapes=shapes)
        files = torch._inductor.aot_compile(program.module(), clone_inputs(inputs),
                                            options=dict(INDUCTOR_CONFIGS,
                                                         **{"aot_inductor.package": True}))
        with tempfile.TemporaryDirectory() as folder:
            runner = torch._inductor.aoti_load_package(
                package_aoti(os.path.join(folder, "check.pt2"), files))
        return files, lambda sample: flat_outputs(runner(*clone_inputs(sample)))

    cosine, finite, judged = judge(reference(converted), cases, judged_on)
    quantization = {"dtype": "int8", "method": quantiser.method,
                    "calibration": calibration.record(), "judged_on": judged}
    left_out, items, before = [], [], None
    if not kept(cosine, finite, REPAIR_BELOW):
        items = validation()
        log(f"{NAME}: cosine {cosine:.6f}{'' if finite else ', not finite'} on {judged}; "
            f"leaving the layers of least activation range out, checked on {len(items)} "
            f"held-out inputs")
        before = {"cosine": cosine, "finite": finite, "on": judged}
        left_out = repair(quantiser, graph, calibration, items, ranked, log)
        if left_out is None:
            raise ValueError(f"its outputs break (cosine {cosine:.6f}"
                             f"{'' if finite else ', not finite'} on {judged}) and leaving layers "
                             f"out of the quantisation did not repair them short of leaving all "
                             f"{len(ranked)} out")
        converted = quantiser.quantise(graph, calibration, left_out)[1]
    # The compilation is judged too, on the example and on the repair's held-out inputs (on the
    # held-out task inputs alone where the export has them); where it breaks although the
    # reference did not, a quarter more of the layers left are left out.
    while True:
        files, run = compile_and_load(converted)
        cosine, finite, judged = judge(run, cases + items, judged_on)
        if kept(cosine, finite, REPAIR_BELOW):
            break
        if before is None:
            before = {"cosine": cosine, "finite": finite, "on": f"{judged}, compiled"}
            items = validation()
        if not ranked or len(left_out) >= len(ranked) - 1:
            raise ValueError(f"its compiled outputs break (least cosine {cosine:.6f}"
                             f"{'' if finite else ', not finite'}) short of leaving every layer "
                             f"out")
        left_out = ranked[:len(left_out) + max(1, (len(ranked) - len(left_out)) // 4)]
        log(f"{NAME}: compiled, least cosine {cosine:.6f}{'' if finite else ', not finite'}: "
            f"{len(left_out)} of {len(ranked)} layer(s) left out")
        converted = quantiser.quantise(graph, calibration, left_out)[1]
    if before is not None:
        quantization["repaired"] = {
            "method": "layers of least calibrated activation range left out of the annotation",
            "metric": "least cosine similarity with eager PyTorch (NaN: -1)",
            "min_cosine": REPAIR_BELOW, "validation_count": len(items),
            "left_out": left_out, "layers": len(ranked), "before": before}
    kernels = quantised_kernels(files)
    if quantiser.kernels_required and not kernels:
        raise ValueError("Inductor's generated code calls no quantised kernel (qconv, qlinear): "
                         "the int8 graph was not lowered")
    record = {"family": "aoti", "precision": "fp32", "quantization": quantization,
              "made": {"inductor_configs": INDUCTOR_CONFIGS, "device": "cpu",
                       **quantiser.version, "quantised_kernel_calls": kernels,
                       # The compilation's least cosine on the example, and on the held-out
                       # task inputs where they judged it.
                       **dict(zip(("example_cosine", "example_finite"), compare(run, cases))),
                       **({} if judged_on is None else {"judged_cosine": cosine})}}
    return files, record


def quantised_kernels(compiled):
    """How many calls of quantised kernels the generated C++ of `compiled` (aot_compile's files)
    makes."""
    count = 0
    for path in compiled if isinstance(compiled, (list, tuple)) else [compiled]:
        if isinstance(path, str) and path.endswith(".cpp"):
            with open(path, errors="replace") as f:
                text = f.read()
            count += sum(text.count(kernel) for kernel in QUANTISED_KERNELS)
    return count
