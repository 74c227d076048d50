#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for bench/peers/torch_train.py in validate_test.py: answers `throughput`,
`largest-k`, `pcie` and `info` with plausible JSON without PyTorch, and reports on stderr the
time the real peer would take on an H100 ("fake-gpu: would take N s": 8 s to import PyTorch and
initialise CUDA, 75 ms a resnet50 iteration at k = 64, eleven bisection steps of resnet152).

  FAKE_PEER_WARMUP=N   `throughput` reports N warm-up iterations instead of the ones asked for
  FAKE_SLOW=F          every estimate times F
"""
import argparse
import json
import os
import sys

START_S = 8.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["throughput", "largest-k", "pcie", "info"])
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--math", default="fp32")
    p.add_argument("--budget-gib", type=float, default=8.0)
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--reps", type=int, default=10)
    args = p.parse_args()
    fake = "pytorch 0.0-fake"
    if args.mode == "throughput":
        took = START_S + (args.warmup + args.iters) * 0.075 * args.batch / 64
        warmup = int(os.environ.get("FAKE_PEER_WARMUP", args.warmup))
        out = {"framework": fake, "model": args.model, "batch": args.batch,
               "iterations": args.iters, "warmup": warmup, "input": "a fake page-locked batch",
               "t_iter_median_s": 0.1, "images_per_s": args.batch / 0.1}
    elif args.mode == "largest-k":
        took = START_S + 11 * 4.0
        out = {"framework": fake, "model": args.model, "budget_gib": args.budget_gib,
               "memory_fraction": 0.1, "largest_k": 7}
    elif args.mode == "pcie":
        took = START_S + 3 * args.reps * (args.mib << 20) / 20e9
        out = {"bytes": args.mib << 20, "reps": args.reps, "h2d_gbps": 25.0, "d2h_gbps": 24.0,
               "duplex_gbps": 40.0, "gpu": "Fake H100"}
    else:
        took = START_S
        out = {"torch": "0.0-fake", "cuda": "13.0", "cudnn": 91900, "gpu": "Fake H100",
               "memory_bytes": 80 << 30, "torchvision": "0.0-fake"}
    took *= float(os.environ.get("FAKE_SLOW", "1"))
    sys.stderr.write(f"fake-gpu: would take {took:.2f} s\n")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
