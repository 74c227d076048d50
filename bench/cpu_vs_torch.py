#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Swapscope's CPU backend against PyTorch on the same CPU, runs interleaved.

  bench/cpu_vs_torch.py [--swapscope build/release/app/cli/swapscope] [--python /usr/bin/python3]
                        [--threads 2] [--rounds 3] [--iters 8] [--warmup 2] [--lock FILE]
                        [--only resnet18,...]

Each row trains a zoo model on synthetic data with SGD (lr 0.01, momentum 0.9, weight decay 5e-4):
`swapscope train --data synthetic --policy keep-all`, then bench/peers/torch_cpu_train.py, one
after the other, --rounds times. Each run reports its median iteration after --warmup
iterations; a side's figure is the median of its runs' medians. Both sides run with --threads
OpenMP threads. --lock FILE runs each process under `flock -x FILE`, so that no other heavy
work shares the CPU with a timed run. Prints a Markdown table with the ratio Swapscope / PyTorch.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROWS = [  # model, input, k
    ("resnet18", "3x64x64", 32),
    ("resnet50", "3x64x64", 16),
    ("vgg11", "3x64x64", 32),
    ("fmnist-cnn", "1x28x28", 64),
]


def run_json(cmd, env, lock):
    if lock:
        cmd = ["flock", "-x", lock] + cmd
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--swapscope", default=os.path.join(root, "build/release/app/cli/swapscope"))
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=8)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--budget", default="6GiB", help="the pool (keep-all fits in it)")
    p.add_argument("--lock", default=None)
    p.add_argument("--only", default=None, help="comma-separated models")
    args = p.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    rows = [r for r in ROWS if not args.only or r[0] in args.only.split(",")]
    print(f"| | Swapscope | PyTorch | ratio |")
    print(f"|---|---|---|---|")
    for model, shape, k in rows:
        ours, theirs = [], []
        for _ in range(args.rounds):
            s = run_json([args.swapscope, "train", "--model", model, "--input", shape,
                          "--batch", str(k), "--data", "synthetic", "--policy", "keep-all",
                          "--iters", str(args.iters + args.warmup), "--warmup", str(args.warmup),
                          "--budget", args.budget, "--json"], env, args.lock)
            ours.append(k / s["t_iter_median_s"])
            t = run_json([args.python, os.path.join(here, "peers", "torch_cpu_train.py"),
                          "--model", model, "--input", shape, "--batch", str(k),
                          "--threads", str(args.threads), "--iters", str(args.iters),
                          "--warmup", str(args.warmup)], env, args.lock)
            theirs.append(t["images_per_s_median"])
            print(f"  {model} round: swapscope {ours[-1]:.1f} img/s, pytorch {theirs[-1]:.1f} "
                  f"img/s", file=sys.stderr)
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"| {model} at {shape}, k = {k} | {a:.1f} img/s | {b:.1f} img/s | {a / b:.2f}x |",
              flush=True)


if __name__ == "__main__":
    main()
