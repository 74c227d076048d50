#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for bench/peers/torch_train.py in validate_test.py: answers `throughput` and
`largest-k` with plausible JSON without PyTorch.

  FAKE_PEER_WARMUP=N   `throughput` reports N warm-up iterations instead of the ones asked for
"""
import argparse
import json
import os


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["throughput", "largest-k"])
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--math", default="fp32")
    p.add_argument("--budget-gib", type=float, default=8.0)
    args = p.parse_args()
    if args.mode == "throughput":
        warmup = int(os.environ.get("FAKE_PEER_WARMUP", args.warmup))
        print(json.dumps({"framework": "pytorch 0.0-fake", "model": args.model,
                          "batch": args.batch, "iterations": args.iters, "warmup": warmup,
                          "input": "a fake pinned batch", "t_iter_median_s": 0.1,
                          "images_per_s": args.batch / 0.1}))
    else:
        print(json.dumps({"framework": "pytorch 0.0-fake", "model": args.model,
                          "budget_gib": args.budget_gib, "memory_fraction": 0.1,
                          "largest_k": 7}))


if __name__ == "__main__":
    main()
