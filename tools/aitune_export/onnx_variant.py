"""The program converted to ONNX, for ONNX Runtime."""
import os
import tempfile

import torch

from .inputs import clone_inputs
from .outputs import check_outputs

RECORD = "aitune/onnx/model.onnx"
PACKAGES = ("onnx", "onnxscript", "onnxruntime")  # onnxruntime checks the converted model


def convert(program, names, cases, dynamic):
    """`program` as ONNX (bytes), checked with ONNX Runtime on each (inputs, expected) of `cases`
    (the example first, then the range's bounds), and its record. The exporter takes the
    program's symbolic sizes as the graph's dynamic axes (`dynamic` needs nothing more here)."""
    del dynamic
    import onnx
    import onnxruntime

    inputs = cases[0][0]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        # The program's input names name the graph's inputs, which the C++ side feeds by name.
        torch.onnx.export(program, args=clone_inputs(inputs), f=path, dynamo=True,
                          external_data=False, input_names=list(names), verbose=False)
        with open(path, "rb") as f:
            data = f.read()
    proto = onnx.load_from_string(data)
    graph_inputs = [i.name for i in proto.graph.input]
    if any(name not in names for name in graph_inputs):
        raise ValueError(f"the ONNX graph's inputs {graph_inputs} are not the program's {names}")
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    for case_inputs, expected in cases:
        by_name = dict(zip(names, case_inputs))
        outputs = session.run(None, {name: by_name[name].detach().cpu().numpy()
                                     for name in graph_inputs})
        check_outputs(outputs, expected, "ONNX Runtime")
    opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    record = {"family": "onnx", "precision": "fp32", "records": [RECORD],
              "made": {"onnx": onnx.__version__, "opset": opset,
                       "exporter": "torch.onnx (dynamo)"},
              "inputs": graph_inputs, "outputs": len(proto.graph.output)}
    return {RECORD: data}, record
