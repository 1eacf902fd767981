"""The model's outputs: made plain containers the native runtime rebuilds in C++, the wrapper
the program is exported from, and the check a converted model's outputs must pass."""
import dataclasses

import torch

# How close a converted model's outputs must come to eager PyTorch's: |a - e| <= ATOL * scale +
# RTOL * |e|, scale being the output's largest magnitude (at least 1), so that large outputs are
# not held to an absolute round-off their sums cannot keep.
ATOL, RTOL = 1e-4, 1e-4


def _record_type(value):
    return f"{type(value).__module__}.{type(value).__qualname__}"


def to_plain(value, converted=None, path="output"):
    """`value` with every record type made a plain container the native runtime rebuilds in C++:
    a Hugging Face ModelOutput (an OrderedDict subclass), another dict subclass, a namedtuple
    (torch.return_types too) or a dataclass becomes a dict of the same keys in the same order;
    other tuple and list subclasses become tuples and lists. Runs inside the exported forward,
    so the trace sees it. With `converted` (a dict), records what it converted, by path. Raises
    TypeError naming any other type."""
    def note(kind):
        if converted is not None:
            converted[path] = f"{_record_type(value)} -> {kind}"

    if value is None or isinstance(value, (torch.Tensor, bool, int, float, str)):
        return value
    if isinstance(value, dict):
        if type(value) is not dict:
            note("dict")
        return {k: to_plain(v, converted, f"{path}[{k!r}]") for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # namedtuple
        note("dict")
        return {k: to_plain(getattr(value, k), converted, f"{path}[{k!r}]")
                for k in type(value)._fields}
    if isinstance(value, tuple) and hasattr(type(value), "n_sequence_fields"):
        # A structseq (torch.return_types.max): named fields, in __match_args__.
        fields = getattr(type(value), "__match_args__", ())[:type(value).n_sequence_fields]
        if len(fields) == len(value):
            note("dict")
            return {k: to_plain(getattr(value, k), converted, f"{path}[{k!r}]") for k in fields}
    if isinstance(value, (tuple, list)):
        if type(value) not in (tuple, list):
            note("tuple" if isinstance(value, tuple) else "list")
        kind = tuple if isinstance(value, tuple) else list
        return kind(to_plain(v, converted, f"{path}[{i}]") for i, v in enumerate(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        note("dict")
        return {f.name: to_plain(getattr(value, f.name), converted, f"{path}[{f.name!r}]")
                for f in dataclasses.fields(value)}
    raise TypeError(
        f"{path} is a {_record_type(value)}, which LibTorch's native runtime cannot rebuild in "
        f"C++; make forward() return tensors in tuples, lists or dicts (a wrapper module around "
        f"yours can convert it)")


class AsExported(torch.nn.Module):
    """`module` as the archive's program: every input by position (keyword inputs passed on by
    name), outputs made plain (to_plain). Subclassed per model with a forward() whose parameters
    carry the inputs' names, so the ExportedProgram names them too."""

    def __init__(self, module, positional, keywords, plain_outputs):
        super().__init__()
        self.module = module
        self.positional = positional
        self.keywords = tuple(keywords)
        self.plain_outputs = plain_outputs

    def call(self, args):
        out = self.module(*args[:self.positional],
                          **dict(zip(self.keywords, args[self.positional:])))
        return to_plain(out) if self.plain_outputs else out


def wrap_for_export(module, names, keywords, plain_outputs):
    """An AsExported around `module` whose forward takes `names` (valid, distinct Python names),
    the last len(keywords) of them passed on as the keyword arguments `keywords`."""
    params = ", ".join(names)
    namespace = {}
    exec(f"def forward(self, {params}):\n    return self.call(({params},))\n", namespace)
    cls = type("AsExported_" + type(module).__name__, (AsExported,),
               {"forward": namespace["forward"]})
    return cls(module, len(names) - len(keywords), keywords, plain_outputs)


def check_outputs(outputs, expected, runtime):
    """Raises ValueError unless `outputs` (numpy arrays) match `expected` (eager PyTorch's
    tensors) in number, shape and, within ATOL and RTOL, value (integers and bools exactly)."""
    import numpy

    if len(outputs) != len(expected):
        raise ValueError(f"{runtime} returns {len(outputs)} outputs, eager PyTorch "
                         f"{len(expected)}")
    for i, (out, want) in enumerate(zip(outputs, expected)):
        want = want.detach().cpu().numpy()
        out = numpy.asarray(out)
        if out.shape != want.shape:
            raise ValueError(f"{runtime}'s output {i} has shape {list(out.shape)}, eager "
                             f"PyTorch's {list(want.shape)}")
        if not numpy.issubdtype(want.dtype, numpy.floating):
            if not numpy.array_equal(out, want):
                raise ValueError(f"{runtime}'s output {i} ({want.dtype}) differs from eager "
                                 f"PyTorch's")
            continue
        out, want = out.astype(numpy.float64), want.astype(numpy.float64)
        scale = max(1.0, float(numpy.nanmax(numpy.abs(want), initial=0.0)))
        if not numpy.allclose(out, want, rtol=RTOL, atol=ATOL * scale, equal_nan=True):
            with numpy.errstate(invalid="ignore"):
                worst = float(numpy.nanmax(numpy.abs(out - want), initial=numpy.inf))
            raise ValueError(f"{runtime}'s output {i} differs from eager PyTorch's by up to "
                             f"{worst:.3g} (allowed {ATOL * scale:.3g} + {RTOL:g} * |expected|)")
