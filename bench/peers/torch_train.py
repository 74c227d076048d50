#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The PyTorch peer of Swapscope's GPU validation: torchvision's ResNets trained on synthetic data
with the optimizer Swapscope uses (SGD, lr 0.01, momentum 0.9, weight decay 5e-4), fp32 NCHW.

  torch_train.py throughput --model resnet50 --batch 64 [--iters 30] [--warmup 5] [--math fp32]
  torch_train.py largest-k --model resnet152 --budget-gib 8 [--hi 1024]
  torch_train.py pcie [--mib 256] [--reps 10]
  torch_train.py info

`throughput` prints JSON with the median iteration time after --warmup iterations and images/s;
each timed step first copies the minibatch from pageable host memory into a page-locked staging
buffer and from there to the GPU, as Swapscope's `train` does in every timed iteration.
`largest-k` caps the process with torch.cuda.set_per_process_memory_fraction and bisects the
largest minibatch whose training iteration runs without running out of memory. `pcie` times
page-locked host-to-device and device-to-host copies of --mib MiB (the median of --reps), alone and
both directions at once on two streams. `info` names PyTorch's, CUDA's and cuDNN's versions and
the GPU. Each prints one JSON object; bench/gpu/validate.py runs them as child processes, so
that it never holds a CUDA context itself.
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torchvision


def set_math(mode):
    tf32 = mode == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = False  # heuristics, as Swapscope's default choice


def make(model, classes=1000):
    net = getattr(torchvision.models, model)(weights=None, num_classes=classes).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    return net, opt


def step(net, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    return loss


def throughput(args):
    set_math(args.math)
    net, opt = make(args.model)
    # Swapscope's timed iteration copies the minibatch from the caller's (pageable) memory into
    # page-locked staging memory and from there to the GPU; every timed step here does the same.
    x_src = torch.randn(args.batch, 3, args.size, args.size)
    y_src = torch.randint(0, 1000, (args.batch,))
    x_pin, y_pin = torch.empty_like(x_src).pin_memory(), torch.empty_like(y_src).pin_memory()
    times = []
    for _ in range(args.warmup + args.iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x_pin.copy_(x_src)
        y_pin.copy_(y_src)
        x = x_pin.to("cuda", non_blocking=True)
        y = y_pin.to("cuda", non_blocking=True)
        step(net, opt, x, y)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times[args.warmup:])
    return {"framework": "pytorch " + torch.__version__, "model": args.model, "batch": args.batch,
            "math": args.math, "iterations": args.iters, "warmup": args.warmup,
            "input": "pageable host batch copied to page-locked staging memory, then to the GPU, "
                     "in every timed step",
            "t_iter_median_s": med, "images_per_s": args.batch / med,
            "gpu": torch.cuda.get_device_name(0),
            "peak_allocated": torch.cuda.max_memory_allocated()}


def fits(model, k, size):
    try:
        net, opt = make(model)
        x = torch.randn(k, 3, size, size, device="cuda")
        y = torch.randint(0, 1000, (k,), device="cuda")
        step(net, opt, x, y)
        step(net, opt, x, y)  # the optimizer's state exists from the second step on
        torch.cuda.synchronize()
        return True
    except torch.cuda.OutOfMemoryError:
        return False
    finally:
        net = opt = x = y = None
        torch.cuda.empty_cache()


def largest_k(args):
    set_math(args.math)
    total = torch.cuda.get_device_properties(0).total_memory
    cap = args.budget_gib * (1 << 30)
    torch.cuda.set_per_process_memory_fraction(min(1.0, cap / total), 0)
    lo, hi = 0, args.hi  # fits(lo) holds (0 trivially); bisect for the last k that fits
    if fits(args.model, hi, args.size):
        return {"model": args.model, "budget_gib": args.budget_gib, "largest_k": None,
                "note": f"k = {hi} fits; raise --hi"}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(args.model, mid, args.size):
            lo = mid
        else:
            hi = mid
    return {"framework": "pytorch " + torch.__version__, "model": args.model,
            "budget_gib": args.budget_gib, "memory_fraction": cap / total, "largest_k": lo,
            "gpu": torch.cuda.get_device_name(0)}


def pcie(args):
    size = args.mib << 20
    host = torch.empty(size, dtype=torch.uint8).pin_memory()
    dev = torch.empty(size, dtype=torch.uint8, device="cuda")
    host2 = torch.empty(size, dtype=torch.uint8).pin_memory()
    dev2 = torch.empty(size, dtype=torch.uint8, device="cuda")
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def timed(fn):
        ts = []
        for _ in range(args.reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    def both():
        with torch.cuda.stream(s1):
            dev.copy_(host, non_blocking=True)
        with torch.cuda.stream(s2):
            host2.copy_(dev2, non_blocking=True)
    return {"bytes": size, "reps": args.reps,
            "h2d_gbps": size / timed(lambda: dev.copy_(host, non_blocking=True)) / 1e9,
            "d2h_gbps": size / timed(lambda: host.copy_(dev, non_blocking=True)) / 1e9,
            "duplex_gbps": 2 * size / timed(both) / 1e9,
            "gpu": torch.cuda.get_device_name(0)}


def info(_args):
    props = torch.cuda.get_device_properties(0)
    return {"torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "gpu": props.name,
            "memory_bytes": props.total_memory,
            "torchvision": torchvision.__version__}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("mode", choices=["throughput", "largest-k", "pcie", "info"])
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--math", choices=["fp32", "tf32"], default="fp32")
    p.add_argument("--budget-gib", type=float, default=8.0)
    p.add_argument("--hi", type=int, default=1024)
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--reps", type=int, default=10)
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_train.py: no CUDA device is available to PyTorch")
    modes = {"throughput": throughput, "largest-k": largest_k, "pcie": pcie, "info": info}
    out = modes[args.mode](args)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
