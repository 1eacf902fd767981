"""Reduced-precision variants made at export: the converted models quantised to int8 with
calibration inputs. Each is a variant of its runtime's family with a "quantization" record:

  onnx_int8      ONNX Runtime's quantiser on the onnx model (quant_pre_process first): static
                 QDQ, int8 weights per channel and uint8 activations calibrated on the inputs, for
                 a convolutional model; dynamic MatMul quantisation (no calibration) for a
                 transformer. reduce_range where the CPU has no VNNI.
  openvino_int8  NNCF post-training quantisation of the openvino model (NNCF's default preset,
                 MIXED where that breaks the example's outputs; NNCF's transformer model type
                 for a transformer; overflow_fix off VNNI). NNCF comes from
                 tools/requirements-quantize.txt, which tools/setup-venv.sh --quantize installs.

A model is a transformer where --model-type transformer says so, or where most of the ONNX
graph's weighted operations are MatMul/Gemm rather than Conv. Int8 moves the outputs: the variant
is not checked against eager PyTorch's tolerance here (aitune-tune judges it with --accuracy on
inputs the calibration never saw); its cosine similarity on the example and whether its outputs
are finite are recorded under "made". The record holds a digest of each calibration input (as
aitune-cpp digests a sample), so that a tuning can tell held-out inputs from calibration ones.
"""
import hashlib
import importlib
import os
import tempfile

import torch

from .inputs import make_inputs

# What installs the quantisers this module imports (nncf, torchao): nothing installs at run time.
QUANTISERS_SETUP = "tools/setup-venv.sh --quantize"

# c10::toString of each dtype: what aitune-cpp's sample digest names it by.
C10_DTYPE_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half",
                   torch.bfloat16: "BFloat16", torch.int64: "Long", torch.int32: "Int",
                   torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
                   torch.bool: "Bool"}


def sample_digest(inputs):
    """The SHA-256 of one sample as aitune-cpp's digest_samples hashes a one-sample span
    (torch/check/stored_reference.hpp): each tensor's dtype, shape and bytes."""
    hash_ = hashlib.sha256(f"sample:{len(inputs)}(".encode())
    for tensor in inputs:
        dense = tensor.detach().cpu().contiguous()
        shape = ",".join(str(d) for d in dense.shape)
        hash_.update(f"tensor:{C10_DTYPE_NAMES[dense.dtype]}:[{shape}]:".encode())
        raw = dense.view(torch.int16) if dense.dtype == torch.bfloat16 else dense
        hash_.update(raw.numpy().tobytes())
    hash_.update(b")")
    return hash_.hexdigest()


def cpu_has_vnni():
    """Whether this CPU has int8 dot-product instructions (AVX512-VNNI, AVX-VNNI or AMX): without
    them an int8 multiply-add can overflow, which reduce_range and overflow_fix avoid."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(f.read().split())
    except OSError:
        return False
    return bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8"})


class Calibration:
    """The inputs a quantiser calibrates on, where they came from, and their digests."""

    def __init__(self, inputs, source):
        self.inputs = [tuple(t.detach().cpu() for t in sample) for sample in inputs]
        self.source = source
        self.digests = [sample_digest(sample) for sample in self.inputs]

    @classmethod
    def random(cls, specs, count, seed):
        """`count` random inputs, seeds far from the example's and the range bounds'."""
        return cls([make_inputs(specs, "cpu", seed + 1000 + i) for i in range(count)],
                   "random")

    def record(self):
        return {"source": self.source, "count": len(self.inputs), "digests": self.digests}


def is_transformer(files, onnx_record, openvino_xml):
    """Whether most of the weighted operations of the converted model in `files` (record name ->
    bytes: an ONNX graph, or an OpenVINO IR) are MatMul or Gemm rather than convolutions."""
    if onnx_record in files:
        import onnx

        ops = [node.op_type for node in onnx.load_from_string(files[onnx_record]).graph.node]
        return sum(op in ("MatMul", "Gemm") for op in ops) > ops.count("Conv")
    xml = files[openvino_xml].decode(errors="replace")
    return xml.count('type="MatMul"') > xml.count('type="Convolution"')


def compare(run, cases):
    """The least cosine similarity of run(inputs)'s outputs (numpy) with eager PyTorch's over the
    floating outputs of every (inputs, expected) of `cases` (the example, then a range's bounds,
    which the quantised model must take too), and whether all are finite where eager PyTorch's
    are: measured as the tuner measures a candidate under an accuracy budget (aitune_judge: over
    the finite values, NaN and Inf allowed only where the reference has them)."""
    import numpy

    import aitune_judge

    least, finite = 1.0, True
    for inputs, expected in cases:
        wants, gots = [], []
        for out, want in zip(run(inputs), expected):
            want = want.detach().cpu().numpy()
            if numpy.issubdtype(want.dtype, numpy.floating):
                wants.append(want.astype(numpy.float64))
                gots.append(numpy.asarray(out, dtype=numpy.float64).reshape(want.shape))
        problem, outputs = aitune_judge.measure(wants, gots, None)
        finite = finite and problem is None
        for output in outputs:
            if not output.cosine >= least:  # NaN is the worst
                least = output.cosine
    return least, finite


# An int8 model whose least cosine similarity with eager PyTorch is below this, or whose outputs
# are not finite, is made again with accuracy control where the quantiser has it: judged on the
# held-out task inputs where the export has them (see judge), else on the example.
REPAIR_BELOW = 0.999
# The most layer groups NNCF's accuracy control reverts to f32 (one per iteration, each followed by
# a pass over the held-out inputs, and a new ranking of every group where a revert made it worse).
# Without a cap it tries every group: on random-weight EfficientNet-B0 that ran for over 20
# minutes with the drop stuck near 0.009. A model that needs more than this many reverts has lost
# most of int8's gain anyway; the capped result is kept with its figures, and the tuner judges it.
REPAIR_ITERATIONS = 10
# How many of the held-out inputs rank the groups (NNCF's default: all of them). A ranking runs
# every group on them (EfficientNet-B0's 67 groups on 100 inputs: 3.5 minutes on 2 cores) and is
# redone after every revert that made it worse; it only orders the groups, and each revert is
# still judged on every held-out input.
RANKING_INPUTS = 25


def judge(run, cases, judged_on):
    """What decides whether an int8 model is made again: the least cosine similarity and
    finiteness of run's outputs on `judged_on` ((inputs, expected) of held-out task inputs) where
    given, else on `cases` (the example, a range's bounds); and the words that say on what. A
    random example lies off a trained model's inputs, where int8 may drift although the model
    keeps its accuracy on what it serves (trained EfficientNet-B0: 0.9973 on the example, 0.9998
    on the task's inputs), so a repair decided there costs speed for nothing."""
    if judged_on is None:
        return (*compare(run, cases), "the example")
    return (*compare(run, judged_on), f"{len(judged_on)} held-out task inputs")


def judged_figures(judged, judged_on):
    """For "made": the least cosine of judge()'s `judged` figures where the held-out task inputs
    `judged_on` gave them (none where the example did)."""
    return {} if judged_on is None else {"judged_cosine": judged[0]}


def kept(cosine, finite, repair_below):
    """Whether an int8 model's figures (judge) need no repair."""
    return finite and cosine >= repair_below


def least_cosine(run, data):
    """NNCF's validation metric: over (inputs, expected) of `data`, the least cosine similarity of
    run(inputs) with eager PyTorch's (as an accuracy budget judges: its worst input); NaN or Inf
    where eager PyTorch has none scores the worst (-1). Returns it and each item's value."""
    values = []
    for inputs, expected in data:
        outputs = run(inputs)
        least, ok = compare(lambda _, outputs=outputs: outputs, [(inputs, expected)])
        values.append(least if ok and least == least else -1.0)
    return min(values), values


def repair_record(repair_below, items, before, iterations, run):
    """What "quantization" says of a repair: how, on what, the example's figures before, and
    whether it reached its aim: the least cosine of the repaired model `run` over the held-out
    `items` (NNCF measures the drop from the f32 model's; this is from eager PyTorch's)."""
    held_out_cosine = least_cosine(run, items)[0]
    return {"method": "nncf quantize_with_accuracy_control",
            "metric": "least cosine similarity with eager PyTorch (NaN: -1)",
            "max_drop": 1.0 - repair_below, "validation_count": len(items),
            "max_iterations": iterations, "ranking_count": min(RANKING_INPUTS, len(items)),
            "before": before,
            "held_out_cosine": held_out_cosine, "reached": held_out_cosine >= repair_below}


def accuracy_control_parameters(nncf, iterations):
    """NNCF's accuracy-control settings: at most `iterations` layer groups reverted, ranked on
    RANKING_INPUTS of the held-out inputs."""
    if iterations < 1:
        raise ValueError(f"the repair's iteration cap must be 1 or more, got {iterations}")
    return nncf.AdvancedAccuracyRestorerParameters(max_num_iterations=iterations,
                                                   ranking_subset_size=RANKING_INPUTS)


def outputs_of(compiled, inputs):
    """A compiled OpenVINO model's outputs on `inputs`, in order."""
    results = compiled(inputs)
    return [results[i] for i in range(len(compiled.outputs))]


def require_quantiser(module_name):
    """Imports `module_name` (nncf, torchao: pinned in tools/requirements-quantize.txt). Where
    this Python lacks it, raises ImportError naming the command that installs it: an export
    installs nothing itself (the variant that needs it fails with that cause, named)."""
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(f"{module_name} is not installed (the int8 variants' quantisers are not "
                          f"part of the default set-up): run {QUANTISERS_SETUP}") from error


def ensure_nncf():
    return require_quantiser("nncf")


def ensure_torchao():
    return require_quantiser("torchao")


def onnx_int8(onnx_bytes, names, cases, calibration, transformer, log=print, validation=None,
              repair_below=REPAIR_BELOW, repair_iterations=REPAIR_ITERATIONS, judged_on=None):
    """The ONNX model quantised to int8 (bytes) and its record's "quantization" and "made".
    Where its outputs on `judged_on` (else `cases`; see judge) are not finite or their least
    cosine similarity with eager PyTorch's is below `repair_below`, it is made again by NNCF's ONNX
    quantiser with accuracy control on validation(), reverting at most `repair_iterations` layer
    groups (see openvino_int8), and "quantization" says so under "repaired"."""
    import onnx
    import onnxruntime
    from onnxruntime import quantization as q

    reduce_range = not cpu_has_vnni()
    with tempfile.TemporaryDirectory() as folder:
        source, prepared, out = (os.path.join(folder, n) for n in
                                 ("model.onnx", "prepared.onnx", "int8.onnx"))
        with open(source, "wb") as f:
            f.write(onnx_bytes)
        q.quant_pre_process(source, prepared, skip_symbolic_shape=True)
        if transformer:
            q.quantize_dynamic(prepared, out, weight_type=q.QuantType.QInt8,
                               per_channel=True, reduce_range=reduce_range,
                               op_types_to_quantize=["MatMul", "Gemm"])
            method = {"method": "onnxruntime quantize_dynamic", "op_types": ["MatMul", "Gemm"]}
        else:
            graph_inputs = [i.name for i in onnx.load(prepared).graph.input]

            class Reader(q.CalibrationDataReader):
                def __init__(self):
                    self.samples = iter(calibration.inputs)

                def get_next(self):
                    sample = next(self.samples, None)
                    if sample is None:
                        return None
                    by_name = dict(zip(names, sample))
                    return {name: by_name[name].numpy() for name in graph_inputs}

            q.quantize_static(prepared, out, Reader(), quant_format=q.QuantFormat.QDQ,
                              per_channel=True, reduce_range=reduce_range,
                              activation_type=q.QuantType.QUInt8,
                              weight_type=q.QuantType.QInt8)
            method = {"method": "onnxruntime quantize_static", "format": "QDQ",
                      "calibration": calibration.record()}
        with open(out, "rb") as f:
            data = f.read()
    def runner(model_bytes):
        session = onnxruntime.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
        graph_inputs = [i.name for i in session.get_inputs()]

        def run(inputs):
            by_name = dict(zip(names, inputs))
            return session.run(None, {n: by_name[n].detach().cpu().numpy()
                                      for n in graph_inputs})
        return run

    run = runner(data)
    cosine, finite = compare(run, cases)
    judged = judge(run, cases, judged_on)
    quantization = {"dtype": "int8", "per_channel": True, "reduce_range": reduce_range,
                    "judged_on": judged[2], **method}
    if validation is not None and not kept(*judged[:2], repair_below):
        nncf = ensure_nncf()
        items = validation()
        log(f"onnx_int8: cosine {judged[0]:.6f}{'' if judged[1] else ', not finite'} on "
            f"{judged[2]}; made again by NNCF with accuracy control on {len(items)} held-out "
            f"inputs")
        model = onnx.load_from_string(onnx_bytes)
        graph_inputs = [i.name for i in model.graph.input]

        def transform(sample):
            by_name = dict(zip(names, sample))
            return {name: by_name[name].detach().cpu().numpy() for name in graph_inputs}

        def validate(candidate, data):
            return least_cosine(runner(candidate.SerializeToString()), data)

        options = {"preset": nncf.QuantizationPreset.MIXED,
                   "subset_size": len(calibration.inputs)}
        if transformer:
            options["model_type"] = nncf.ModelType.TRANSFORMER
        repaired = nncf.quantize_with_accuracy_control(
            model, nncf.Dataset(calibration.inputs, transform), nncf.Dataset(items), validate,
            max_drop=1.0 - repair_below, drop_type=nncf.DropType.ABSOLUTE,
            advanced_accuracy_restorer_parameters=accuracy_control_parameters(
                nncf, repair_iterations), **options)
        before = {"cosine": judged[0], "finite": judged[1], "on": judged[2]}
        data = repaired.SerializeToString()
        run = runner(data)  # one session for the example and the held-out inputs
        cosine, finite = compare(run, cases)
        judged = judge(run, cases, judged_on)
        quantization = {"dtype": "int8", "method": "nncf post-training quantization",
                        "preset": "mixed", "calibration": calibration.record(),
                        "judged_on": judged[2],
                        "repaired": repair_record(repair_below, items, before,
                                                  repair_iterations, run)}
    made = {"onnxruntime": onnxruntime.__version__, "example_cosine": cosine,
            "example_finite": finite, **judged_figures(judged, judged_on)}
    return data, quantization, made


def openvino_int8(xml_bytes, bin_bytes, names, cases, calibration, transformer, log,
                  validation=None, repair_below=REPAIR_BELOW,
                  repair_iterations=REPAIR_ITERATIONS, judged_on=None):
    """The OpenVINO model quantised to int8 by NNCF ((xml, bin) bytes), and its record's
    "quantization" and "made". It breaks where its outputs on `judged_on` (else `cases`; see
    judge) are not finite or their least cosine similarity with eager PyTorch's is below
    `repair_below`. A CNN broken at NNCF's default preset is made at MIXED; one still broken is
    made again with NNCF's accuracy control on validation() ([(inputs, expected)], held-out
    inputs), which keeps the layers that cost the most accuracy in f32 until the least cosine on
    them is within 1 - repair_below of the f32 model's, or `repair_iterations` layer groups are
    reverted; "quantization" then has "repaired", which says whether it got there."""
    nncf = ensure_nncf()
    import openvino

    core = openvino.Core()
    with tempfile.TemporaryDirectory() as folder:
        for name, data in (("model.xml", xml_bytes), ("model.bin", bin_bytes)):
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        model = core.read_model(os.path.join(folder, "model.xml"))
    ports = [next(iter(sorted(port.get_names())), "") for port in model.inputs]

    def transform(sample):
        by_name = dict(zip(names, sample))
        return [by_name[name].detach().cpu().numpy() for name in ports]

    overflow_fix = (nncf.OverflowFix.ENABLE if not cpu_has_vnni()
                    else nncf.OverflowFix.FIRST_LAYER)
    # NNCF's default preset first: for a CNN, PERFORMANCE (symmetric activations), the fastest on
    # a CPU and what a user quantising by hand gets (on a Zen 4 EPYC a trained MobileNetV3-Small
    # ran 12 % faster so than with MIXED); for a transformer NNCF's default is MIXED already.
    options = {"subset_size": len(calibration.inputs),
               "advanced_parameters": nncf.AdvancedQuantizationParameters(
                   overflow_fix=overflow_fix)}
    if transformer:
        options["model_type"] = nncf.ModelType.TRANSFORMER
    calibration_data = nncf.Dataset(calibration.inputs, transform)

    def saved(quantized):
        """The model's (xml, bin) bytes as saved, and a function running it compiled from them."""
        with tempfile.TemporaryDirectory() as folder:
            xml = os.path.join(folder, "model.xml")
            openvino.save_model(quantized, xml, compress_to_fp16=False)
            with open(xml, "rb") as f:
                xml_out = f.read()
            with open(os.path.join(folder, "model.bin"), "rb") as f:
                bin_out = f.read()
            compiled = core.compile_model(core.read_model(xml), "CPU",
                                          {"INFERENCE_PRECISION_HINT": "f32"})
        return (xml_out, bin_out), lambda inputs: outputs_of(compiled, transform(inputs))

    files, run = saved(nncf.quantize(model, calibration_data, **options))
    judged = judge(run, cases, judged_on)
    preset = "mixed" if transformer else "performance"
    if not transformer and not kept(*judged[:2], repair_below):
        # Asymmetric activations (MIXED) fit a layer whose activations are not centred on zero:
        # tried before the accuracy control's slower repair, which starts from it too.
        log(f"openvino_int8: cosine {judged[0]:.6f}{'' if judged[1] else ', not finite'} on "
            f"{judged[2]} with NNCF's default preset; made again with its MIXED preset")
        options["preset"] = nncf.QuantizationPreset.MIXED
        files, run = saved(nncf.quantize(model, calibration_data, **options))
        judged = judge(run, cases, judged_on)
        preset = "mixed"
    quantization = {"dtype": "int8", "method": "nncf post-training quantization",
                    "preset": preset, "model_type": "transformer" if transformer else "default",
                    "overflow_fix": overflow_fix.value, "calibration": calibration.record(),
                    "judged_on": judged[2]}
    if validation is not None and not kept(*judged[:2], repair_below):
        items = validation()
        log(f"openvino_int8: cosine {judged[0]:.6f}{'' if judged[1] else ', not finite'} on "
            f"{judged[2]}; made again with NNCF's accuracy control on {len(items)} held-out "
            f"inputs")

        def validate(compiled_model, data):
            return least_cosine(lambda inputs: outputs_of(compiled_model, transform(inputs)),
                                data)

        repair_options = dict(options)  # its name for the same parameters differs
        repair_options["advanced_quantization_parameters"] = repair_options.pop(
            "advanced_parameters")
        quantized = nncf.quantize_with_accuracy_control(
            model, calibration_data, nncf.Dataset(items), validate,
            max_drop=1.0 - repair_below, drop_type=nncf.DropType.ABSOLUTE,
            advanced_accuracy_restorer_parameters=accuracy_control_parameters(
                nncf, repair_iterations), **repair_options)
        before = {"cosine": judged[0], "finite": judged[1], "on": judged[2]}
        files, run = saved(quantized)
        judged = judge(run, cases, judged_on)
        quantization["repaired"] = repair_record(repair_below, items, before,
                                                 repair_iterations, run)
    xml_out, bin_out = files
    cosine, finite = compare(run, cases)
    made = {"nncf": nncf.__version__, "openvino": openvino.__version__.split("-")[0],
            "example_cosine": cosine, "example_finite": finite,
            **judged_figures(judged, judged_on)}
    return (xml_out, bin_out), quantization, made
