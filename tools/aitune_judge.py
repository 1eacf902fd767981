"""The tuner's judge in Python: the figures the benchmarks publish, computed by the rules the
library computes them by, so that a benchmark's verdict is the tuner's.

- Medians and their intervals: the sign-test (binomial order-statistic) interval of
  core/stats/median_interval.hpp, and the type-7 quantiles of core/stats/latency_stats.hpp.
- Accuracy budgets: aitune-tune's --accuracy text (core/cli/option_text.hpp parse_accuracy_text),
  what a check measures of each output under a budget (torch/check/compare_outputs.hpp: the worst
  error over the output's scale, the cosine similarity and top-k agreement, over the finite
  elements, with NaN and Inf required where the baseline has them), merged over samples (worst of
  each) and judged (core/decision/accuracy_budget.hpp AccuracyBudget::judge).

tests/support/check_judges_agree.py holds this module equal to the C++ (aitune-judge) on the
fixtures of tests/fixtures/judge/ and on random ones (non-finite outputs and top-k ties included):
a change to either side without the other fails it.
"""

import math
import re
from dataclasses import dataclass, field

import numpy

# The tail probability of each bound of a median interval: a 95 % two-sided interval.
TAIL_ALPHA = 0.025


# --- medians ------------------------------------------------------------------------------------

def quantile_of_sorted(ordered, q):
    """The value at quantile `q` (0..1) of sorted values, interpolated linearly between the two
    closest ranks (type 7, as NumPy and R)."""
    if not ordered:
        raise ValueError("quantile of an empty set of samples")
    position = q * (len(ordered) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (position - lower) * (ordered[upper] - ordered[lower])


def sign_test_rank(n, tail_alpha):
    """The largest k (1-based) with P(Binomial(n, 1/2) <= k - 1) <= tail_alpha; 0 when even the
    extreme values are not far enough out."""
    if not 0.0 < tail_alpha < 0.5:
        raise ValueError("a sign-test tail probability must be within (0, 0.5)")
    log_half_n = n * math.log(0.5)
    log_choose = 0.0
    cdf = 0.0
    for i in range(n // 2 + 1):
        if i > 0:
            log_choose += math.log((n - i + 1) / i)
        cdf += math.exp(log_choose + log_half_n)
        if cdf > tail_alpha:
            return i
    return n // 2


@dataclass(frozen=True)
class MedianInterval:
    n: int
    median: float
    low: float  # -inf where there are too few values for the level
    high: float
    tail_alpha: float


def median_interval(values, tail_alpha=TAIL_ALPHA):
    """The median of `values` (NaN ignored) with an interval whose two bounds each fail with
    probability at most `tail_alpha`."""
    ordered = sorted(v for v in values if not math.isnan(v))
    if not ordered:
        return MedianInterval(0, math.nan, -math.inf, math.inf, tail_alpha)
    k = sign_test_rank(len(ordered), tail_alpha)
    low, high = (ordered[k - 1], ordered[len(ordered) - k]) if k >= 1 else (-math.inf, math.inf)
    return MedianInterval(len(ordered), quantile_of_sorted(ordered, 0.5), low, high, tail_alpha)


def p90(values):
    return quantile_of_sorted(sorted(values), 0.9)


# --- the budget ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class TopK:
    output: str = ""  # the class scores' path or last key; empty: the only output with classes
    k: int = 1
    min_share: float = 0.98


@dataclass(frozen=True)
class Budget:
    relative: float | None = None
    cosine: float | None = None
    top_k: TopK | None = None
    samples: int = 100

    def measures_top_k(self, path):
        return self.top_k is not None and (not self.top_k.output or _names(self.top_k.output, path))


def _names(name, path):
    return name == path or path.endswith(f"[{name}]") or path.endswith(f"['{name}']")


# What std::from_chars reads as a whole double or integer (no '+', no spaces, no hex).
_DOUBLE = re.compile(r"-?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?i:inf(?:inity)?|nan))")
_INTEGER = re.compile(r"-?\d+")


def parse_budget(text):
    """aitune-tune's --accuracy text (relative=R, cosine=C, topK=P[%], scores=NAME, samples=N;
    comma-separated, each key once, at least one measure) -> Budget. Raises ValueError naming
    the mistake where the tuner refuses the text."""
    def bad(why):
        return ValueError(f"bad accuracy budget '{text}': {why} (expected e.g. "
                          f"cosine=0.999,top1=98%,scores=logits)")

    def number(key, value):
        out_of_range = _DOUBLE.fullmatch(value) and math.isinf(float(value)) and \
            "inf" not in value.lower()
        if not _DOUBLE.fullmatch(value) or out_of_range:
            raise bad(f"{key} takes a number, got '{value}'")
        return float(value)

    def within(value, low, high, what, range_text):
        if not low <= value <= high:
            raise bad(f"{what} in an accuracy budget must be {range_text}, got {value}")
        return value

    fields, seen, top_k, scores = {}, [], None, None
    parts = text.split(",")
    if parts[-1] == "":  # as the tuner reads it: a trailing comma ends the list
        parts.pop()
    for part in parts:
        key, equals, value = part.partition("=")
        if not equals:
            raise bad(f"'{part}' is not KEY=VALUE")
        is_top_k = key.startswith("top")
        if any(known == key or (is_top_k and known.startswith("top")) for known in seen):
            raise bad(f"{key} is given twice")
        seen.append(key)
        if key == "relative":
            fields["relative"] = within(number(key, value), 0.0, 1e6, "the relative error",
                                        "in [0, 1e6]")
        elif key == "cosine":
            fields["cosine"] = within(number(key, value), -1.0, 1.0, "the cosine similarity",
                                      "in [-1, 1]")
        elif is_top_k:
            k_text = key[3:]
            if not _INTEGER.fullmatch(k_text) or not 1 <= int(k_text) < 2**31:
                raise bad(f"'{key}' is not topK with K a whole number from 1")
            percent = value.endswith("%")
            share = number(key, value[:-1] if percent else value)
            top_k = (int(k_text), share / 100.0 if percent else share)
        elif key == "scores":
            if not value:
                raise bad("scores names an output")
            scores = value
        elif key == "samples":
            if not value.isascii() or not value.isdigit() or int(value) >= 2**64:
                raise bad(f"samples takes a whole number, got '{value}'")
            if int(value) == 0:
                raise bad("an accuracy budget is checked on at least one sample")
            fields["samples"] = int(value)
        else:
            raise bad(f"unknown key '{key}' (relative, cosine, topK, scores, samples)")
    if scores is not None and top_k is None:
        raise bad("scores names the output of a topK agreement: add one")
    if top_k is not None:
        within(top_k[1], math.ulp(0.0), 1.0, "the top-k agreement", "a share in (0, 1]")
        fields["top_k"] = TopK(scores or "", *top_k)
    if not any(fields.get(name) is not None for name in ("relative", "cosine", "top_k")):
        raise bad("it needs a measure: relative, cosine or topK")
    return Budget(**fields)


# --- what a check measures ----------------------------------------------------------------------

@dataclass
class OutputAccuracy:
    """One output's measures over the samples checked (AccuracyBudget's OutputAccuracy)."""
    output: str
    relative_error: float | None = None
    cosine: float | None = None
    top_k_agreed: int = 0
    top_k_rows: int = 0
    top_k_classes: int = 0

    def merge(self, other):
        """The worst of both (NaN is the worst cosine), agreement counted over both."""
        if other.relative_error is not None and (self.relative_error is None
                                                 or other.relative_error > self.relative_error):
            self.relative_error = other.relative_error
        if other.cosine is not None and (self.cosine is None or not other.cosine >= self.cosine):
            self.cosine = other.cosine
        self.top_k_agreed += other.top_k_agreed
        self.top_k_rows += other.top_k_rows
        self.top_k_classes = max(self.top_k_classes, other.top_k_classes)

    def top_k_share(self):
        return self.top_k_agreed / self.top_k_rows if self.top_k_rows else 0.0


def _error_ratio(error, allowed):
    if allowed > 0.0:
        return error / allowed
    return math.inf if error > 0.0 else 0.0


def _array(value):
    """A tensor (torch), an array or a number as a NumPy array, on the CPU."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":  # NumPy has no bfloat16
            value = value.float()
        value = value.numpy()
    return numpy.asarray(value)


def outputs_by_path(outputs, path="output"):
    """`outputs` (a tensor, or a list, tuple or dict of them, nested) as {path: array}, each
    path as the tuner's report names it (`output`, `output[0]`, `output['logits']`)."""
    if isinstance(outputs, dict):
        found = {}
        for key, value in outputs.items():
            label = f"['{key}']" if isinstance(key, str) else f"[{key}]"
            found.update(outputs_by_path(value, path + label))
        return found
    if isinstance(outputs, (list, tuple)):
        found = {}
        for i, value in enumerate(outputs):
            found.update(outputs_by_path(value, f"{path}[{i}]"))
        return found
    return {path: _array(outputs)}


def _top_k_agreed(e, a, k):
    """Of the rows of `e` (the baseline's class scores, rows x classes), those whose top-1 class
    (the first of its largest, NaN largest) is among `a`'s top k, `a` ranked by value with NaN
    above every number and a tie broken by the lower class index (as argmax breaks it)."""
    classes = e.shape[1]
    nan_e = numpy.isnan(e)
    top1 = numpy.where(nan_e.any(1), nan_e.argmax(1),
                       numpy.where(nan_e, -numpy.inf, e).argmax(1))[:, None]
    at = numpy.take_along_axis(a, top1, 1)
    nan_a, nan_at = numpy.isnan(a), numpy.isnan(at)
    with numpy.errstate(invalid="ignore"):
        above = (a > at) | (nan_a & ~nan_at)
        tied = (a == at) | (nan_a & nan_at)
    before = numpy.arange(classes)[None, :] < top1
    rank = above.sum(1) + (tied & before).sum(1)
    return int((rank < k).sum())


def measure(expected, actual, budget):
    """One sample's check under `budget` (None: no top-k counted): (None or why the outputs
    cannot be judged, the OutputAccuracy of each floating output). `expected` and `actual` are the
    baseline's and a candidate's outputs (see outputs_by_path)."""
    return measure_named(outputs_by_path(expected), outputs_by_path(actual), budget)


def fixture_outputs(out):
    """Outputs as a fixture file of aitune-judge (tests/support/judge.cpp) writes them: a tensor
    {"dtype", "shape", "values" (flat; "nan", "inf", "-inf" as strings)}, a list of them (a
    tuple), or {"dict": {name: ...}}."""
    if isinstance(out, list):
        return tuple(fixture_outputs(item) for item in out)
    if "dict" in out:
        return {name: fixture_outputs(item) for name, item in out["dict"].items()}
    values = [float(v) if isinstance(v, str) else v for v in out["values"]]
    return numpy.array(values, dtype=out["dtype"]).reshape(out["shape"])


def named_like(expected, flat):
    """A runtime's flat list of outputs `flat` named by the paths of `expected` (eager PyTorch's
    outputs, whose leaves the list holds in order), as the tuner names a converted model's outputs
    from the structure its archive records: so that `scores=logits` names the same output."""
    paths = list(outputs_by_path(expected))
    if len(paths) != len(flat):
        return {f"output[{i}]": _array(value) for i, value in enumerate(flat)}
    return {path: _array(value) for path, value in zip(paths, flat)}


def measure_named(want, got, budget):
    """measure() on outputs already named ({path: array}, as outputs_by_path gives them)."""
    if list(want) != list(got):
        return f"outputs {list(got)} differ from the baseline's {list(want)}", []
    measured = []
    for path, e in want.items():
        a = got[path]
        if e.shape != a.shape:
            return f"{path}: shape {list(a.shape)} differs from the baseline's {list(e.shape)}", []
        if e.dtype != a.dtype:
            return f"{path}: dtype {a.dtype} differs from the baseline's {e.dtype}", []
        if e.size == 0:
            measured.append(OutputAccuracy(path))
            continue
        if not (numpy.issubdtype(e.dtype, numpy.floating)
                or numpy.issubdtype(e.dtype, numpy.complexfloating)):
            if not numpy.array_equal(e, a):
                return f"{path}: {int((e != a).sum())} of {e.size} elements differ", []
            measured.append(OutputAccuracy(path))
            continue
        if numpy.issubdtype(e.dtype, numpy.complexfloating):  # real and imaginary, side by side
            e, a = (numpy.stack((x.real, x.imag), -1) for x in (e, a))
        problem, accuracy = _measure_floating(path, e.astype(numpy.float64),
                                              a.astype(numpy.float64), budget)
        if problem:
            return problem, []
        measured.append(accuracy)
    return None, measured


def _measure_floating(path, e, a, budget):
    if not numpy.array_equal(numpy.isnan(e), numpy.isnan(a)):
        return f"{path}: NaN where the baseline has numbers, or numbers where it has NaN", None
    e_inf, a_inf = numpy.isinf(e), numpy.isinf(a)
    if not numpy.array_equal(e_inf, a_inf) or not numpy.array_equal(e[e_inf], a[a_inf]):
        return f"{path}: infinite values differ from the baseline's", None
    finite = numpy.isfinite(e)
    scale = float(numpy.where(finite, numpy.abs(e), 0.0).max())
    with numpy.errstate(invalid="ignore"):
        error = numpy.where(finite, numpy.abs(a - e), 0.0)
    accuracy = OutputAccuracy(path, relative_error=_error_ratio(float(error.max()), scale))
    e_finite = numpy.where(finite, e, 0.0).ravel()
    a_finite = numpy.where(finite, a, 0.0).ravel()
    norms = float(numpy.linalg.norm(e_finite)) * float(numpy.linalg.norm(a_finite))
    dot = float(e_finite @ a_finite)
    accuracy.cosine = dot / norms if norms > 0.0 else float(numpy.array_equal(e_finite, a_finite))
    classes = e.shape[-1] if e.ndim > 0 else 0
    if classes >= 2 and budget is not None and budget.measures_top_k(path):
        k = min(budget.top_k.k, classes)
        rows_e, rows_a = e.reshape(-1, classes), a.reshape(-1, classes)
        accuracy.top_k_rows = rows_e.shape[0]
        accuracy.top_k_classes = classes
        accuracy.top_k_agreed = _top_k_agreed(rows_e, rows_a, k)
    return None, accuracy


# --- the verdict --------------------------------------------------------------------------------

@dataclass
class Verdict:
    """A budget's verdict on a candidate's outputs over every sample checked."""
    within: bool
    failed: list = field(default_factory=list)  # the measures missed, or why none could be judged
    outputs: list = field(default_factory=list)  # OutputAccuracy, merged over the samples

    def figure(self, name):
        """The worst `relative_error` or `cosine` over the outputs (None where none measured),
        or `top_k_share` of the class scores."""
        if name == "top_k_share":
            scored = [o for o in self.outputs if o.top_k_rows > 0]
            return scored[0].top_k_share() if len(scored) == 1 else None
        worst = _worst(self.outputs, name, higher_is_worse=name == "relative_error")
        return None if worst is None else getattr(worst, name)


def _worst(outputs, name, higher_is_worse):
    """The output whose measure `name` is worst (NaN always), or None where none has it."""
    worst = None
    for output in outputs:
        value = getattr(output, name)
        if value is None:
            continue
        if math.isnan(value):
            return output
        known = None if worst is None else getattr(worst, name)
        if known is None or (value > known if higher_is_worse else value < known):
            worst = output
    return worst


def judge(budget, outputs):
    """AccuracyBudget::judge: whether `outputs` (OutputAccuracy, merged over the samples) meet
    every measure of `budget`."""
    failed = []
    worst = _worst(outputs, "relative_error", True) if budget.relative is not None else None
    if worst is not None and not worst.relative_error <= budget.relative:
        failed.append(f"{worst.output}: relative error {worst.relative_error:.3g} > "
                      f"{budget.relative:.4g}")
    worst = _worst(outputs, "cosine", False) if budget.cosine is not None else None
    if worst is not None and not worst.cosine >= budget.cosine:
        failed.append(f"{worst.output}: cosine {worst.cosine:.6f} < {budget.cosine:.6g}")
    if budget.top_k is not None:
        failed += _judge_top_k(budget, outputs)
    return Verdict(not failed, failed, outputs)


def _judge_top_k(budget, outputs):
    scored = [o for o in outputs if o.top_k_rows > 0 and budget.measures_top_k(o.output)]
    k = budget.top_k.k
    if len(scored) != 1:
        return [f"no output with class scores to count top-{k} agreement on" if not scored else
                f"{len(scored)} outputs have class scores; name the one whose top-{k} agreement "
                f"counts (scores=)"]
    scores = scored[0]
    if scores.top_k_classes and k >= scores.top_k_classes:
        return [f"{scores.output}: top-{k} agreement measures nothing on {scores.top_k_classes} "
                f"classes"]
    share = scores.top_k_share()
    if not share >= budget.top_k.min_share:
        return [f"{scores.output}: top-{k} agreement {share * 100:.4g} % ({scores.top_k_agreed} "
                f"of {scores.top_k_rows}) < {budget.top_k.min_share * 100:.4g} %"]
    return []


class Check:
    """A candidate's outputs judged sample by sample against the baseline's, as the tuner's check
    runs: the first sample whose outputs cannot be judged (shape, dtype, NaN or Inf where the
    baseline has none) ends it outside the budget; otherwise each output's measures are merged
    over the samples and the budget judges them."""

    def __init__(self, budget):
        self.budget = parse_budget(budget) if isinstance(budget, str) else budget
        self.problem = None
        self.outputs = []

    def add(self, expected, actual):
        """One more sample: the baseline's outputs and the candidate's."""
        self.add_named(outputs_by_path(expected), outputs_by_path(actual))

    def add_named(self, want, got):
        """One more sample, its outputs named ({path: array}: outputs_by_path, named_like)."""
        if self.problem:
            return
        self.problem, measured = measure_named(want, got, self.budget)
        for output in measured:
            known = next((o for o in self.outputs if o.output == output.output), None)
            if known is None:
                self.outputs.append(output)
            else:
                known.merge(output)

    def verdict(self):
        if self.problem:
            return Verdict(False, [self.problem], self.outputs)
        return judge(self.budget, self.outputs)
