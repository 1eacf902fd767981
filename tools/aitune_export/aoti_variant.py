"""AOTInductor compilations of the program, the archive's compiled candidates."""
import copy

import torch

from .inputs import clone_inputs

# name -> (the compilation's name in the archive, Inductor's options, the dtype it computes in).
# No name may be a prefix of another: LibTorch 2.11's package loader finds a model's files by
# prefix, so "aoti" would load "aoti_bf16"'s code.
AOTI_VARIANTS = {
    "default": ("aoti_default", {}, None),
    "freezing": ("aoti_freezing", {"freezing": True}, None),
    "max_autotune": ("aoti_max_autotune", {"max_autotune": True}, None),
    "bf16": ("aoti_bf16", {}, torch.bfloat16),
}
PRECISION_NAMES = {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


class ComputeIn(torch.nn.Module):
    """Runs `module` in `dtype`: floating inputs cast in, floating outputs cast back, so the
    compiled variant takes and returns what the baseline does."""

    def __init__(self, module, dtype):
        super().__init__()
        self.module = module.to(dtype)
        self.dtype = dtype

    def forward(self, *args):
        cast = [a.to(self.dtype) if a.is_floating_point() else a for a in args]
        out = self.module(*cast)
        return torch.utils._pytree.tree_map(
            lambda t: t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t,
            out)


def supports_bf16(device):
    if device.startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def skipped(variant, device):
    """Why `variant` is not made for `device` (None: it is)."""
    dtype = AOTI_VARIANTS[variant][2]
    if dtype is not None and not supports_bf16(device):
        return f"{device} has no bf16 kernels"
    return None


def compile_variant(variant, program, module, inputs, device, dynamic_shapes):
    """The AOTInductor compilation of `variant` (a key of AOTI_VARIANTS) and its record. A
    reduced-precision one re-exports `module` (the module `program` was exported from) wrapped
    in ComputeIn, with the same `dynamic_shapes`, so that it takes the program's range too."""
    _, configs, dtype = AOTI_VARIANTS[variant]
    source = program
    if dtype is not None:
        source = torch.export.export(
            ComputeIn(copy.deepcopy(module), dtype), clone_inputs(inputs),
            dynamic_shapes=None if dynamic_shapes is None else {"args": dynamic_shapes})
    options = dict(configs, **{"aot_inductor.package": True})
    compiled = torch._inductor.aot_compile(source.module(), clone_inputs(inputs), options=options)
    record = {"family": "aoti", "precision": PRECISION_NAMES[dtype],
              "made": {"inductor_configs": configs, "device": device}}
    return compiled, record
