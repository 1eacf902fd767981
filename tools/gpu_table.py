#!/usr/bin/env python3
"""Prints the GPU check's table (Markdown) from aitune-tune's JSON reports.

Per model: TorchEager's median, each candidate's median (or its status), the selected backend,
its speedup over TorchEager, and how the CUDA-event (device) timing of the selected backend
and of TorchEager agrees with the host clock (median device time / median host time).
"""
import json
import os
import sys


def median(entry, key="latency_ms"):
    stats = entry.get(key)
    return stats["median"] if stats else None


def agreement(entry):
    device, host = median(entry), median(entry, "host_latency_ms")
    return f"{device / host:.3f}" if device and host else "-"


def main(paths):
    paths = [p for p in paths if os.path.isfile(p)]
    if not paths:
        print("no reports: no model was tuned (see the lines above)")
        return 1
    rows = []
    for path in sorted(paths):
        with open(path) as f:
            report = json.load(f)
        baseline = report.get("baseline") or {}
        cells = []
        for c in report["candidates"]:
            value = median(c)
            cells.append(f"{c['backend']}: {value:.3f}" if value is not None
                         and c["status"] == "ok" else f"{c['backend']}: {c['status']}")
        selected = next((c for c in report["candidates"] if c["selected"]), None)
        chosen = baseline if report.get("baseline_selected") else selected
        speedup = selected["speedup"] if selected and selected.get("speedup") else 1.0
        rows.append([report["module"], f"{median(baseline):.3f}" if median(baseline) else "-",
                     "<br>".join(cells), report["selected"], f"{speedup:.2f}x",
                     f"selected {agreement(chosen or {})}, eager {agreement(baseline)}"])
    print("| model | eager median (ms) | candidates' medians (ms) | selected | speedup | "
          "event/host timing |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
