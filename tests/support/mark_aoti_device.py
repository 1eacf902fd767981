#!/usr/bin/env python3
"""Copies a .pt2 archive, saying in every AOTInductor model's metadata that it was compiled for
another device (default: cuda). Compiling for CUDA needs a GPU; this lets a machine without one
test that aitune refuses a package made for another device than the model's (review A2), before
any of the package's code runs.

Usage: mark_aoti_device.py SOURCE.pt2 TARGET.pt2 [DEVICE]
"""
import json
import os
import sys
import zipfile


def main(source, target, device="cuda"):
    tmp = f"{target}.tmp{os.getpid()}"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if "/data/aotinductor/" in info.filename and info.filename.endswith("_metadata.json"):
                metadata = json.loads(data)
                if "AOTI_DEVICE_KEY" in metadata:
                    metadata["AOTI_DEVICE_KEY"] = device
                data = json.dumps(metadata).encode()
            dst.writestr(info, data)
    os.replace(tmp, target)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
