"""Peers that quantise, and outputs judged against an accuracy budget, for tools/bench_peers.py
--accuracy: what a user could do by hand with the same packages, and how far each contestant's
outputs move from eager PyTorch's, measured as aitune-tune measures a candidate under --accuracy.

- The quantising peers, each at its package's defaults (no per-model tuning, as a user following
  the package's guide would run them), calibrated on `calibration` inputs:
  - ONNX Runtime: quantize_static (QDQ, per-tensor, uint8 activations, int8 weights) for a
    convolutional model; quantize_dynamic for a transformer, as ONNX Runtime's guide advises;
  - OpenVINO: NNCF's nncf.quantize (its default preset; its transformer model type for a
    transformer, as its guide advises).
  Each is made once, in a copy of the model's archive where it is a variant of its own
  (PEER_VARIANTS, write_peer_archive): so the C++ alone timing (aitune-bench-alone
  --contestant LABEL=openvino:VARIANT) runs the very model the harness judges.
- Accuracy, on held-out inputs none of the calibration inputs is among (their seeds differ), per
  output: the least cosine similarity over the inputs (NaN or infinity counts as -1), and for
  the first output with two or more classes in its last dimension, the share of its rows whose
  top-1 class agrees with eager PyTorch's (aitune-tune's topK measure at k = 1).
"""
import json
import math
import os
import tempfile
import zipfile

import torch

# Far from the seeds of tools/bench_peers.py's timing inputs (1), of the tuner's samples and of
# tools/aitune_export's calibration (seed + 1000 + i).
HELD_OUT_SEED = 20_000
CALIBRATION_SEED = 40_000


def parse_accuracy(text):
    """'cosine=C,top1=P%' (either or both) -> {"cosine": C, "top1": P / 100}: the part of
    aitune-tune's --accuracy syntax this benchmark judges peers by."""
    budget = {}
    for part in text.split(","):
        name, _, value = part.strip().partition("=")
        try:
            if name == "cosine":
                budget["cosine"] = float(value)
            elif name == "top1" and value.endswith("%"):
                budget["top1"] = float(value[:-1]) / 100.0
            else:
                raise ValueError(part)
        except ValueError:
            raise ValueError(f"--accuracy takes cosine=C and top1=P% (comma-separated), got "
                             f"'{part}'") from None
    return budget


def random_inputs(specs, count, seed):
    """`count` tuples of random inputs for `specs` (aitune_export.inputs.Input: standard normal
    floats, integers uniform over their range), input i from seed `seed` + i."""
    from aitune_export.inputs import make_inputs
    return [make_inputs(specs, "cpu", seed + i) for i in range(count)]


def cosine(expected, got):
    """Cosine similarity of two outputs, flattened; -1 where either is not finite."""
    a, b = expected.double().flatten(), got.double().reshape(expected.shape).flatten()
    if not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        return -1.0
    norms = float(a.norm() * b.norm())
    if norms == 0.0:
        return 1.0 if float(a.norm()) == float(b.norm()) else 0.0
    return float(a.dot(b)) / norms


def measure(run, held_out, expected, as_tensors, class_scores=True):
    """`run` (inputs -> outputs) on every held-out input, against eager PyTorch's `expected`
    outputs (one per input): {"cosine": least over outputs and inputs, "top1": the agreeing
    share of rows, or None where no output has classes or `class_scores` says the model's
    outputs are not class scores}."""
    least, agreed, rows = math.inf, 0, 0
    for inputs, want in zip(held_out, expected):
        wants, gots = as_tensors(want), as_tensors(run(inputs))
        for w, g in zip(wants, gots):
            least = min(least, cosine(w, g))
        scores = next((i for i, w in enumerate(wants) if w.dim() >= 1 and w.shape[-1] >= 2),
                      None) if class_scores else None
        if scores is not None:
            w = wants[scores].reshape(-1, wants[scores].shape[-1])
            g = gots[scores].reshape(w.shape)
            agreed += int((w.argmax(-1) == g.argmax(-1)).sum())
            rows += w.shape[0]
    return {"cosine": least, "top1": agreed / rows if rows else None}


def within(accuracy, budget):
    """Whether measured `accuracy` meets every measure of `budget`."""
    if "cosine" in budget and not accuracy["cosine"] >= budget["cosine"]:
        return False
    if "top1" in budget and accuracy["top1"] is not None and accuracy["top1"] < budget["top1"]:
        return False
    return True


def onnx_int8_defaults(onnx_bytes, calibration, transformer):
    """ONNX Runtime's quantiser at its defaults: the quantised model's bytes."""
    from onnxruntime import InferenceSession
    from onnxruntime.quantization import CalibrationDataReader, quantize_dynamic, quantize_static

    names = [i.name for i in InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
             .get_inputs()]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.samples = iter(calibration)

        def get_next(self):
            sample = next(self.samples, None)
            return None if sample is None else {n: t.numpy() for n, t in zip(names, sample)}

    with tempfile.TemporaryDirectory() as scratch:
        source, target = (os.path.join(scratch, name) for name in ("model.onnx", "int8.onnx"))
        with open(source, "wb") as f:
            f.write(onnx_bytes)
        if transformer:
            quantize_dynamic(source, target)
        else:
            quantize_static(source, target, Reader())
        with open(target, "rb") as f:
            return f.read()


def openvino_int8_defaults(model, calibration, transformer, log):
    """NNCF post-training quantisation of an OpenVINO model at its defaults, with NNCF's
    transformer model type for a transformer, as NNCF's guide advises (at the default type NNCF
    3.4 fails on a BERT: KeyError on its embedding's Gather)."""
    from aitune_export.quantize import ensure_nncf

    nncf = ensure_nncf()
    options = {"model_type": nncf.ModelType.TRANSFORMER} if transformer else {}
    return nncf.quantize(model, nncf.Dataset([[t.numpy() for t in sample]
                                              for sample in calibration]), **options)


# The variant each quantising peer is recorded as in write_peer_archive's copy, and its family:
# named apart from the export tool's own int8 variants (none a prefix of another:
# archive.check_names).
PEER_VARIANTS = {"onnxruntime_int8": ("peer_onnx_int8", "onnx"),
                 "openvino_int8": ("peer_openvino_int8", "openvino")}
# The records written per family, in the order its C++ backend loads them.
FAMILY_FILES = {"onnx": ("model.onnx",), "openvino": ("model.xml", "model.bin")}


def peer_records(peer):
    """The records of quantising peer `peer`'s model in write_peer_archive's copy, in order."""
    variant, family = PEER_VARIANTS[peer]
    return [f"aitune/{variant}/{f}" for f in FAMILY_FILES[family]]


def write_peer_archive(archive, out, peers, calibration, calibration_source, log=print):
    """Writes `out`: a copy of the .pt2 `archive` with each quantising peer of `peers` (keys of
    PEER_VARIANTS) made at its defaults from the archive's fp32 ONNX model or OpenVINO IR,
    calibrated on `calibration`, and added as its variant of PEER_VARIANTS (its records
    peer_records(peer), its calibration inputs' digests recorded).
    Returns {peer: (variant, family)} of those made; a peer that fails is logged and left out.
    Run it in a process of its own: the quantisers leave thread pools behind."""
    import numpy
    import openvino
    from torch.export.pt2_archive._package import PT2ArchiveWriter

    from aitune_export import ONNX_RECORD, OPENVINO_RECORDS
    from aitune_export.archive import write_atomically
    from aitune_export.quantize import is_transformer, sample_digest

    with zipfile.ZipFile(archive) as z:
        # name (without the archive's top folder) -> zip entry; the writer adds its own of these
        entries = {info.filename.split("/", 1)[1]: info for info in z.infolist()}
        for own in (".data/version", "byteorder", ".data/serialization_id"):
            entries.pop(own, None)
        record = json.loads(z.read(entries.pop("extra/aitune.json")))
        onnx_bytes = z.read(entries[ONNX_RECORD])
        transformer = is_transformer({ONNX_RECORD: onnx_bytes}, ONNX_RECORD, None)
        quantization = {"dtype": "int8", "calibration": {
            "source": calibration_source, "count": len(calibration),
            "digests": [sample_digest(sample) for sample in calibration]}}
        added, made = {}, {}
        for peer in peers:
            variant, family = PEER_VARIANTS[peer]
            try:
                if family == "onnx":
                    method = "onnxruntime quantize_static/dynamic at defaults"
                    files = [onnx_int8_defaults(onnx_bytes, calibration, transformer)]
                else:
                    method = "nncf.quantize at defaults"
                    xml, weights = (z.read(entries[r]) for r in OPENVINO_RECORDS)
                    model = openvino_int8_defaults(
                        openvino.Core().read_model(xml.decode(), openvino.Tensor(
                            numpy.frombuffer(weights, numpy.uint8))), calibration, transformer, log)
                    with tempfile.TemporaryDirectory() as scratch:
                        openvino.save_model(model, os.path.join(scratch, "model.xml"),
                                            compress_to_fp16=False)
                        files = [read_bytes(os.path.join(scratch, f))
                                 for f in FAMILY_FILES["openvino"]]
            except Exception as error:  # a peer that cannot be made is named, not fatal
                log(f"  {peer} at defaults: failed: {str(error).splitlines()[0][:200]}")
                continue
            names = peer_records(peer)
            added.update(zip(names, files))
            record["variants"][variant] = dict(
                record["variants"][family], records=names,
                quantization=dict(quantization, method=f"{method} (tools/bench_peers.py)"))
            made[peer] = PEER_VARIANTS[peer]

        def write(path):
            with PT2ArchiveWriter(path) as writer:
                for name, info in entries.items():
                    writer.write_bytes(name, z.read(info))
                writer.write_bytes("extra/aitune.json", json.dumps(record).encode())
                for name, data in added.items():
                    writer.write_bytes(name, data)
        write_atomically(out, write)
    return made


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()
