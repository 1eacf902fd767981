"""The command line of tools/export_model.py (its help is the package's __doc__)."""
import argparse
import importlib
import importlib.util
import os
import sys

import torch

from . import __doc__ as DOC
from . import quantize
from .domains import parse_domain
from .export import HELD_OUT_COUNT, INT8_VARIANTS, VARIANT_NAMES, default_variants, export
from .inputs import make_inputs, parse_dynamic, parse_input
from .quantize import REPAIR_ITERATIONS


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


def load_samples(option, text, paths, specs, count):
    """`option` (--calibration, --held-out) FILE.py:FUNCTION or MODULE:FUNCTION: the first `count`
    input tuples of the iterable it returns (a lone tensor is a one-input tuple), on the CPU,
    checked against the inputs' number, ranks and dtypes."""
    samples = []
    for sample in load_factory(text, paths)():
        sample = (sample,) if isinstance(sample, torch.Tensor) else tuple(sample)
        if len(sample) != len(specs) or any(
                not isinstance(t, torch.Tensor) or t.dtype != s.dtype or t.dim() != len(s.shape)
                for t, s in zip(sample, specs)):
            raise SystemExit(f"export_model: {option} {text}: sample {len(samples)} is not "
                             f"{len(specs)} tensor(s) of the --input dtypes and ranks")
        samples.append(tuple(t.detach().cpu() for t in sample))
        if len(samples) == count:
            break
    if not samples:
        raise SystemExit(f"export_model: {option} {text} gave no samples")
    return samples


def load_calibration(text, paths, specs, count):
    """--calibration: quantize.Calibration of load_samples."""
    return quantize.Calibration(load_samples("--calibration", text, paths, specs, count), text)


def load_held_out(text, paths, specs, count, calibration):
    """--held-out: load_samples, refused where one is also a calibration input (`calibration`,
    quantize.Calibration or None): a repair judged on the inputs it calibrated on would pass
    what it should test."""
    samples = load_samples("--held-out", text, paths, specs, count)
    shared = set(calibration.digests) if calibration else set()
    for index, sample in enumerate(samples):
        if quantize.sample_digest(sample) in shared:
            raise SystemExit(f"export_model: --held-out {text}: sample {index} is also a "
                             f"calibration input; held-out inputs must be ones the calibration "
                             f"never saw")
    return samples


def main():
    parser = argparse.ArgumentParser(description=DOC.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(DOC.splitlines()[1:]))
    parser.add_argument("--factory", required=True, help="MODULE:FUNCTION or FILE.py:FUNCTION")
    parser.add_argument("--path", action="append", default=[],
                        help="a folder to import the factory's module from (repeatable)")
    parser.add_argument("--input", action="append", type=parse_input, required=True,
                        help="one forward() argument: [NAME=]SHAPE[:dtype[LOW,HIGH)] "
                             "(repeatable; NAME= passes it by keyword)")
    parser.add_argument("--dynamic", action="append", type=parse_dynamic, default=[],
                        metavar="NAME:AXIS:MIN..MAX",
                        help="an axis of an input (by name, or by position for an unnamed one) "
                             "that varies from MIN to MAX at serving time: every variant takes "
                             "the range (repeatable; give each related input's axis)")
    parser.add_argument("--domain", action="append", type=parse_domain, default=[],
                        metavar="NAME:MIN..MAX",
                        help="the values an integer input may hold, MIN to MAX inclusive: every "
                             "call outside them is refused (repeatable; an input that indexes an "
                             "embedding records its rows without it)")
    parser.add_argument("--out", required=True, help="the archive to write (.pt2)")
    parser.add_argument("--variants",
                        help=f"comma-separated, from {', '.join(VARIANT_NAMES)} "
                             "(default: default,freezing, and onnx and openvino where their "
                             "packages import; 'none' for the ExportedProgram only)")
    parser.add_argument("--calibration", metavar="FILE.py:FUNCTION",
                        help="for the int8 variants: a function returning an iterable of input "
                             "tuples (real inputs, never those you will check accuracy on); "
                             "without it, random inputs, with a warning")
    parser.add_argument("--held-out", metavar="FILE.py:FUNCTION",
                        help="for the int8 variants: a function returning an iterable of real "
                             "input tuples the calibration never saw; whether an int8 variant "
                             "needs repair, and its repair, are judged on the first "
                             f"{HELD_OUT_COUNT} (without it: on the example, and the repair on "
                             "random inputs)")
    parser.add_argument("--calibration-samples", type=int, default=300, metavar="N",
                        help="how many calibration inputs the int8 variants use (default 300)")
    parser.add_argument("--repair-iterations", type=int, default=REPAIR_ITERATIONS, metavar="N",
                        help="an onnx_int8 or openvino_int8 whose outputs break is made again "
                             "with NNCF's accuracy control, reverting at most N layer groups to "
                             f"f32 (default {REPAIR_ITERATIONS}; each costs a pass over 100 "
                             "held-out inputs, and more where it ranks the layers again)")
    parser.add_argument("--model-type", choices=("cnn", "transformer"),
                        help="how the int8 variants quantise (default: transformer where most "
                             "of the graph's weighted operations are MatMul)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]")
    parser.add_argument("--seed", type=int, default=0, help="seed of the example inputs")
    parser.add_argument("--save-io", metavar="DIR",
                        help="write the example inputs and eager PyTorch's outputs to "
                             "DIR/inputs.pt and DIR/outputs.pt")
    args = parser.parse_args()
    variants = (default_variants() if args.variants is None else
                [] if args.variants == "none" else args.variants.split(","))
    known = list(VARIANT_NAMES)
    unknown = [v for v in variants if v not in known]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(known)}")
    if not args.out.endswith(".pt2"):
        parser.error("--out must end in .pt2")
    if args.calibration_samples < 1:
        parser.error("--calibration-samples must be 1 or more")
    if args.repair_iterations < 1:
        parser.error("--repair-iterations must be 1 or more")
    quantized = [v for v in variants if v in INT8_VARIANTS]
    if (args.calibration or args.held_out or args.model_type) and not quantized:
        parser.error(f"--calibration, --held-out and --model-type are for the int8 variants "
                     f"({', '.join(INT8_VARIANTS)}): add one to --variants")
    module = load_factory(args.factory, args.path)()
    if not isinstance(module, torch.nn.Module):
        parser.error(f"the factory returned a {type(module).__name__}, not an nn.Module")
    inputs = make_inputs(args.input, args.device, args.seed)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    names = [s.name for s in args.input if s.name]
    if len(set(names)) != len(names):
        parser.error("an input name is given twice")
    # Without --calibration, export() makes random inputs, with its warning.
    calibration = (load_calibration(args.calibration, args.path, args.input,
                                    args.calibration_samples) if args.calibration else None)
    held_out = (load_held_out(args.held_out, args.path, args.input, HELD_OUT_COUNT, calibration)
                if args.held_out else None)
    names, failed = export(module, inputs, args.out, variants, args.device, specs=args.input,
                           save_io=args.save_io, dynamic=args.dynamic, seed=args.seed,
                           calibration=calibration,
                           calibration_samples=args.calibration_samples,
                           model_type=args.model_type,
                           repair_iterations=args.repair_iterations,
                           repair_inputs=held_out and (lambda count: held_out[:count]),
                           domains=args.domain)
    print(f"{args.out}: ExportedProgram 'model'" + (f" and {', '.join(names)}" if names else ""))
    return 1 if failed else 0

