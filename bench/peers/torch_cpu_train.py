#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The PyTorch peer of Swapscope's CPU backend: a model trained on synthetic data on the CPU with
the optimizer Swapscope uses (SGD, lr 0.01, momentum 0.9, weight decay 5e-4), fp32, NCHW.

  torch_cpu_train.py --model resnet18 --input 3x64x64 --batch 32 [--threads 2]
                     [--iters 10] [--warmup 2] [--classes N] [--profile]

--model is a torchvision model (resnet18, resnet50, vgg11, ...) or fmnist-cnn, Swapscope's zoo
CNN for Fashion-MNIST written in PyTorch layer for layer. Each timed step copies the minibatch
from the caller's tensor into the one the model reads, as Swapscope's `train` stages its
minibatch in every timed iteration. Prints one JSON object with the median iteration after
--warmup iterations and images/s; --profile adds torch.profiler's self CPU time per operator
over the timed iterations, divided by their count.
"""
import argparse
import json
import statistics
import time

import torch
import torchvision


def fmnist_cnn(classes):
    """Swapscope's zoo model fmnist-cnn (engine/graph/zoo_small.cpp) for 1x28x28 inputs."""
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, 1, 1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2, 2),
        torch.nn.Conv2d(32, 64, 3, 1, 1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2, 2),
        torch.nn.Flatten(), torch.nn.Linear(64 * 7 * 7, 128), torch.nn.ReLU(),
        torch.nn.Dropout(0.25), torch.nn.Linear(128, classes))


def make(model, classes):
    if model == "fmnist-cnn":
        return fmnist_cnn(classes)
    return getattr(torchvision.models, model)(weights=None, num_classes=classes)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True, help="CxHxW")
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--classes", type=int, default=None,
                   help="default: 10 for fmnist-cnn, 1000 otherwise (Swapscope's zoo defaults)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    classes = args.classes or (10 if args.model == "fmnist-cnn" else 1000)
    shape = [int(v) for v in args.input.split("x")]
    net = make(args.model, classes)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x_src = torch.randn(args.batch, *shape)
    y_src = torch.randint(0, classes, (args.batch,))
    x, y = torch.empty_like(x_src), torch.empty_like(y_src)

    def step():
        x.copy_(x_src)
        y.copy_(y_src)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    times = []
    prof = None
    if args.profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        prof.__enter__()
    for _ in range(args.iters):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    out = {"framework": "pytorch " + torch.__version__, "model": args.model,
           "input": args.input, "batch": args.batch, "classes": classes,
           "threads": torch.get_num_threads(), "iterations": args.iters, "warmup": args.warmup,
           "t_iter_median_s": statistics.median(times),
           "images_per_s_median": args.batch / statistics.median(times)}
    if prof is not None:
        prof.__exit__(None, None, None)
        ops = {}
        for e in prof.key_averages():
            ops[e.key] = e.self_cpu_time_total / 1e3 / args.iters
        out["self_ms_per_iteration"] = dict(sorted(ops.items(), key=lambda kv: -kv[1])[:25])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
