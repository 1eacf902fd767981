#!/usr/bin/env python3
"""Exports a PyTorch model into one torch.export .pt2 archive for aitune-cpp: the command line of
the package tools/aitune_export/, whose docstring (and --help) says what the archive holds."""
import contextlib
import sys

from aitune_export.cli import main

if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
