# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Checks tools/synthetic_task.py, the task make_models.py --task synthetic trains image models on
so that their class scores have margins: its inputs are reproducible and each use's (training,
calibration, the tuner's and the harness's held-out samples) are apart; a small CNN trained on it
classifies unseen inputs and its top class leads by a margin that random weights do not give;
the tuner's samples are written as aitune-tune --sample files and found again. A few seconds.

Usage: check_synthetic_task.py   (exit 0: every check passed)
"""
import os
import sys
import tempfile

import torch

import synthetic_task
from aitune_export.inputs import parse_input

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        failures.append(what)


def small_cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.BatchNorm2d(64),
        torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(64 * 8 * 8, 10))


def median_margin(module, inputs):
    """The median over `inputs` of the lead of the top class score over the second."""
    with torch.no_grad():
        top = torch.cat([module(x) for (x,) in inputs]).topk(2, dim=1).values
    return float((top[:, 0] - top[:, 1]).median())


shape = (1, 3, 16, 16)
check(synthetic_task.is_image([parse_input("1x3x32x32")]), "one float image is the task's input")
check(not synthetic_task.is_image([parse_input("1x128:int64[0,30522)")]),
      "token ids are not an image")
check(not synthetic_task.is_image([parse_input("1x64x256")]), "a 3-d float input is not an image")

first, labels = synthetic_task.draw(shape, 4, 7)
again, labels_again = synthetic_task.draw(shape, 6, 7)
check(all(torch.equal(a[0], b[0]) for a, b in zip(first, again)) and labels == labels_again[:4],
      "the same seed draws the same inputs, however many are drawn")
check(first[0][0].shape == shape and len(first[0]) == 1, "an input is a tuple of one 1xCxHxW")
check(all(0 <= label < synthetic_task.CLASSES for label in labels_again), "classes are 0 to 9")
starts = sorted(synthetic_task.SEEDS.values())
check(all(b - a >= 10_000 for a, b in zip(starts, starts[1:])),
      "each use's seeds are at least 10000 apart, so no two uses share an input")

module = small_cnn()
unseen = synthetic_task.draw(shape, 100, synthetic_task.SEEDS["harness"])[0]
module.eval()
random_margin = median_margin(module, unseen)
accuracy = synthetic_task.train(module, shape, max_steps=300)
trained_margin = median_margin(module, unseen)
print(f"median margin of the top class: {random_margin:.4f} random, {trained_margin:.4f} trained")
check(accuracy >= 0.9, f"the trained model classifies unseen inputs ({accuracy:.2f} right)")
check(not module.training, "training leaves the model in eval mode")
check(trained_margin > 0.25 and trained_margin > 10 * random_margin,
      "training gives the top class a margin random weights do not")

with tempfile.TemporaryDirectory() as scratch:
    check(synthetic_task.sample_files(scratch, "model") == [], "a model without samples has none")
    written = synthetic_task.save_samples(os.path.join(scratch, "model.samples"), shape, count=3)
    found = synthetic_task.sample_files(scratch, "model")
    check(found == written and len(found) == 3, "the samples written are found, in order")
    loaded = torch.load(found[1])
    tuner = synthetic_task.draw(shape, 3, synthetic_task.SEEDS["tuner"])[0]
    check(isinstance(loaded, tuple) and torch.equal(loaded[0], tuner[1][0]),
          "a sample file holds the tuner's held-out input as a tuple of arguments")

sys.exit(1 if failures else 0)
