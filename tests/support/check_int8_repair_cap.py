# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Checks that the export tool's repair of a broken int8 model (NNCF's accuracy control, for
onnx_int8 and openvino_int8) is capped at --repair-iterations reverted layer groups, and that its
record says whether the repaired model reached the aim on the held-out inputs, and that a CNN's
OpenVINO model is quantised at NNCF's default preset, then MIXED where that breaks the example,
and that where the export has held-out task inputs, they, not the example, decide whether an int8
model is made again. CI has no NNCF:
a stand-in records what it is asked and returns the f32 model unchanged (as a repair that
reverted every layer would).

The model is one MatMul written with onnx.helper. The example's expected outputs are negated,
so its int8 model measures cosine -1 there and must be repaired; the held-out inputs'
expected outputs are right (the f32 model then reaches the aim) or negated (it does not).

Usage: check_int8_repair_cap.py   (exit 0: every check passed)
"""
import os
import sys
import types

import numpy
import torch

from aitune_export import quantize

asked = []
presets = []  # the preset of each nncf.quantize call (None: NNCF's default)


def fake_nncf():
    """The part of NNCF that quantize.onnx_int8 and openvino_int8 call."""
    nncf = types.ModuleType("nncf")
    nncf.__version__ = "stand-in"
    nncf.QuantizationPreset = types.SimpleNamespace(MIXED="mixed")
    nncf.ModelType = types.SimpleNamespace(TRANSFORMER="transformer")
    nncf.DropType = types.SimpleNamespace(ABSOLUTE="absolute")
    nncf.OverflowFix = types.SimpleNamespace(ENABLE=types.SimpleNamespace(value="enable"),
                                             FIRST_LAYER=types.SimpleNamespace(value="first_layer"))
    nncf.AdvancedQuantizationParameters = lambda **kwargs: kwargs

    def quantize(model, calibration, **options):
        presets.append(options.get("preset"))
        return model  # "int8": the f32 model

    nncf.quantize = quantize

    class Dataset:
        def __init__(self, items, transform=None):
            self.items, self.transform = list(items), transform

    class AdvancedAccuracyRestorerParameters:
        def __init__(self, max_num_iterations, ranking_subset_size):
            self.max_num_iterations = max_num_iterations
            self.ranking_subset_size = ranking_subset_size

    def quantize_with_accuracy_control(model, calibration, validation, validate, max_drop,
                                       drop_type, advanced_accuracy_restorer_parameters=None,
                                       **options):
        validated = model
        if not hasattr(model, "SerializeToString"):  # OpenVINO: NNCF validates it compiled
            import openvino
            validated = openvino.Core().compile_model(model, "CPU")
        asked.append({"max_drop": max_drop, "drop_type": drop_type,
                      "parameters": advanced_accuracy_restorer_parameters,
                      "validated": validate(validated, validation.items)[0]})
        return model

    nncf.Dataset = Dataset
    nncf.AdvancedAccuracyRestorerParameters = AdvancedAccuracyRestorerParameters
    nncf.quantize_with_accuracy_control = quantize_with_accuracy_control
    return nncf


def matmul_model(weight):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def openvino_files(onnx_bytes):
    """The ONNX model converted to OpenVINO IR: (xml, bin) bytes."""
    import tempfile

    import openvino
    with tempfile.TemporaryDirectory() as folder:
        source, xml = os.path.join(folder, "model.onnx"), os.path.join(folder, "model.xml")
        with open(source, "wb") as f:
            f.write(onnx_bytes)
        openvino.save_model(openvino.convert_model(source), xml, compress_to_fp16=False)
        with open(xml, "rb") as f, open(os.path.join(folder, "model.bin"), "rb") as g:
            return f.read(), g.read()


def main():
    sys.modules["nncf"] = fake_nncf()
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(16, 8, generator=generator)
    inputs = [(torch.randn(4, 16, generator=generator),) for _ in range(12)]

    def expected(sample, sign):
        return [sign * (sample[0] @ weight)]

    model = matmul_model(weight.numpy())
    example = [(inputs[0], expected(inputs[0], -1.0))]  # breaks every int8 model of it
    calibration = quantize.Calibration(inputs[1:5], "random")
    failures = []

    def check(what, ok):
        print(f"{'ok' if ok else 'FAILED'}: {what}")
        if not ok:
            failures.append(what)

    ir = openvino_files(model)

    def int8(family, held_out, judged_on=None, transformer=True):
        return getattr(quantize, family)(*((model,) if family == "onnx_int8" else ir), ["x"],
                                         example, calibration, transformer=transformer,
                                         log=lambda line: None, validation=lambda: held_out,
                                         repair_iterations=3, judged_on=judged_on)

    def onnx_int8(held_out):
        return int8("onnx_int8", held_out)

    def openvino_int8(held_out):
        return int8("openvino_int8", held_out)

    for (family, make), (held_out_sign, reaches) in (
            (pair, signs) for pair in (("onnx_int8", onnx_int8), ("openvino_int8", openvino_int8))
            for signs in ((1.0, True), (-1.0, False))):
        asked.clear()
        held_out = [(sample, expected(sample, held_out_sign)) for sample in inputs[5:]]
        _, quantization, made = make(held_out)
        repaired = quantization.get("repaired")
        label = f"{family}, held-out outputs {'right' if reaches else 'negated'}"
        check(f"{label}: the broken int8 model is repaired", repaired is not None)
        if repaired is None:
            continue
        check(f"{label}: NNCF is asked for at most 3 reverts",
              len(asked) == 1 and asked[0]["parameters"] is not None
              and asked[0]["parameters"].max_num_iterations == 3
              and asked[0]["parameters"].ranking_subset_size == quantize.RANKING_INPUTS)
        check(f"{label}: the record names the cap",
              repaired["max_iterations"] == 3)
        want_cosine = 1.0 if reaches else -1.0
        check(f"{label}: held-out least cosine {repaired['held_out_cosine']:.6f}"
              f" is {want_cosine:g}", abs(repaired["held_out_cosine"] - want_cosine) < 1e-5)
        check(f"{label}: reached is {reaches}", repaired["reached"] is reaches)
        check(f"{label}: the example's figures before are kept",
              repaired["before"]["cosine"] < 0 and numpy.isfinite(made["example_cosine"]))
    # A CNN's OpenVINO model is quantised at NNCF's default preset first, again at MIXED only
    # where that breaks the example, and the record says which preset made it.
    for example_sign, want_presets, want_record in ((1.0, [None], "performance"),
                                                    (-1.0, [None, "mixed"], "mixed")):
        presets.clear()
        _, quantization, _ = quantize.openvino_int8(
            *ir, ["x"], [(inputs[0], expected(inputs[0], example_sign))], calibration,
            transformer=False, log=lambda line: None)
        check(f"a CNN whose example is {'kept' if example_sign > 0 else 'broken'}: presets "
              f"{presets}, recorded {quantization['preset']}",
              presets == want_presets and quantization["preset"] == want_record)
    # Judged on held-out task inputs, the example (broken here) decides nothing: where they keep
    # the int8 model it is neither repaired nor made again at MIXED; where they break it, it is.
    for family, transformer in (("onnx_int8", True), ("openvino_int8", True),
                                ("openvino_int8", False)):
        for held_out_sign in (1.0, -1.0):
            asked.clear()
            presets.clear()
            held_out = [(sample, expected(sample, held_out_sign)) for sample in inputs[5:]]
            _, quantization, made = int8(family, held_out, held_out, transformer)
            repaired = quantization.get("repaired")
            label = (f"{family}{'' if transformer else ' (CNN)'}, judged on held-out task inputs "
                     f"{'kept' if held_out_sign > 0 else 'broken'}")
            on = f"{len(held_out)} held-out task inputs"
            if held_out_sign > 0:
                check(f"{label}: not repaired although the example breaks (cosine "
                      f"{made['example_cosine']:.3f}), recorded judged on {on}",
                      repaired is None and not asked and made["example_cosine"] < 0
                      and quantization["judged_on"] == on)
                if not transformer:
                    check(f"{label}: kept at NNCF's default preset ({presets})",
                          presets == [None] and quantization["preset"] == "performance")
            else:
                check(f"{label}: repaired, the record says on what it broke",
                      repaired is not None and len(asked) == 1
                      and repaired["before"]["on"] == on and repaired["before"]["cosine"] < 0)
    try:
        quantize.accuracy_control_parameters(sys.modules["nncf"], 0)
        check("a cap of 0 is refused", False)
    except ValueError as error:
        check(f"a cap of 0 is refused ({error})", "1 or more" in str(error))
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
