#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for `swapscope` in validate_test.py: answers the commands bench/gpu/validate.py
runs with plausible JSON, reports on stderr the time the real command would take on an H100
("fake-gpu: would take N s", see estimate()), and fails where the environment says:

  FAKE_FAIL_DETERMINISM=1  `train --deterministic --policy swap-all` crashes (exit 1)
  FAKE_FIT_K=N             resnet152 trains at k <= N; above, the engine's "does not fit" refusal
  FAKE_HOST_K=N            resnet152 above k = N: the engine's refusal for want of host memory
  FAKE_CRASH_K=N           resnet152 at k = N fails with a CUDA error (exit 1)
  FAKE_KMAX=N              analyze's k_max under swap-all (default 10)
  FAKE_HOST_PER_K=B        analyze's host bytes: 1 GiB and B per sample (default 200 MB)
  FAKE_DEFAULT_ALGO_ERROR=1  CUDA without --deterministic: the conv layer's gradient 0.1 % off
  FAKE_SLOW=F              every estimate times F (a plan that does not fit its budget)
"""
import json
import os
import struct
import sys

# The estimates (not measurements): seconds per sample of one training iteration on an H100 in
# plain fp32 (about 20 TFLOP/s of the FMA convolutions) and on 16 CPU cores, and the bytes
# swap-all moves each way per sample at 20 GB/s; a CUDA process starts in 3 s (context, cuDNN
# and cuBLAS handles), an executor chooses its algorithms in 0.5 s, an iteration on the GPU
# takes at least 5 ms (launch-bound small networks).
PER_SAMPLE = {"fmnist-cnn": (2e-5, 5e-4, 0.2e6), "resnet20": (1e-4, 6e-3, 2e6),
              "resnet50": (1.2e-3, 0.1, 100e6), "resnet152": (3.5e-3, 0.3, 230e6)}
START_S = {"cpu": 0.3, "cuda": 3.0}
EXECUTOR_S, FLOOR_S, PCIE_BPS = 0.5, 0.005, 20e9


def iteration_s(model, k, dev, policy):
    gpu_s, cpu_s, swapped = PER_SAMPLE.get(model, PER_SAMPLE["resnet50"])
    if dev == "cpu":
        return k * cpu_s
    t = max(FLOOR_S, k * gpu_s)
    if policy not in (None, "keep-all"):
        t = max(t, k * swapped / PCIE_BPS)
    return t


def estimate(verb, o):
    dev = o.get("device", "cpu")
    model, k = o.get("model", "resnet50"), int(o.get("batch", "1"))
    if verb in ("analyze", "plan"):
        t = 0.3
    elif verb == "train":
        t = START_S[dev] + EXECUTOR_S + int(o.get("iters", "1")) * iteration_s(
            model, k, dev, o.get("policy"))
    elif verb == "profile":
        top = int(o.get("max-batch", "128"))
        per_k = 1 + int(o.get("iters", "3"))  # one warm-up
        t = START_S[dev] + sum(EXECUTOR_S + per_k * iteration_s(model, max(1, int(top * f)), dev,
                                                                  "swap-all")
                               for f in (1 / 8, 1 / 4, 1 / 2, 2 / 3, 1))
    elif verb == "run":
        overhead = 1.3 if o.get("collector") == "cupti-all-api" else 1.1
        t = START_S[dev] + EXECUTOR_S + (1 + int(o.get("iters", "3"))) * overhead * iteration_s(
            "resnet50", 128, dev, "swap-all")
    else:
        t = 0
    return t * float(os.environ.get("FAKE_SLOW", "1"))


def opts(argv):
    out, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                out[a[2:]] = argv[i + 1]
                i += 2
                continue
            out[a[2:]] = True
        i += 1
    return out


def write_weights(path, tensors):
    def u64(v):
        return struct.pack("<Q", v)

    def string(s):
        b = s.encode()
        return u64(len(b)) + b

    data = b"SWSWGT01" + string("structurehash") + u64(len(tensors))
    for name, values in tensors.items():
        data += string(name) + u64(len(values)) + struct.pack(f"<{len(values)}f", *values)
    with open(path, "wb") as f:
        f.write(data)


def fail(code, message):
    sys.stderr.write(f"swapscope: error: {message}\n")
    sys.exit(code)


def analyze(o):
    k = int(o.get("batch", "1"))
    per_k = int(os.environ.get("FAKE_HOST_PER_K", str(200 * 10**6)))
    return {"k_max": {"swap_all": int(os.environ.get("FAKE_KMAX", "10"))},
            "host_memory": {"batch": k, "bytes": (1 << 30) + per_k * k}}


def run_json():
    def transfers(n):
        return {"bytes": n * 10**8, "busy_ns": n * 5 * 10**6, "overlapped": n - 1, "count": n}
    return {"collector": {"transfers": {"h2d": transfers(40), "d2h": transfers(40)},
                          "overhead": 0.05, "iterations": 3, "untagged_kernels": 0,
                          "step_coverage": {"missing": [], "problems": [], "allowed": []}},
            "peak_bytes": {"with_workspace": 5000, "measured": 5000}}


def train(o):
    k = int(o["batch"])
    if o.get("model") == "resnet152":
        if os.environ.get("FAKE_CRASH_K") == str(k):
            fail(1, "cudaErrorLaunchFailure: unspecified launch failure at step 12")
        if k > int(os.environ.get("FAKE_HOST_K", "1000000")):
            fail(2, "the run needs 90.0 GiB (96636764160 bytes) of host memory (swapped feature "
                    "maps: 89.0 GiB; minibatch: 1.00 GiB) but the machine has 80.0 GiB "
                    "(85899345920 bytes) available: 10737418240 bytes short; a smaller "
                    "minibatch, budget or data set needs less")
        if k > int(os.environ.get("FAKE_FIT_K", "8")):
            fail(2, "the plan needs 9.00 GiB (9663676416 bytes) at step 300 (forward of layer "
                    "'layer4.2.conv3') but the budget is 8.00 GiB (8589934592 bytes): "
                    "1073741824 bytes short")
    if (os.environ.get("FAKE_FAIL_DETERMINISM") and "deterministic" in o
            and o.get("policy") == "swap-all"):
        fail(1, "cudaErrorIllegalAddress: an illegal memory access was encountered")
    lr = float(o.get("lr", "0.01"))
    cuda = o.get("device") == "cuda"
    off = 1e-3 if (cuda and "deterministic" not in o
                   and os.environ.get("FAKE_DEFAULT_ALGO_ERROR")) else 0
    if "save-weights" in o:
        w0 = [0.1 * (i + 1) for i in range(16)]
        g = [0.01 * (i + 1) * (1 + (1e-7 if cuda else 0) + off) for i in range(16)]
        write_weights(o["save-weights"], {
            "conv.weights": [w - lr * d for w, d in zip(w0, g)],
            "bn.weights": [1.0 - lr * 0.5, 0.0 - lr * 0.25],
            "bn.running_stats": [0.5, 2.0]})
    iters, warmup = int(o.get("iters", "1")), int(o.get("warmup", "1"))
    algos = ("fwd IMPLICIT_PRECOMP_GEMM 1.0 MiB; bwd-data ALGO_1 0 B; bwd-filter ALGO_1 0 B"
             if "deterministic" not in o else
             "fwd IMPLICIT_GEMM 0 B; bwd-data ALGO_0 0 B; bwd-filter ALGO_0 0 B")
    return {"first_loss": 2.302585,
            "offload_bytes": 4096 if o.get("policy") in ("swap-all", "vdnn-conv") else 0,
            "iterations": iters, "warmup": warmup,
            "t_iter_median_s": 0.05 if iters > warmup else None, "images_per_s": k / 0.05,
            "update": o.get("update", "per-layer"),
            "kernel_choices": [{"layer": "conv", "algorithms": algos}] if cuda else [],
            "last_iteration": {"tasks": 120},
            "pool": {"predicted_peak": 1000 + k, "high_water": 1000 + k}}


def main():
    verb, o = sys.argv[1], opts(sys.argv[2:])
    sys.stderr.write(f"fake-gpu: would take {estimate(verb, o):.2f} s\n")
    if verb == "analyze":
        out = analyze(o)
    elif verb == "train":
        out = train(o)
    elif verb == "profile":
        out = {"db": o.get("db")}
    elif verb == "plan":
        out = {"plan": o.get("out")}
    elif verb == "run":
        out = run_json()
    else:
        fail(1, f"the fake swapscope does not do '{verb}'")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
