# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Holds the benchmarks' judge (tools/aitune_judge.py) equal to the tuner's own (aitune-judge,
tests/support/judge.cpp: the library's parse_accuracy_text, compare_outputs, AccuracyBudget::judge
and median_interval): both judge every fixture of --fixtures and --random generated ones (outputs
with ties, NaN and Inf where the baseline has them and where it has not, several outputs, budget
texts the tuner takes and ones it refuses, timings with NaN and too few values), and every figure
and verdict must agree. A change to either judge that the other lacks fails it.

Usage: check_judges_agree.py --judge PATH --fixtures DIR [--random 300] [--seed 1]
(exit 0: they agree on every fixture)
"""
import argparse
import json
import math
import pathlib
import random
import subprocess
import sys
import tempfile

import numpy

import aitune_judge

# Texts the tuner's parser takes or refuses, each judged on one random fixture.
BUDGET_TEXTS = [
    "cosine=0.999,top1=98%", "top5=0.9,scores=logits", "relative=0.05", "cosine=0.9,",
    "relative=0.5,cosine=0.9,top2=60%,samples=10", "top1=100%", "cosine=-1", "samples=5,cosine=0",
    "cosine=2", "top0=1", "top-1=0.5", "cosine=0.9,cosine=0.8", "top1=98%,top5=99%",
    "scores=logits", "samples=0", "samples=-1", "cosine=+0.5", "cosine=1e400", "cosine= 0.5", "",
    ",cosine=0.9", "relative=nan", "top1=0%", "top1=1.5", "unknown=1", "cosine=inf", "cosine",
    "relative=1e6", "relative=1e7", "top1=50%,scores=", "top01=0.5", "samples=1.5,cosine=0.5",
    "cosine=.5", "cosine=5.", "cosine=0.5e", "top1=98%%",
]


def number(value):
    return float(value) if isinstance(value, str) else value


def as_json_number(value):
    if value is None or not math.isfinite(value):
        return None if value is None else ("nan" if math.isnan(value) else
                                           "inf" if value > 0 else "-inf")
    return value


def python_result(fixture):
    """tools/aitune_judge.py's figures for `fixture`, shaped as aitune-judge prints them."""
    result = {}
    if "timings" in fixture:
        timings = [number(v) for v in fixture["timings"]]
        interval = aitune_judge.median_interval(timings)
        result["median"] = {"n": interval.n, "median": as_json_number(interval.median),
                            "low": as_json_number(interval.low),
                            "high": as_json_number(interval.high)}
        kept = [t for t in timings if not math.isnan(t)]
        result["p90"] = as_json_number(aitune_judge.p90(kept)) if kept else None
    if "budget" not in fixture:
        return result
    try:
        budget = aitune_judge.parse_budget(fixture["budget"])
    except ValueError as error:
        result["budget"] = {"error": str(error)}
        return result
    top_k = budget.top_k
    result["budget"] = {
        "relative": budget.relative, "cosine": budget.cosine, "samples": budget.samples,
        "top_k": None if top_k is None else {"output": top_k.output, "k": top_k.k,
                                             "min_share": top_k.min_share}}
    check = aitune_judge.Check(budget)
    for sample in fixture.get("samples", []):
        check.add(aitune_judge.fixture_outputs(sample["reference"]),
                  aitune_judge.fixture_outputs(sample["candidate"]))
    verdict = check.verdict()
    if check.problem:
        result["problem"] = check.problem
    else:
        result["outputs"] = [{"output": o.output,
                              "relative_error": as_json_number(o.relative_error),
                              "cosine": as_json_number(o.cosine), "top_k_agreed": o.top_k_agreed,
                              "top_k_rows": o.top_k_rows, "top_k_classes": o.top_k_classes}
                             for o in verdict.outputs]
    result["within"] = verdict.within
    return result


def close(a, b):
    """Figures agree: the same non-finite value or None, else within rounding of a sum's order."""
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def disagreements(cpp, py):
    """What the two judges' results for one fixture differ in (empty: they agree)."""
    found = []

    def differ(what, a, b):
        found.append(f"{what}: the tuner's {a!r}, the Python {b!r}")

    for key in ("median", "p90"):
        if (key in cpp) != (key in py):
            differ(key, cpp.get(key), py.get(key))
    if "median" in cpp and "median" in py:
        for key in ("n", "median", "low", "high"):
            if not close(cpp["median"][key], py["median"][key]):
                differ(f"median {key}", cpp["median"][key], py["median"][key])
    if "p90" in cpp and "p90" in py and not close(cpp["p90"], py["p90"]):
        differ("p90", cpp["p90"], py["p90"])
    if ("budget" in cpp) != ("budget" in py):
        differ("budget", cpp.get("budget"), py.get("budget"))
    if "budget" not in cpp or "budget" not in py:
        return found
    cpp_budget, py_budget = cpp["budget"], py["budget"]
    if ("error" in cpp_budget) != ("error" in py_budget):
        differ("the budget text taken", cpp_budget, py_budget)
        return found
    if "error" in cpp_budget:
        return found
    for key in ("relative", "cosine", "samples"):
        if not close(cpp_budget[key], py_budget[key]):
            differ(f"budget {key}", cpp_budget[key], py_budget[key])
    if (cpp_budget["top_k"] is None) != (py_budget["top_k"] is None) or (
            cpp_budget["top_k"] and any(not close(cpp_budget["top_k"][k], py_budget["top_k"][k])
                                        if k == "min_share" else
                                        cpp_budget["top_k"][k] != py_budget["top_k"][k]
                                        for k in ("output", "k", "min_share"))):
        differ("budget top_k", cpp_budget["top_k"], py_budget["top_k"])
    if ("problem" in cpp) != ("problem" in py):
        differ("whether a sample cannot be judged", cpp.get("problem"), py.get("problem"))
    if cpp["within"] != py["within"]:
        differ("within the budget", cpp["within"], py["within"])
    if "outputs" in cpp and "outputs" in py:
        if [o["output"] for o in cpp["outputs"]] != [o["output"] for o in py["outputs"]]:
            differ("outputs", cpp["outputs"], py["outputs"])
            return found
        for c, p in zip(cpp["outputs"], py["outputs"], strict=True):
            for key in ("relative_error", "cosine", "top_k_agreed", "top_k_rows",
                        "top_k_classes"):
                if not close(c[key], p[key]):
                    differ(f"{c['output']} {key}", c[key], p[key])
    return found


def tensor(array):
    values = ["nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else v
              for v in array.astype(numpy.float64).ravel().tolist()]
    return {"dtype": str(array.dtype), "shape": list(array.shape), "values": values}


def random_pair(rng, shape, nonfinite):
    """A baseline's output and a candidate's: small integers over 4 (ties are common), the
    candidate the baseline moved by whole steps, by noise, or not at all, row by row; NaN and Inf
    at the same places in both, or (rarely) not."""
    e = numpy.array([rng.randint(-6, 6) / 4 for _ in range(math.prod(shape))], dtype="float32")
    a = e.copy()
    how = rng.choice(["steps", "noise", "same", "constant"])
    for i in range(a.size):
        if how == "steps" and rng.random() < 0.3:
            a[i] += rng.choice([-0.25, 0.25, 0.5])
        elif how == "noise":
            a[i] += rng.gauss(0.0, 0.1)
        elif how == "constant":
            a[i] = 0.5
    if nonfinite:
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(e.size)
            e[i] = a[i] = rng.choice([math.nan, math.inf, -math.inf])
        if rng.random() < 0.15:
            a[rng.randrange(a.size)] = math.nan
    return e.reshape(shape), a.reshape(shape)


def random_budget(rng):
    parts = []
    if rng.random() < 0.5:
        parts.append(f"relative={rng.uniform(0.01, 1.5):.4f}")
    if rng.random() < 0.6:
        parts.append(f"cosine={rng.uniform(0.3, 0.9999):.5f}")
    if rng.random() < 0.7 or not parts:
        share = rng.uniform(0.2, 1.0)
        parts.append(f"top{rng.randint(1, 3)}=" + (f"{share * 100:.2f}%" if rng.random() < 0.5
                                                   else f"{share:.4f}"))
    return ",".join(parts)


def random_fixture(rng, budget=None):
    layout = rng.choice(["tensor", "tuple", "dict"])
    rows, classes = rng.randint(1, 6), rng.randint(2, 7)
    shape = [rows, classes] if rng.random() < 0.7 else [2, rows, classes]
    nonfinite = rng.random() < 0.3
    samples = []
    for _ in range(rng.randint(1, 3)):
        scores_e, scores_a = random_pair(rng, shape, nonfinite)
        other_e, other_a = random_pair(rng, [rows, 1], False)
        if layout == "tensor":
            samples.append({"reference": tensor(scores_e), "candidate": tensor(scores_a)})
        elif layout == "tuple":
            samples.append({"reference": [tensor(scores_e), tensor(other_e)],
                            "candidate": [tensor(scores_a), tensor(other_a)]})
        else:
            samples.append({"reference": {"dict": {"logits": tensor(scores_e),
                                                   "hidden": tensor(other_e)}},
                            "candidate": {"dict": {"logits": tensor(scores_a),
                                                   "hidden": tensor(other_a)}}})
    text = budget if budget is not None else random_budget(rng)
    if layout == "dict" and budget is None and "top" in text and rng.random() < 0.5:
        text += ",scores=logits"
    timings = [rng.lognormvariate(0.0, 0.3) for _ in range(rng.randint(0, 40))]
    if timings and rng.random() < 0.2:
        timings[rng.randrange(len(timings))] = math.nan
    return {"budget": text, "samples": samples,
            "timings": [("nan" if math.isnan(t) else t) for t in timings]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", required=True, help="the aitune-judge program")
    parser.add_argument("--fixtures", required=True, help="a folder of fixture files")
    parser.add_argument("--random", type=int, default=300, help="random fixtures (default 300)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    paths = sorted(pathlib.Path(args.fixtures).glob("*.json"))
    if not paths:
        raise SystemExit(f"no fixtures in {args.fixtures}")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        made = [random_fixture(rng) for _ in range(args.random)]
        made += [random_fixture(rng, text) for text in BUDGET_TEXTS]
        for i, fixture in enumerate(made):
            path = pathlib.Path(scratch) / f"random_{i:04d}.json"
            path.write_text(json.dumps(fixture))
            paths.append(path)
        done = subprocess.run([args.judge, *map(str, paths)], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise SystemExit(f"aitune-judge failed ({done.returncode}): {done.stderr}")
        cpp_results = [json.loads(line) for line in done.stdout.splitlines()]
        failures, judged = [], {"within": 0, "outside": 0, "unjudgeable": 0, "refused": 0}
        for path, cpp in zip(paths, cpp_results, strict=True):
            fixture = json.loads(path.read_text())
            py = python_result(fixture)
            for problem in disagreements(cpp, py):
                failures.append(f"{path.name} ({fixture.get('budget')!r}): {problem}")
            if "error" in cpp.get("budget", {}):
                judged["refused"] += 1
            elif "problem" in cpp:
                judged["unjudgeable"] += 1
            elif "within" in cpp:
                judged["within" if cpp["within"] else "outside"] += 1
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"judges: {len(paths)} fixtures ({', '.join(f'{v} {k}' for k, v in judged.items())}); "
          f"{len(failures)} disagreement(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
