# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Checks tools/export_model.py --held-out: the int8 variant is judged on the user's held-out
inputs (its record says on how many), and held-out inputs that are also calibration inputs, or
that are not the --input dtypes and ranks, are refused with a message that says so.

The model is one Linear layer exported with the onnx and onnx_int8 variants (ONNX Runtime's
static quantiser, which CI has; its int8 model keeps cosine > 0.999, so no repair, which would
need NNCF, is asked for).

Usage: check_export_held_out.py   (exit 0: every check passed)
"""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

MODEL = '''
import torch


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))


def draw(first, count):
    return [(torch.randn(1, 16, generator=torch.Generator().manual_seed(first + i)),)
            for i in range(count)]


def calibration():
    return draw(1000, 32)


def held_out():
    return draw(2000, 7)


def overlapping():
    return draw(2000, 3) + draw(1005, 1)


def wrong_dtype():
    return [(torch.zeros(1, 16, dtype=torch.int64),)]
'''


def export(folder, held_out):
    out = os.path.join(folder, "linear.pt2")
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "export_model.py"),
         "--factory", os.path.join(folder, "linear.py") + ":model", "--input", "1x16",
         "--out", out, "--variants", "onnx,onnx_int8",
         "--calibration", os.path.join(folder, "linear.py") + ":calibration",
         "--held-out", os.path.join(folder, "linear.py") + f":{held_out}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return done, out


def record(archive):
    with zipfile.ZipFile(archive) as z:
        name = next(n for n in z.namelist() if n.endswith("extra/aitune.json"))
        return json.loads(z.read(name))


def main():
    failures = []

    def check(what, ok, detail=""):
        print(f"{'ok' if ok else 'FAILED'}: {what}")
        if not ok:
            failures.append(what)
            print(detail)

    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "linear.py"), "w") as f:
            f.write(MODEL)
        done, out = export(folder, "held_out")
        check("an export with --held-out succeeds", done.returncode == 0, done.stdout)
        if done.returncode == 0:
            quantization = record(out)["variants"]["onnx_int8"]["quantization"]
            made = record(out)["variants"]["onnx_int8"]["made"]
            check(f"onnx_int8 was judged on the 7 held-out inputs ({quantization['judged_on']}: "
                  f"least cosine {made.get('judged_cosine')})",
                  quantization["judged_on"] == "7 held-out task inputs"
                  and "repaired" not in quantization and made.get("judged_cosine", 0) >= 0.999)
        done, _ = export(folder, "overlapping")
        check("held-out inputs shared with the calibration are refused",
              done.returncode != 0 and "sample 3 is also a calibration input" in done.stdout,
              done.stdout)
        done, _ = export(folder, "wrong_dtype")
        check("held-out inputs of another dtype are refused",
              done.returncode != 0 and "--held-out" in done.stdout
              and "not 1 tensor(s) of the --input dtypes and ranks" in done.stdout, done.stdout)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
