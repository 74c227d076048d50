#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for `swapscope` in validate_test.py: answers the commands bench/gpu/validate.py
runs with plausible JSON, and fails where the environment says:

  FAKE_FAIL_DETERMINISM=1  `train --deterministic --policy swap-all` crashes (exit 1)
  FAKE_FIT_K=N             resnet152 trains at k <= N; above, the engine's "does not fit" refusal
  FAKE_HOST_K=N            resnet152 above k = N: the engine's refusal for want of host memory
  FAKE_CRASH_K=N           resnet152 at k = N fails with a CUDA error (exit 1)
"""
import json
import os
import struct
import sys


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


def main():
    verb, o = sys.argv[1], opts(sys.argv[2:])
    if verb == "analyze":
        print(json.dumps({"k_max": {"swap_all": 10}}))
        return
    if verb != "train":
        fail(1, f"the fake swapscope does not do '{verb}'")
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
    if "save-weights" in o:
        w0 = [0.1 * (i + 1) for i in range(16)]
        g = [0.01 * (i + 1) * (1 + (1e-7 if cuda else 0)) for i in range(16)]
        write_weights(o["save-weights"], {
            "conv.weights": [w - lr * d for w, d in zip(w0, g)],
            "bn.weights": [1.0 - lr * 0.5, 0.0 - lr * 0.25],
            "bn.running_stats": [0.5, 2.0]})
    iters, warmup = int(o.get("iters", "1")), int(o.get("warmup", "1"))
    print(json.dumps({"first_loss": 2.302585, "offload_bytes": 4096 if o.get("policy") == "swap-all" else 0,
                      "iterations": iters, "warmup": warmup,
                      "t_iter_median_s": 0.05 if iters > warmup else None, "images_per_s": k / 0.05,
                      "pool": {"predicted_peak": 1000 + k, "high_water": 1000 + k}}))


if __name__ == "__main__":
    main()
