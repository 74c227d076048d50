#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Swapscope's GPU validation: one run on a machine with an NVIDIA GPU writes one report.

  python3 bench/gpu/validate.py --swapscope BIN [--out DIR] [--quick]

The machine needs python3 with PyTorch and torchvision, and the CUDA, cuDNN, cuBLAS and CUPTI
runtime libraries PyTorch ships; no Qt, no network, no cuDNN headers. BIN is a headless
`swapscope` built with the CUDA backend (here, or elsewhere with scripts/gpu-bundle.sh, whose
folder carries the binary and the non-CUDA libraries it needs). The script puts PyTorch's NVIDIA
library folders on LD_LIBRARY_PATH for it.

The report (DIR/gpu-validation.md, with every raw JSON output beside it) has six parts:
1. numerics: CUDA against CPU backend, forward loss and weights after one SGD step;
2. bit-identical weights across keep-all, swap-all and vdnn-conv in deterministic mode;
3. throughput: resnet50, k = 64, fp32, synthetic data, Swapscope keep-all against PyTorch;
4. PCIe: pinned memcpy bandwidth per direction, alone and both at once (PyTorch), against the
   swap executor's transfers under swap-all (CUPTI records);
5. trainability: the largest k of resnet152 at 224x224 under 8 GiB, Swapscope swap-all against
   PyTorch capped by set_per_process_memory_fraction;
6. memory fidelity: the analyzer's predicted pool peak against the measured one.
Every figure in it is measured by this run; nothing is filled in by hand.
"""
import argparse
import glob
import hashlib
import json
import os
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "..", "peers", "torch_train.py")
NUMERIC_TOLERANCE = 1e-4  # relative: max |cuda - cpu| over max |cpu|, per tensor


def nvidia_library_dirs():
    """PyTorch's lib folder and every nvidia/*/lib folder of the wheels it ships with."""
    import torch
    dirs = [os.path.join(os.path.dirname(torch.__file__), "lib")]
    try:
        import nvidia
        for root in nvidia.__path__:
            dirs += sorted(d for d in glob.glob(os.path.join(root, "**", "lib"), recursive=True)
                           if glob.glob(os.path.join(d, "*.so*")))
    except ImportError:
        pass
    return [d for d in dirs if os.path.isdir(d)]


class Runner:
    def __init__(self, binary, out):
        self.binary = os.path.abspath(binary)
        self.out = out
        env = dict(os.environ)
        bundle_lib = os.path.join(os.path.dirname(self.binary), "lib")
        dirs = ([bundle_lib] if os.path.isdir(bundle_lib) else []) + nvidia_library_dirs()
        env["LD_LIBRARY_PATH"] = ":".join(dirs + [env.get("LD_LIBRARY_PATH", "")])
        self.env = env
        self.log = open(os.path.join(out, "commands.log"), "w")

    def swapscope(self, name, *args, check=True):
        """Runs swapscope with --json; saves and returns the parsed output (None on failure)."""
        cmd = [self.binary, *args, "--json"]
        return self._run(name, cmd, check)

    def peer(self, name, *args, check=True):
        return self._run(name, [sys.executable, PEER, *args], check)

    def _run(self, name, cmd, check):
        t0 = time.time()
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True)
        self.log.write(f"$ {' '.join(cmd)}\n  exit {p.returncode} in {time.time() - t0:.1f} s\n")
        if p.stderr:
            self.log.write("  stderr: " + p.stderr.strip().replace("\n", "\n          ") + "\n")
        self.log.flush()
        if p.returncode != 0:
            if check:
                sys.exit(f"validate.py: {name} failed (exit {p.returncode}):\n{p.stderr}")
            return None
        with open(os.path.join(self.out, name + ".json"), "w") as f:
            f.write(p.stdout)
        return json.loads(p.stdout)


def read_weights(path):
    """Swapscope's weight file: magic, structure hash, then (name, float32 values) pairs."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"SWSWGT01":
        raise ValueError(path + ": not a Swapscope weight file")
    pos = 8

    def u64():
        nonlocal pos
        v = struct.unpack_from("<Q", data, pos)[0]
        pos += 8
        return v

    def string():
        nonlocal pos
        n = u64()
        s = data[pos:pos + n].decode()
        pos += n
        return s

    string()  # the structure hash
    tensors = {}
    for _ in range(u64()):
        name = string()
        n = u64()
        tensors[name] = struct.unpack_from(f"<{n}f", data, pos)
        pos += 4 * n
    return tensors


def rel_error(a, b):
    scale = max(abs(x) for x in a) or 1.0
    return max(abs(x - y) for x, y in zip(a, b)) / scale


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--swapscope", required=True, help="the swapscope binary (CUDA backend)")
    ap.add_argument("--out", default="gpu-validation", help="report folder (default ./gpu-validation)")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import torch
    if not torch.cuda.is_available():
        sys.exit("validate.py: PyTorch sees no CUDA device; this script needs a GPU")
    r = Runner(args.swapscope, args.out)
    iters = 5 if args.quick else 30
    gpu = torch.cuda.get_device_name(0)
    total = torch.cuda.get_device_properties(0).total_memory
    lines = ["# GPU validation", "",
             f"GPU: **{gpu}** ({total / 2**30:.1f} GiB), PyTorch {torch.__version__}, "
             f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}. "
             f"Written by `bench/gpu/validate.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
             f"{' (--quick)' if args.quick else ''}. Math mode: plain fp32 on both sides "
             "(Swapscope `--math fp32`: FMA convolutions and no TF32 in cuBLAS; PyTorch "
             "`allow_tf32 = False` for cuDNN and matmul).", ""]

    # 1. Numerics.
    lines += ["## 1. Numerics: CUDA against CPU backend", "",
              f"One SGD step from the same initial weights and synthetic minibatch; the error of a "
              f"tensor is max |cuda - cpu| / max |cpu|; tolerance {NUMERIC_TOLERANCE:g}.", "",
              "| network | k | loss cpu | loss cuda | loss rel. error | worst tensor | its error | pass |",
              "|---|---|---|---|---|---|---|---|"]
    for model, k in (("fmnist-cnn", 32), ("resnet20", 16)):
        w = {}
        loss = {}
        for dev in ("cpu", "cuda"):
            path = os.path.join(args.out, f"weights-{model}-{dev}.bin")
            j = r.swapscope(f"numerics-{model}-{dev}", "train", "--model", model, "--data",
                            "synthetic", "--batch", str(k), "--iters", "1", "--budget", "1GiB",
                            "--device", dev, "--math", "fp32", "--save-weights", path)
            loss[dev] = j["first_loss"]
            w[dev] = read_weights(path)
        errs = {name: rel_error(w["cpu"][name], w["cuda"][name]) for name in w["cpu"]}
        worst = max(errs, key=errs.get)
        lerr = abs(loss["cuda"] - loss["cpu"]) / abs(loss["cpu"])
        ok = errs[worst] <= NUMERIC_TOLERANCE and lerr <= NUMERIC_TOLERANCE
        lines.append(f"| {model} | {k} | {loss['cpu']:.6f} | {loss['cuda']:.6f} | {lerr:.2e} | "
                     f"{worst} | {errs[worst]:.2e} | {'yes' if ok else '**no**'} |")

    # 2. Bit-identity across swap sets.
    lines += ["", "## 2. Bit-identical weights across swap sets (deterministic mode)", "",
              "resnet20 at k = 64, 5 iterations, `--device cuda --deterministic`.", "",
              "| policy | offloaded bytes | weights sha256 (first 16) |", "|---|---|---|"]
    digests = set()
    for policy in ("keep-all", "swap-all", "vdnn-conv"):
        path = os.path.join(args.out, f"weights-det-{policy}.bin")
        j = r.swapscope(f"determinism-{policy}", "train", "--model", "resnet20", "--data",
                        "synthetic", "--batch", "64", "--iters", "5", "--budget", "2GiB",
                        "--device", "cuda", "--deterministic", "--policy", policy,
                        "--save-weights", path)
        digests.add(sha256(path))
        lines.append(f"| {policy} | {j['offload_bytes']} | `{sha256(path)}` |")
    lines.append("")
    lines.append("Identical: **" + ("yes" if len(digests) == 1 else "no") + "**.")

    # 3. Throughput.
    sw = r.swapscope("throughput-swapscope", "train", "--model", "resnet50", "--data", "synthetic",
                     "--batch", "64", "--iters", str(iters + 5), "--budget", "40GiB", "--device",
                     "cuda", "--math", "fp32", "--policy", "keep-all")
    pt = r.peer("throughput-pytorch", "throughput", "--model", "resnet50", "--batch", "64",
                "--iters", str(iters), "--math", "fp32")
    lines += ["", "## 3. Throughput: resnet50, k = 64, fp32, synthetic data", "",
              "Both measured over every one of the same number of iterations, the first ones "
              f"included ({iters + 5}): `swapscope train` reports no other measure.", "",
              "| | images/s, all iterations | images/s, median after 5 warm-up |", "|---|---|---|",
              f"| Swapscope keep-all | {sw['images_per_s']:.1f} | - |",
              f"| PyTorch {torch.__version__} | {pt['images_per_s_all']:.1f} | {pt['images_per_s']:.1f} |",
              "", f"Ratio Swapscope / PyTorch (all iterations): "
              f"**{sw['images_per_s'] / pt['images_per_s_all']:.3f}**."]

    # 4. PCIe.
    size = 256 << 20
    host = torch.empty(size, dtype=torch.uint8).pin_memory()
    dev = torch.empty(size, dtype=torch.uint8, device="cuda")
    host2 = torch.empty(size, dtype=torch.uint8).pin_memory()
    dev2 = torch.empty(size, dtype=torch.uint8, device="cuda")
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def timed(fn, reps=10):
        ts = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    h2d = size / timed(lambda: dev.copy_(host, non_blocking=True)) / 1e9
    d2h = size / timed(lambda: host.copy_(dev, non_blocking=True)) / 1e9

    def both():
        with torch.cuda.stream(s1):
            dev.copy_(host, non_blocking=True)
        with torch.cuda.stream(s2):
            host2.copy_(dev2, non_blocking=True)
    duplex = 2 * size / timed(both) / 1e9
    del host, host2, dev, dev2
    torch.cuda.empty_cache()
    prof = r.swapscope("pcie-profile", "profile", "--model", "resnet50", "--budget", "16GiB",
                       "--db", os.path.join(args.out, "resnet50-profile.swapdb"), "--force",
                       "--device", "cuda", "--conv-algo", "memory", "--max-batch", "128")
    plan = r.swapscope("pcie-plan", "plan", "--db", os.path.join(args.out, "resnet50-profile.swapdb"),
                       "--budget", "16GiB", "--batch", "128", "--policy", "swap-all", "--out",
                       os.path.join(args.out, "resnet50-swap-all.plan.json"))
    run = r.swapscope("pcie-run", "run", "--plan", os.path.join(args.out, "resnet50-swap-all.plan.json"),
                      "--device", "cuda", "--conv-algo", "memory", "--collector", "cupti",
                      "--iters", str(max(3, iters // 5)))
    c = run["collector"]
    ex = {}
    for d in ("h2d", "d2h"):
        t = c["transfers"][d]
        ex[d] = t["bytes"] / t["busy_ns"] if t["busy_ns"] else float("nan")
    lines += ["", "## 4. PCIe: pinned copies against the swap executor", "",
              "| | h2d GB/s | d2h GB/s |", "|---|---|---|",
              f"| pinned memcpy of 256 MiB, alone (median of 10) | {h2d:.1f} | {d2h:.1f} |",
              f"| both directions at once (sum {duplex:.1f} GB/s) | - | - |",
              f"| swap executor, resnet50 swap-all k = 128 ({c['source']}) | {ex['h2d']:.1f} | {ex['d2h']:.1f} |",
              "", f"Executor transfers overlapped with compute: h2d {c['transfers']['h2d']['overlapped']}"
              f" of {c['transfers']['h2d']['count']}, d2h {c['transfers']['d2h']['overlapped']} of "
              f"{c['transfers']['d2h']['count']}. Collector overhead: {100 * c['overhead']:+.1f} % "
              f"(median of {c['iterations']} profiled against as many unprofiled iterations)."]

    # 5. Trainability.
    an = r.swapscope("trainability-analyze", "analyze", "--model", "resnet152", "--batch", "1",
                     "--budget", "8GiB", "--policy", "swap-all")
    k = an["k_max"]["swap_all"]
    verified = None
    while k > 0:  # the analyzer's k_max, lowered while the kernels' workspaces do not fit
        j = r.swapscope(f"trainability-swapscope-k{k}", "train", "--model", "resnet152", "--data",
                        "synthetic", "--batch", str(k), "--iters", "2", "--budget", "8GiB",
                        "--device", "cuda", "--conv-algo", "memory", "--policy", "swap-all",
                        check=False)
        if j:
            verified = j
            break
        k -= max(1, k // 64)
    ptk = r.peer("trainability-pytorch", "largest-k", "--model", "resnet152", "--budget-gib", "8")
    lines += ["", "## 5. Trainability: resnet152, 224x224, 8 GiB", "",
              "| | largest k | how |", "|---|---|---|",
              f"| Swapscope swap-all | {k if verified else 'none'} | analyzer k_max {an['k_max']['swap_all']}, "
              "trained 2 iterations at the value shown |",
              f"| PyTorch | {ptk['largest_k']} | bisection under set_per_process_memory_fraction"
              f"({ptk.get('memory_fraction', 0):.4f}) |"]

    # 6. Memory fidelity.
    lines += ["", "## 6. Memory fidelity: predicted against measured pool peak", "",
              "| run | analyzer (no workspace) | with the kernels' workspaces | measured | error |",
              "|---|---|---|---|---|"]
    for name, j in (("resnet50 keep-all k=64", sw), ("resnet152 swap-all k=" + str(k), verified)):
        if not j:
            continue
        pred, meas = j["pool"]["predicted_peak"], j["pool"]["high_water"]
        lines.append(f"| {name} | - | {pred} | {meas} | {(meas - pred) / pred:+.2e} |")
    rp = run["peak_bytes"]
    lines.append(f"| resnet50 swap-all k=128 (plan) | {rp['predicted']} | {rp['with_workspace']} | "
                 f"{rp['measured']} | {(rp['measured'] - rp['with_workspace']) / rp['with_workspace']:+.2e} |")
    with open(os.path.join(args.out, "gpu-validation.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(os.path.join(args.out, "gpu-validation.md"))


if __name__ == "__main__":
    main()
