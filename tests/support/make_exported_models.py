# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Exports the small models the tests of real-world model shapes read, with tools/export_model.py
(its export(): the ExportedProgram and an `aoti_default` compilation; for dict_outputs, bert and
no_onnx also the onnx and openvino conversions), each with the example inputs and eager
PyTorch's outputs beside it (NAME.io/inputs.pt, NAME.io/outputs.pt):

  dict_outputs   forward(x, mask) -> {"y": ..., "z": (..., None), "w": [...]}
  add_in_place   forward(x) writes x.add_(1), returns x * 2
  kv_cache       forward(x, cache, pos) index_copy_s this step's key into the cache it is given
  bert           transformers BertModel, 2 layers, hidden size 64 (random weights), by name:
                 input_ids, attention_mask; returns a ModelOutput (exported as a dict)
  bert_dynamic   the same BertModel with 512 positions, exported for sequences of 8 to 256 tokens
                 (--dynamic on both inputs' axis 1; example length 128), every variant for the
                 range, and eager PyTorch's inputs and outputs at 200 tokens (inputs_200.pt,
                 outputs_200.pt)
  bert_dynamic_reseeded  the same with other weights, the ExportedProgram only
  gpt2           transformers GPT2Model, 2 layers, n_embd 64, use_cache=False, likewise
  gpt2_dynamic   the same GPT2Model with 256 positions, exported for sequences of 8 to 128 tokens
                 (example length 64), every variant for the range, and eager PyTorch's inputs
                 and outputs at 100 tokens
  rendezvous     calls the custom op aitune_test::rendezvous, which the C++ tests register: it
                 holds a call until a second one arrives, so a test can tell overlapping calls
                 from queued ones
  wide_mlp       forward(x) -> six 512-wide linear layers with ReLU on a 64x512 input: a few
                 milliseconds a call on one thread, long enough for a test to tell calls that
                 run at once from queued ones by when they end (ONNX and OpenVINO only: the
                 rendezvous op does not convert to them)
  small_cnn      two convolutions, a pooled linear layer: 10 class scores for a 1x3x32x32
                 image, with the onnx variant and onnx_int8, ONNX Runtime's static int8
                 quantisation of it calibrated on 32 random inputs (the archive records their
                 digests; the first is saved as small_cnn.io/calibration_0.pt)
  small_cnn_aoti_int8  the same with aoti_default and aoti_int8, whose quantiser is a fake
                 (WeightRounding: CI has no torchao), calibrated likewise
  no_onnx        forward(x) -> the eigenvalues (torch.linalg.eigh) of a linear layer's Gram
                 matrix: AOTInductor compiles it, but neither the ONNX exporter nor OpenVINO
                 converts eigh, so its archive records both as failed, with their causes
  bert_plain     the same BertModel saved by plain torch.export.save, ModelOutput and all (no
                 compilation, no io files): the native runtime cannot load it

A model whose archive and io files exist is kept (they depend only on this script, the export
tool and the pinned versions, which the CMake project puts in the folder's name); one with a
variant that failed, other than those it is meant to fail (or one of those succeeding), is not
written.

Usage: make_exported_models.py --out DIR [name ...]
"""
import argparse
import collections
import copy
import os
import sys

import torch

from aitune_export import export, make_inputs, parse_dynamic, parse_input
from aitune_export.domains import parse_domain
from aitune_export.outputs import to_plain
from aitune_export.quantize import Calibration


class DictOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x, mask):
        h = self.proj(x)
        return {"y": h * mask, "z": (h.sum(-1), None), "w": [h.relu()]}


class NoOnnx(torch.nn.Module):
    """Neither torch.onnx nor OpenVINO 2026.4 has a conversion for aten._linalg_eigh."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)

    def forward(self, x):
        h = self.proj(x)
        return torch.linalg.eigh(h.mT @ h).eigenvalues


class AddInPlace(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


class KvCache(torch.nn.Module):
    """One decoder step: this step's key goes into the cache passed in, at `pos`."""

    def __init__(self):
        super().__init__()
        self.key = torch.nn.Linear(8, 8)

    def forward(self, x, cache, pos):
        cache.index_copy_(1, pos, self.key(x).unsqueeze(1))
        return torch.softmax(cache @ x.unsqueeze(-1), dim=1).squeeze(-1)


@torch.library.custom_op("aitune_test::rendezvous", mutates_args=())
def rendezvous(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@rendezvous.register_fake
def _(x):
    return torch.empty_like(x)


class Rendezvous(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(torch.ops.aitune_test.rendezvous(self.proj(x)))


class WideMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(
            *[module for _ in range(6) for module in (torch.nn.Linear(512, 512), torch.nn.ReLU())])

    def forward(self, x):
        return self.layers(x)


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, padding=1, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(self.features(x))


def reseeded(seed, factory):
    """factory()'s model with weights drawn from `seed`."""
    torch.manual_seed(seed)
    return factory()


def bert(positions=64):
    from transformers import BertConfig, BertModel
    return BertModel(BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                intermediate_size=128, vocab_size=1000,
                                max_position_embeddings=positions))


def gpt2(positions=64):
    from transformers import GPT2Config, GPT2Model
    return GPT2Model(GPT2Config(n_embd=64, n_layer=2, n_head=2, vocab_size=1000,
                                n_positions=positions, bos_token_id=0, eos_token_id=0,
                                use_cache=False))


TOKENS = ["input_ids=1x16:int64[0,1000)", "attention_mask=1x16:int64[1,2)"]
LONG_TOKENS = ["input_ids=1x128:int64[0,1000)", "attention_mask=1x128:int64[1,2)"]
RUNTIMES = ("default", "onnx", "openvino")


class Model(collections.namedtuple(
        "Model", "factory inputs variants fail dynamic also_at calibration int8_quantiser domains",
        defaults=(("default",), (), (), (), 0, None, ()))):
    """The factory, its --input texts, the variants to export (tools/export_model.py's names),
    those meant to fail (as export() names them: aoti_default, onnx, openvino), its --dynamic
    texts, the sizes of its dynamic axes to save eager inputs and outputs at besides the
    example's (NAME.io/inputs_SIZE.pt, outputs_SIZE.pt), how many random inputs its int8
    variants calibrate on, what quantises its aoti_int8 (None: PT2E), and its --domain texts."""


class WeightRounding:
    """aoti_int8's quantiser for the tests, which have no torchao (aoti_int8.Pt2eQuantiser's
    members): every weight matrix and kernel rounded to int8's symmetric grid of its largest
    magnitude, activations left in f32. Its outputs move a little, as int8's do, and the archive
    records it as an int8 quantisation with its calibration's digests; Inductor compiles it to
    f32 kernels, so nothing here is about int8's speed."""

    method = "fake for the tests: weights rounded to int8's grid, f32 kernels"
    strict = False
    kernels_required = False
    version = {}

    def quantise(self, graph, calibration, left_out):
        rounded = copy.deepcopy(graph)
        with torch.no_grad():
            for parameter in rounded.parameters():
                if parameter.dim() > 1:
                    scale = parameter.abs().max() / 127
                    parameter.copy_(torch.round(parameter / scale) * scale)
        return [], rounded


MODELS = {
    "dict_outputs": Model(DictOutputs, ["1x8", "1x4"], RUNTIMES),
    "add_in_place": Model(AddInPlace, ["1x4x4"]),
    # Its position indexes the cache's 4 slots, which no embedding proves: --domain declares it.
    "kv_cache": Model(KvCache, ["1x8", "1x4x8", "1:int64[0,4)"], domains=("2:0..3",)),
    "bert": Model(bert, TOKENS, RUNTIMES),
    "bert_dynamic": Model(lambda: bert(positions=512), LONG_TOKENS, RUNTIMES,
                          dynamic=("input_ids:1:8..256", "attention_mask:1:8..256"),
                          also_at=(200,)),
    "bert_dynamic_reseeded": Model(lambda: reseeded(1, lambda: bert(positions=512)), LONG_TOKENS,
                                   (), dynamic=("input_ids:1:8..256", "attention_mask:1:8..256")),
    "gpt2": Model(gpt2, TOKENS),
    "gpt2_dynamic": Model(lambda: gpt2(positions=256),
                          ["input_ids=1x64:int64[0,1000)", "attention_mask=1x64:int64[1,2)"],
                          RUNTIMES, dynamic=("input_ids:1:8..128", "attention_mask:1:8..128"),
                          also_at=(100,)),
    "rendezvous": Model(Rendezvous, ["1x8"]),
    "wide_mlp": Model(WideMlp, ["64x512"], ("onnx", "openvino")),
    "small_cnn": Model(SmallCnn, ["1x3x32x32"], ("onnx", "onnx_int8"), calibration=32),
    "small_cnn_aoti_int8": Model(SmallCnn, ["1x3x32x32"], ("default", "aoti_int8"),
                                 calibration=32, int8_quantiser=WeightRounding()),
    "no_onnx": Model(NoOnnx, ["1x6x8"], RUNTIMES, ("onnx", "openvino")),
}


def save_plain_bert(path):
    """BertModel as torch.export.save writes it: its ModelOutput stays in the program."""
    if os.path.exists(path):
        print(f"{path}: exists")
        return
    from aitune_export import write_atomically
    torch.manual_seed(0)
    inputs = make_inputs([parse_input(text) for text in TOKENS], "cpu", seed=0)
    with torch.no_grad():
        program = torch.export.export(bert().eval(), inputs)
    write_atomically(path, lambda tmp: torch.export.save(program, tmp))
    print(f"{path}: ExportedProgram 'model' as torch.export.save writes it")


def save_io_at(module, specs, dynamic, size, io):
    """Eager PyTorch's inputs and outputs with every dynamic axis at `size`, as
    io/inputs_SIZE.pt and io/outputs_SIZE.pt (inputs by keyword where named, as export does)."""
    resized = []
    for i, spec in enumerate(specs):
        shape = list(spec.shape)
        for d in dynamic:
            if d.input in (spec.name, str(i)):
                shape[d.axis] = size
        resized.append(spec._replace(shape=tuple(shape)))
    inputs = make_inputs(resized, "cpu", seed=size)
    positional = [t for t, s in zip(inputs, specs) if not s.name]
    keywords = {s.name: t for t, s in zip(inputs, specs) if s.name}
    with torch.no_grad():
        outputs = to_plain(module(*positional, **keywords))
    torch.save(tuple(inputs), os.path.join(io, f"inputs_{size}.pt"))
    torch.save(outputs, os.path.join(io, f"outputs_{size}.pt"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("names", nargs="*", help=f"default: all of {', '.join(MODELS)}")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name in args.names or [*MODELS, "bert_plain"]:
        if name == "bert_plain":
            save_plain_bert(os.path.join(args.out, "bert_plain.pt2"))
            continue
        path = os.path.join(args.out, f"{name}.pt2")
        io = os.path.join(args.out, f"{name}.io")
        model = MODELS[name]
        wanted = [path, f"{io}/inputs.pt", f"{io}/outputs.pt"] + [
            f"{io}/{kind}_{size}.pt" for size in model.also_at for kind in ("inputs", "outputs")
        ] + ([f"{io}/calibration_0.pt"] if model.calibration else [])
        if all(os.path.exists(p) for p in wanted):
            print(f"{path}: exists")
            continue
        torch.manual_seed(0)
        specs = [parse_input(text) for text in model.inputs]
        inputs = make_inputs(specs, "cpu", seed=0)
        module = model.factory()
        dynamic = [parse_dynamic(text) for text in model.dynamic]
        calibration = (Calibration.random(specs, model.calibration, seed=0)
                       if model.calibration else None)
        failures = export(module, inputs, path, list(model.variants), "cpu", specs=specs,
                          save_io=io, dynamic=dynamic, calibration=calibration,
                          int8_quantiser=model.int8_quantiser,
                          domains=[parse_domain(text) for text in model.domains])[1]
        for size in model.also_at:
            save_io_at(module, specs, dynamic, size, io)
        if calibration:
            torch.save(calibration.inputs[0], os.path.join(io, "calibration_0.pt"))
        # A model meant to show a failure is no test of it once that variant works.
        surprises = ([f"{v} failed" for v in failures if v not in model.fail]
                     + [f"{v} did not fail" for v in model.fail if v not in failures])
        if surprises:
            print(f"{path}: {'; '.join(surprises)} (expected to fail: "
                  f"{', '.join(model.fail) or 'none'})", file=sys.stderr)
            failed += 1
            os.remove(path)  # so that the next run tries again rather than finding it
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
