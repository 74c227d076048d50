#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for `nvidia-smi --query-gpu=... --format=csv,noheader` in validate_test.py: one
H100 in the compute mode FAKE_COMPUTE_MODE (default Default); half a second on a real one."""
import os
import sys

VALUES = {"name": "NVIDIA H100 80GB HBM3", "memory.total": "81559 MiB",
          "driver_version": "580.65.06"}


def main():
    query = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--query-gpu=")), "")
    if not query:
        sys.exit("fake nvidia-smi: only --query-gpu is answered")
    mode = os.environ.get("FAKE_COMPUTE_MODE", "Default")
    print(", ".join(mode if f == "compute_mode" else VALUES.get(f, "[N/A]")
                    for f in query.split(",")))
    sys.stderr.write("fake-gpu: would take 0.50 s\n")


if __name__ == "__main__":
    main()
