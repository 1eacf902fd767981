"""The program converted to an OpenVINO model (IR), for OpenVINO's CPU plugin."""
import os
import tempfile

from .outputs import check_outputs

RECORDS = ("aitune/openvino/model.xml", "aitune/openvino/model.bin")
PACKAGES = ("openvino",)


def convert(program, names, cases, dynamic):
    """`program` as an OpenVINO model (.xml and .bin bytes, f32 weights), checked with its CPU
    plugin in f32 on each (inputs, expected) of `cases` (the example first, then the range's
    bounds), and its record. Each input is static but for the axes `dynamic` ([(index,
    Dynamic)]) names, which are bounded to their range."""
    import openvino

    inputs = cases[0][0]
    model = openvino.convert_model(program)
    model_inputs = [next(iter(sorted(port.get_names())), "") for port in model.inputs]
    if model_inputs != list(names):
        raise ValueError(f"the OpenVINO model's inputs {model_inputs} are not the program's "
                         f"{list(names)}, in order")
    # The converter leaves every dimension dynamic; the program (like the AOTInductor
    # compilations) takes the example's shapes but on the axes exported as a range, and static
    # dimensions run faster.
    shapes = [[openvino.Dimension(d) for d in t.shape] for t in inputs]
    for index, axis in dynamic:
        shapes[index][axis.axis] = openvino.Dimension(axis.low, axis.high)
    model.reshape({port: openvino.PartialShape(shape) for port, shape in zip(model.inputs, shapes)})
    with tempfile.TemporaryDirectory() as folder:
        xml = os.path.join(folder, "model.xml")
        openvino.save_model(model, xml, compress_to_fp16=False)
        # What is checked is the saved model, as the C++ side reads it.
        model = openvino.Core().read_model(xml)
        files = {}
        for record, path in zip(RECORDS, (xml, os.path.join(folder, "model.bin"))):
            with open(path, "rb") as f:
                files[record] = f.read()
    compiled = openvino.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for case_inputs, expected in cases:
        results = compiled([t.detach().cpu().numpy() for t in case_inputs])
        check_outputs([results[i] for i in range(len(model.outputs))], expected, "OpenVINO")
    record = {"family": "openvino", "precision": "fp32", "records": list(RECORDS),
              "made": {"openvino": openvino.__version__.split("-")[0]},
              "inputs": model_inputs, "outputs": len(model.outputs)}
    return files, record
