# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Writes damaged copies of dict_outputs.pt2 (make_exported_models.py: the ExportedProgram, an
`aoti_default` compilation, its ONNX model and OpenVINO IR), each with one fault an archive from
outside could have, for the tests of the archive reader and the runtime backends:

  none_leaves_repeated  extra/aitune.json's none_leaves name one leaf twice ([4, 4] of an output
                        structure of five leaves: three outputs and two Nones, by count)
  precision_number      variants.aoti_default.precision is the number 16, not a name
  records_unreadable    extra/aitune.json is cut off mid-object: not JSON
  record_missing        variants.onnx.records[0] names a record the archive does not hold
  reason_long           no ONNX model, and failed.onnx is a 100 000-character cause
  library_garbage       aoti_default's compiled library is 64 KiB of noise
  ir_input_int64        the IR's first input says int64: OpenVINO refuses the graph
  ir_weights_scaled     the IR's weights are 5 % too large: a wrong graph that bf16's tolerance
                        would pass
  record_bomb           the ONNX model's record is deflated: 256 MiB of zeros in 256 KiB, a zip
                        bomb (PyTorch's writer stores every record unpacked)
  range_symbol_twice    a range record whose one symbol has two ranges (x 2..8, mask 2..4): the
                        bounds a tuning checks at would be inputs the program cannot take
  range_batch           a range on the batch axis (axis 0) only, 1..8 on both inputs: legitimate
                        (batching builds on it), and no length for --lengths to set
  families_swapped      the onnx variant recorded as of the family openvino (with the IR's two
                        records), the openvino one as of the family onnx (with the ONNX record)
  unknown_many          21 variants of a family the reader does not know, one named with a
                        newline, terminal control sequences and 500 more characters
  variants_renamed      the ONNX model and the IR under names of their own (onnx_main, ov_main),
                        one more ONNX variant naming a record the archive lacks (onnx2), and
                        a compilation the archive does not hold (aoti_ghost)
  entry_escapes         one more record of aoti_default named `.../aoti_default/../../..` up to
                        the root and down to DIR/zip_slip_victim.txt: a zip slip, which LibTorch's
                        AOTInductor loader would write outside its temporary folder

Each is rewritten from the original every time (they are small and quick to make).

Usage: make_damaged_archives.py --dir DIR (the folder with dict_outputs.pt2)
"""
import argparse
import json
import os
import random
import sys
import zipfile


def rewrite(source, target, change):
    """Copies the zip `source` to `target`, each record through `change(name, data)`, which
    returns the new bytes, or None to leave the record out. Records are stored, as PyTorch's
    writer stores them."""
    with zipfile.ZipFile(source) as original:
        records = [(info.filename, original.read(info.filename)) for info in original.infolist()]
    tmp = f"{target}.tmp{os.getpid()}"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as copy:
        for name, data in records:
            data = change(name, data)
            if data is not None:
                copy.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    os.replace(tmp, target)


def editing_records(edit):
    """A change that passes every record but extra/aitune.json, whose JSON `edit(j)` changes."""
    def change(name, data):
        if not name.endswith("extra/aitune.json"):
            return data
        recorded = json.loads(data)
        edit(recorded)
        return json.dumps(recorded).encode()
    return change


def replacing(suffix, make):
    """A change that replaces the record whose name ends with `suffix` by `make(data)`."""
    return lambda name, data: make(data) if name.endswith(suffix) else data


def leaves_repeated(recorded):
    leaf = {"type": None, "context": None, "children_spec": []}
    recorded["out_spec"] = json.dumps(
        [1, {"type": "builtins.tuple", "context": "null", "children_spec": [leaf] * 5}])
    recorded["none_leaves"] = [4, 4]


def precision_number(recorded):
    recorded["variants"]["aoti_default"]["precision"] = 16


def record_missing(recorded):
    recorded["variants"]["onnx"]["records"][0] = "aitune/onnx/missing.onnx"


def range_symbol_twice(recorded):
    recorded["dynamic"] = [{"input": "x", "axis": 1, "min": 2, "max": 8, "symbol": "s0"},
                           {"input": "mask", "axis": 1, "min": 2, "max": 4, "symbol": "s0"}]


def range_batch(recorded):
    recorded["dynamic"] = [{"input": "x", "axis": 0, "min": 1, "max": 8, "symbol": "s0"},
                           {"input": "mask", "axis": 0, "min": 1, "max": 8, "symbol": "s0"}]


def families_swapped(recorded):
    variants = recorded["variants"]
    onnx, openvino = variants["onnx"], variants["openvino"]
    onnx_records, openvino_records = onnx["records"], openvino["records"]
    onnx.update(family="openvino", records=openvino_records)
    openvino.update(family="onnx", records=onnx_records)


def unknown_many(recorded):
    for i in range(20):
        recorded["variants"][f"u{i:02}"] = {"family": "trt"}
    recorded["variants"]["evil\n\x1b]0;PWNED\x07\x1b[2J" + "N" * 500] = {"family": "trt\x1b[31m"}


def variants_renamed(recorded):
    variants = recorded["variants"]
    variants["onnx_main"] = variants.pop("onnx")
    variants["ov_main"] = variants.pop("openvino")
    variants["onnx2"] = {"family": "onnx", "records": ["nope"]}
    variants["aoti_ghost"] = {"family": "aoti"}


def reason_long(recorded):
    del recorded["variants"]["onnx"]
    recorded.setdefault("failed", {})["onnx"] = "x" * 100_000


def ir_input_int64(data):
    text = data.decode()
    return text.replace('element_type="f32"', 'element_type="i64"', 1).encode()


def ir_weights_scaled(source, target):
    """The IR with every f32 constant of more than one element multiplied by 1.05."""
    import numpy
    import openvino
    with zipfile.ZipFile(source) as original:
        names = original.namelist()
        xml_name = next(n for n in names if n.endswith("aitune/openvino/model.xml"))
        bin_name = next(n for n in names if n.endswith("aitune/openvino/model.bin"))
        xml, weights = original.read(xml_name), original.read(bin_name)
    core = openvino.Core()
    model = core.read_model(xml.decode(), openvino.Tensor(numpy.frombuffer(weights, numpy.uint8)))
    scaled = 0
    for op in model.get_ops():
        if op.get_type_name() != "Constant" or op.get_element_type() != openvino.Type.f32:
            continue
        values = op.get_data()
        if values.size <= 1:
            continue
        replacement = openvino.op.Constant((values * 1.05).astype(numpy.float32))
        op.output(0).replace(replacement.output(0))
        scaled += 1
    if scaled == 0:
        raise RuntimeError("the IR has no f32 weights to scale")
    folder = os.path.dirname(target)
    xml_path, bin_path = os.path.join(folder, "scaled.xml"), os.path.join(folder, "scaled.bin")
    openvino.save_model(model, xml_path, compress_to_fp16=False)
    with open(xml_path, "rb") as f:
        new_xml = f.read()
    with open(bin_path, "rb") as f:
        new_bin = f.read()
    os.remove(xml_path)
    os.remove(bin_path)
    rewrite(source, target,
            lambda name, data: new_xml if name == xml_name else new_bin if name == bin_name
            else data)


def record_bomb(source, target):
    """`source` with its ONNX model replaced by 256 MiB of zeros, deflated, written in pieces."""
    with zipfile.ZipFile(source) as original:
        onnx_name = next(n for n in original.namelist() if n.endswith("aitune/onnx/model.onnx"))
    rewrite(source, target, lambda name, data: None if name == onnx_name else data)
    info = zipfile.ZipInfo(onnx_name, (1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    zeros = bytes(1 << 20)
    with zipfile.ZipFile(target, "a") as copy, copy.open(info, "w", force_zip64=True) as record:
        for _ in range(256):
            record.write(zeros)


def entry_escapes(source, target, victim):
    """`source` with one more record under aoti_default whose name climbs out of any folder it is
    unpacked into and ends at the absolute path `victim`."""
    with zipfile.ZipFile(source) as original:
        top = original.namelist()[0].split("/")[0]
    rewrite(source, target, lambda name, data: data)
    climb = "../" * 16 + os.path.abspath(victim).lstrip("/")
    name = f"{top}/data/aotinductor/aoti_default/{climb}"
    with zipfile.ZipFile(target, "a", zipfile.ZIP_STORED) as copy:
        copy.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), b"written by a zip slip\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    source = os.path.join(args.dir, "dict_outputs.pt2")
    if not os.path.exists(source):
        print(f"{source}: missing (make_exported_models.py makes it)", file=sys.stderr)
        return 1
    noise = random.Random(0).randbytes(64 * 1024)
    damaged = {
        "none_leaves_repeated": editing_records(leaves_repeated),
        "precision_number": editing_records(precision_number),
        "records_unreadable": replacing("extra/aitune.json", lambda data: b'{"aoti": '),
        "record_missing": editing_records(record_missing),
        "reason_long": editing_records(reason_long),
        "range_symbol_twice": editing_records(range_symbol_twice),
        "unknown_many": editing_records(unknown_many),
        "families_swapped": editing_records(families_swapped),
        "variants_renamed": editing_records(variants_renamed),
        "range_batch": editing_records(range_batch),
        "library_garbage": replacing(".wrapper.so", lambda data: noise),
        "ir_input_int64": replacing("aitune/openvino/model.xml", ir_input_int64),
    }
    for name, change in damaged.items():
        rewrite(source, os.path.join(args.dir, f"damaged_{name}.pt2"), change)
        print(f"damaged_{name}.pt2")
    ir_weights_scaled(source, os.path.join(args.dir, "damaged_ir_weights_scaled.pt2"))
    print("damaged_ir_weights_scaled.pt2")
    record_bomb(source, os.path.join(args.dir, "damaged_record_bomb.pt2"))
    print("damaged_record_bomb.pt2")
    victim = os.path.join(args.dir, "zip_slip_victim.txt")
    if os.path.exists(victim):
        os.remove(victim)
    entry_escapes(source, os.path.join(args.dir, "damaged_entry_escapes.pt2"), victim)
    print("damaged_entry_escapes.pt2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
