# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Checks that the export tool installs nothing at run time: where this Python lacks a quantiser
(NNCF for openvino_int8 and the int8 repair, torchao for aoti_int8), asking for it raises
ImportError naming `tools/setup-venv.sh --quantize`, and no process is started to install it; and
that no `pip install` is left in the export tool's code.

Usage: check_quantisers_not_installed.py   (exit 0: every check passed)
"""
import os
import pathlib
import re
import subprocess
import sys

tools = pathlib.Path(__file__).resolve().parent.parent.parent / "tools"
from aitune_export import aoti_int8, quantize

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def refused(call, module):
    """Whether `call()` raised ImportError naming `module` and the set-up command."""
    try:
        call()
    except ImportError as error:
        text = str(error)
        return module in text and "tools/setup-venv.sh --quantize" in text
    return False


def no_process(*args, **kwargs):
    failures.append(f"a process was started: {args[:1]}")
    raise RuntimeError("no process may be started")


# Neither quantiser importable, whatever this venv holds; any process started is a failure.
sys.modules["nncf"] = None
sys.modules["torchao"] = None
subprocess.run = subprocess.Popen = subprocess.check_call = no_process
os.system = no_process

check(refused(quantize.ensure_nncf, "nncf"), "a missing NNCF is not refused with the command")
check(refused(quantize.ensure_torchao, "torchao"),
      "a missing torchao is not refused with the command")
check(refused(aoti_int8.Pt2eQuantiser, "torchao"),
      "aoti_int8's quantiser does not name the command for a missing torchao")

pip = re.compile(r"pip['\"]?,?\s*['\"]?install|-m\s+pip|['\"]pip['\"]")
for path in sorted(list((tools / "aitune_export").glob("*.py")) + [tools / "peers_int8.py"]):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if pip.search(line):
            failures.append(f"{path.relative_to(tools.parent)}:{number}: {line.strip()}")

for failure in failures:
    print("FAILED:", failure)
print("quantisers: never installed at run time; a missing one names tools/setup-venv.sh --quantize"
      if not failures else f"{len(failures)} check(s) failed")
sys.exit(1 if failures else 0)
