# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Writes the sample files and small faulty models the command's tests read.

Sample files, as a user saves them with torch.save:
  image.pt          a 1x3x64x64 tensor (SqueezeNet's input)
  image_tuple.pt    the same in a one-element tuple
  image_dict.pt     a dict (refused: not a tensor, tuple or list)
  image_batch2.pt   a 2x3x64x64 tensor (refused: tuning is at batch size 1)
  image_legacy.pt   the legacy non-zip format (refused before LibTorch reads it)
  zeros.pt, ones.pt 1x4 tensors for the models below

TorchScript models:
  fails_on_ones.pt  raises on a sample whose first value is above 0.5 (fails on ones.pt only)
  nan.pt            returns NaN everywhere
"""

import argparse
import pathlib

import torch


class FailsOnOnes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x[0, 0] > 0.5):
            raise RuntimeError("this model refuses values above 0.5")
        return x * 2


class AllNaN(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    image = torch.randn(1, 3, 64, 64)
    torch.save(image, out / "image.pt")
    torch.save((image,), out / "image_tuple.pt")
    torch.save({"x": image}, out / "image_dict.pt")
    torch.save(torch.randn(2, 3, 64, 64), out / "image_batch2.pt")
    torch.save(image, out / "image_legacy.pt", _use_new_zipfile_serialization=False)
    torch.save(torch.zeros(1, 4), out / "zeros.pt")
    torch.save(torch.ones(1, 4), out / "ones.pt")
    torch.jit.script(FailsOnOnes()).save(str(out / "fails_on_ones.pt"))
    torch.jit.script(AllNaN()).save(str(out / "nan.pt"))


if __name__ == "__main__":
    main()
