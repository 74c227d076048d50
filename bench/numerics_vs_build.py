#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that two builds of Swapscope train to the same weights: each binary trains a zoo model
on synthetic data for --iters iterations with the same seed and saves its weights
(`train --save-weights`); every tensor (weights and running statistics) of the second is then
compared with the first's, as |b - a| / |a| over the tensor (2-norms).

  bench/numerics_vs_build.py --before OLD/swapscope --after NEW/swapscope
                             [--model resnet18] [--input 3x32x32] [--batch 8] [--iters 5]
                             [--tolerance 1e-5]

Prints each model's largest relative error and its tensor; exits 1 if one exceeds --tolerance.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu"))
from validate import read_weights  # noqa: E402  the weight file's one reader


def relative_error(a, b):
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    norm = math.sqrt(sum(x * x for x in a))
    return diff / norm if norm > 0 else diff


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--before", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("--model", default="resnet18,fmnist-cnn")
    p.add_argument("--input", default="3x32x32", help="for the models other than fmnist-cnn")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--tolerance", type=float, default=1e-5)
    args = p.parse_args()
    worst_all = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.model.split(","):
            files = []
            for side, binary in (("before", args.before), ("after", args.after)):
                out = os.path.join(tmp, f"{model}.{side}.weights")
                cmd = [binary, "train", "--model", model, "--data", "synthetic", "--batch",
                       str(args.batch), "--iters", str(args.iters), "--budget", "4GiB",
                       "--seed", "1", "--save-weights", out]
                if model != "fmnist-cnn":
                    cmd += ["--input", args.input]
                subprocess.run(cmd, check=True, capture_output=True)
                files.append(read_weights(out))
            a, b = files
            if a.keys() != b.keys():
                sys.exit(f"{model}: the builds saved different tensors")
            worst, name = max((relative_error(a[n], b[n]), n) for n in a)
            worst_all = max(worst_all, worst)
            print(f"{model}: largest relative error {worst:.2e} ({name}) after {args.iters} "
                  f"iterations at k = {args.batch}, {len(a)} tensors")
    sys.exit(0 if worst_all <= args.tolerance else 1)


if __name__ == "__main__":
    main()
