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
- Accuracy, on held-out inputs none of the calibration inputs is among (their seeds differ),
  judged by the tuner's rules (tools/aitune_judge.py, which a test holds equal to the C++): per
  output the least cosine similarity and the worst relative error over the inputs (finite values;
  NaN or Inf where eager PyTorch has none is outside any budget), and the class scores' top-k
  agreement.
"""
import json
import os
import tempfile
import zipfile

import aitune_judge

# Far from the seeds of tools/bench_peers.py's timing inputs (1), of the tuner's samples and of
# tools/aitune_export's calibration (seed + 1000 + i).
HELD_OUT_SEED = 20_000
CALIBRATION_SEED = 40_000


def random_inputs(specs, count, seed):
    """`count` tuples of random inputs for `specs` (aitune_export.inputs.Input: standard normal
    floats, integers uniform over their range), input i from seed `seed` + i."""
    from aitune_export.inputs import make_inputs
    return [make_inputs(specs, "cpu", seed + i) for i in range(count)]


def measure(run, held_out, expected, as_tensors, budget):
    """`run` (inputs -> outputs) on every held-out input, judged against eager PyTorch's
    `expected` outputs (one per input) under `budget` by the tuner's rules (aitune_judge.Check,
    held equal to the C++): {"cosine": the least over outputs and inputs, "top1": the class
    scores' agreeing share (None where the budget counts none), "relative_error": the worst,
    "within": the verdict, "outside": the measures missed}. A contestant's outputs (`as_tensors`
    flattens them: the runtimes return lists) take the paths of eager PyTorch's, as the tuner
    names them, so that the budget's scores= names the same output."""
    check = aitune_judge.Check(budget)
    for inputs, want in zip(held_out, expected):
        check.add_named(aitune_judge.named_like(want, as_tensors(want)),
                        aitune_judge.named_like(want, as_tensors(run(inputs))))
    verdict = check.verdict()
    return {"cosine": verdict.figure("cosine"), "top1": verdict.figure("top_k_share"),
            "relative_error": verdict.figure("relative_error"), "within": verdict.within,
            "outside": "; ".join(verdict.failed)}


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
