"""Exports a PyTorch model into one torch.export .pt2 archive for aitune-cpp.

The archive holds the ExportedProgram (model name "model"), which aitune's baseline runs with
LibTorch's native runtime, and AOTInductor compilations of the same program, each under its own
name, which are aitune's candidates:

  aoti_default       Inductor's defaults
  aoti_freezing      freezing=True (weights become constants, folded into the kernels)
  aoti_max_autotune  max_autotune=True (Inductor times kernel choices; slow to compile)
  aoti_bf16          computed in bfloat16 (inputs cast in, outputs cast back), where the device
                     has bf16 kernels

and, for the CPU, the same program converted for other runtimes, which join the candidates:

  onnx       torch.onnx's exporter (dynamo), for ONNX Runtime: record aitune/onnx/model.onnx
  openvino   openvino.convert_model, f32 weights: aitune/openvino/model.xml and model.bin

and, with calibration inputs, int8 quantisations of the converted models (quantize.py):

  onnx_int8      ONNX Runtime's quantiser: record aitune/onnx_int8/model.onnx
  openvino_int8  NNCF post-training quantisation (from tools/requirements-quantize.txt, which
                 tools/setup-venv.sh --quantize installs): aitune/openvino_int8/model.xml and
                 model.bin

and the program itself quantised to int8 and compiled (aoti_int8.py):

  aoti_int8      PT2E with torchao's X86InductorQuantizer (from tools/requirements-quantize.txt,
                 which tools/setup-venv.sh --quantize installs), compiled by AOTInductor with
                 freezing=True

--calibration FILE.py:FUNCTION gives them real inputs (an iterable of input tuples; never the
inputs their accuracy is checked on), else --calibration-samples random ones (default 300) with
a warning; --held-out FILE.py:FUNCTION gives real inputs the calibration never saw, on which
(the first 100) whether a variant needs repair, and its repair, are judged (else the example and
random inputs); --model-type transformer|cnn says how to quantise (default: from the graph). The
archive records a digest of each calibration input. They are tried only when aitune-tune is
given an accuracy budget (--accuracy).

Each converted model is run on the example inputs (ONNX Runtime's CPU provider; OpenVINO's CPU
plugin in f32) and must match eager PyTorch's outputs, or it is left out. Their outputs are the
program's flattened in pytree order, without its None leaves (extra/aitune.json records the
program's "out_spec" and, as "none_leaves", where the Nones were). They are records of their
own, not under extra/: load_pt2 reads every extra/ record as UTF-8 text.

`aitune-tune model.pt2 --input ...` then needs nothing else. Each variant is a separate
compilation (about 30-60 s on 2 cores for a small CNN; max_autotune much longer; a conversion
takes seconds); one that fails is reported and left out, and extra/aitune.json records it under
"failed" with its cause. The archive is written to a temporary name and renamed, so a crash
leaves no half-written file. AOTInductor compilations need the torch version of the LibTorch
that runs them (the C++ loader refuses others), and a CUDA compilation needs a GPU.

Your own model: give a factory that returns an nn.Module (weights loaded), as MODULE:FUNCTION
(importable; --path adds folders to sys.path) or FILE.py:FUNCTION, and one --input per forward
argument, by position (SHAPE) or by name (NAME=SHAPE, passed as a keyword argument; named ones
come after the positional ones):

  tools/export_model.py --factory mypackage.models:make_net --input 1x3x224x224 --out net.pt2
  tools/export_model.py --factory ./net.py:build --input 1x128:int64[0,30522) --variants onnx
  tools/export_model.py --factory ./hf.py:gpt2 --input input_ids=1x64:int64[0,50257) \\
      --input attention_mask=1x64:int64[1,2) --out gpt2.pt2

The program takes every input by position, in the order given, under its name (the archive
records the names: `aitune-tune --input NAME=SHAPE` finds each one's place by them).

Outputs are exported as plain tensors, tuples, lists and dicts, which LibTorch's native runtime
rebuilds in C++: a Hugging Face ModelOutput, a namedtuple (torch.return_types too) or a
dataclass becomes a dict of the same keys, in the same order (the archive records what was
converted). Any other output type stops the export with its name and what to do.

A dimension that varies at serving time (a text model's sequence length) is exported as a range
with --dynamic NAME:AXIS:MIN..MAX (NAME: the input's name, or its position for an unnamed one;
MIN at least 2). Give it for each input whose axis varies with it (input_ids and attention_mask):
torch.export finds that they agree. Every variant then takes the range: the AOTInductor
compilations are compiled for it, the ONNX graph keeps the axis dynamic, the OpenVINO model bounds
it; the converted ones are checked at the range's smallest and largest inputs as well. The archive
records the range export proved, per input and axis:

  tools/export_model.py --factory ./hf.py:bert --input input_ids=1x128:int64[0,30522) \\
      --input attention_mask=1x128:int64[1,2) --dynamic input_ids:1:8..256 \\
      --dynamic attention_mask:1:8..256 --out bert.pt2

An integer input that indexes an embedding (input_ids) records the rows it may index, read off
the exported graph; --domain NAME:MIN..MAX declares the values of one the graph does not prove.
aitune-cpp refuses a call whose values are outside them, whichever runtime serves it (a token id
outside the vocabulary aborts an AOTInductor model's process). An --input spec's [LOW,HIGH) is
only where random example values are drawn from, never a domain.

--save-io DIR writes DIR/inputs.pt (the example inputs, a tuple in the program's order, as
`aitune-tune --sample` reads it) and DIR/outputs.pt (what eager PyTorch returned for them, in
the exported structure, as `aitune-tune --expect` compares the tuned module's outputs with).

Usage: tools/export_model.py --factory F --input [NAME=]SHAPE [...] --out FILE.pt2
       [--dynamic NAME:AXIS:MIN..MAX ...] [--domain NAME:MIN..MAX ...] [--variants LIST]
       [--device cpu|cuda] [--seed N]
       [--save-io DIR] [--calibration FILE.py:FUNCTION] [--calibration-samples N]
       [--held-out FILE.py:FUNCTION] [--model-type cnn|transformer]

The code is the package tools/aitune_export/: inputs.py (--input, --dynamic), domains.py
(--domain, and the domains the graph proves), outputs.py (plain
outputs, the check of a converted model), one module per variant family (aoti_variant.py,
onnx_variant.py, openvino_variant.py), quantize.py (the converted models' int8 variants),
aoti_int8.py (PT2E's), archive.py (the archive and its extra/aitune.json, whose
fields it lists) and export.py, which runs them in turn.
"""

from .archive import write_atomically
from .export import VARIANT_NAMES, default_variants, export
from .inputs import Input, make_inputs, parse_dynamic, parse_input
from .onnx_variant import RECORD as ONNX_RECORD
from .openvino_variant import RECORDS as OPENVINO_RECORDS

__all__ = ["ONNX_RECORD", "OPENVINO_RECORDS", "VARIANT_NAMES", "Input", "default_variants",
           "export", "make_inputs", "parse_dynamic", "parse_input", "write_atomically"]
