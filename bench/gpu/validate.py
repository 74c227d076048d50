#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Swapscope's GPU validation: one run on a machine with an NVIDIA GPU writes one report.

  python3 bench/gpu/validate.py --swapscope BIN [--out DIR] [--quick] [--sections A,B,...]

BIN is a headless `swapscope` built with the CUDA backend, normally from the folder that
scripts/gpu-bundle.sh makes (BIN's folder then also holds `check`, the GPU test programs and the
non-CUDA libraries). The machine needs python3 with PyTorch and torchvision, whose CUDA 13 wheels
provide cuDNN, cuBLAS, the CUDA runtime and CUPTI; the script puts their folders on
LD_LIBRARY_PATH. No Qt, network or cuDNN headers are needed.

The report is DIR/gpu-validation.md; every command, its exit status, time and stderr go to
DIR/commands.log, every raw JSON output beside them. Each section is written as soon as it
finishes (DIR/sections/), and a failing command fails only its section, which records it; the
report is rebuilt from every section written so far, so `--sections` reruns some sections and
keeps the others. Every command is limited to 8 minutes. The sections:

  check         the bundle's check: driver, libraries, versioned symbols
  gpu-tests     the GPU tests of runtime_tests and collectors_tests, SWAPSCOPE_REQUIRE_GPU=1
  numerics      one SGD step with lr 1, momentum 0, weight decay 0 on the CPU and the CUDA
                backend from the same weights and minibatch: the loss, each tensor's update
                w1 - w0 and the batch-norm running statistics
  determinism   bit-identical weights across keep-all, swap-all and vdnn-conv (--deterministic)
  throughput    resnet50, k = 64, fp32: median iteration after the same warm-up, Swapscope
                keep-all against PyTorch, both copying the batch through pinned staging
                memory to the GPU in each step; no ratio unless both warm-ups match
  pcie          pinned copies (PyTorch) against the swap executor's transfers (CUPTI), the
                collector's overhead with launch-only and with all API records, step coverage
  trainability  the largest k of resnet152 at 224x224 under 8 GiB, Swapscope against PyTorch;
                k is lowered only on the engine's refusals (the pool, host memory)
  memory        the predicted pool peak against the measured one, from the runs above

Every figure in it is measured by this run; nothing is filled in by hand.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
PEER = os.path.join(HERE, "..", "peers", "torch_train.py")
CHECK_SCRIPT = os.path.join(REPO, "scripts", "gpu-bundle-check.sh")
UPDATE_TOLERANCE = 1e-4  # per tensor: max |du_cuda - du_cpu| / max |du_cpu|
LOSS_TOLERANCE = 1e-5
STATS_TOLERANCE = 1e-5
COMMAND_LIMIT_S = 480  # every command under 8 minutes, so that a section can be rerun alone
WARMUP = 5
SECTIONS = ["check", "gpu-tests", "numerics", "determinism", "throughput", "pcie",
            "trainability", "memory"]
# The engine's refusals, before anything runs (exit 2), of a minibatch too large for the budget
# (PlanDoesNotFit: the peak, or the buffers' packing) or for the host memory the swapped FMs'
# copies need.
DOES_NOT_FIT = {
    "the pool": re.compile(r"the plan needs .* bytes short|do not pack into the pool"),
    "host memory": re.compile(r"the run needs .* of host memory .* bytes short"),
}


class CommandFailed(Exception):
    def __init__(self, name, cmd, code, stderr, stdout=""):
        self.name, self.cmd, self.code, self.stderr, self.stdout = name, cmd, code, stderr, stdout
        tail = "\n".join(stderr.strip().splitlines()[-3:])
        super().__init__(f"{name}: exit {code}: {tail}")

    def does_not_fit(self):
        """What the engine refused the minibatch for ("the pool", "host memory"), or None."""
        if self.code != 2:
            return None
        return next((what for what, r in DOES_NOT_FIT.items() if r.search(self.stderr)), None)


def nvidia_library_dirs():
    """PyTorch's lib folder and every nvidia/*/lib folder of the wheels it ships with."""
    dirs = []
    try:
        import torch
        dirs.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
    except ImportError:
        pass
    try:
        import nvidia
        for root in nvidia.__path__:
            dirs += sorted(d for d in glob.glob(os.path.join(root, "**", "lib"), recursive=True)
                           if glob.glob(os.path.join(d, "*.so*")))
    except ImportError:
        pass
    return [d for d in dirs if os.path.isdir(d)]


class Runner:
    def __init__(self, binary, out, peer=PEER):
        self.binary = os.path.abspath(binary)
        self.peer_script = os.path.abspath(peer)
        self.bundle = os.path.dirname(self.binary)
        self.out = out
        env = dict(os.environ)
        bundle_lib = os.path.join(self.bundle, "lib")
        dirs = ([bundle_lib] if os.path.isdir(bundle_lib) else []) + nvidia_library_dirs()
        env["LD_LIBRARY_PATH"] = ":".join(dirs + [env.get("LD_LIBRARY_PATH", "")])
        env["SWAPSCOPE_REQUIRE_GPU"] = "1"  # a GPU test that cannot run fails here
        self.env = env
        self.log = open(os.path.join(out, "commands.log"), "a")

    def swapscope(self, name, *args):
        """Runs swapscope with --json; saves and returns the parsed output."""
        p = self.run(name, [self.binary, *args, "--json"])
        with open(os.path.join(self.out, name + ".json"), "w") as f:
            f.write(p.stdout)
        return json.loads(p.stdout)

    def peer(self, name, *args):
        p = self.run(name, [sys.executable, self.peer_script, *args])
        with open(os.path.join(self.out, name + ".json"), "w") as f:
            f.write(p.stdout)
        return json.loads(p.stdout)

    def run(self, name, cmd):
        """Runs a command of at most COMMAND_LIMIT_S; CommandFailed unless it exits 0."""
        t0 = time.time()
        try:
            p = subprocess.run(cmd, env=self.env, capture_output=True, text=True,
                               timeout=COMMAND_LIMIT_S)
            code, stdout, stderr = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            code, stdout = "timeout", e.stdout or ""
            stderr = (e.stderr or "") if isinstance(e.stderr, str) else ""
            stderr += f"\nkilled after {COMMAND_LIMIT_S} s"
        except OSError as e:
            code, stdout, stderr = "not run", "", str(e)
        self.log.write(f"$ {' '.join(cmd)}\n  exit {code} in {time.time() - t0:.1f} s\n")
        if stderr:
            self.log.write("  stderr: " + stderr.strip().replace("\n", "\n          ") + "\n")
        self.log.flush()
        if code != 0:
            raise CommandFailed(name, cmd, code, stderr, stdout)
        return subprocess.CompletedProcess(cmd, 0, stdout, stderr)


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


def update_error(w0, ref1, got1):
    """max |(got1 - w0) - (ref1 - w0)| / max |ref1 - w0|: the error of an update (a gradient)."""
    scale = max(abs(r - w) for r, w in zip(ref1, w0))
    diff = max(abs(g - r) for g, r in zip(got1, ref1))
    return diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))


def value_error(ref, got):
    scale = max(abs(x) for x in ref) or 1.0
    return max(abs(x - y) for x, y in zip(ref, got)) / scale


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def gtest_failures(stdout):
    """{test: its first failure message} from a GoogleTest program's output."""
    out, message = {}, []
    for line in stdout.splitlines():
        if re.search(r": Failure$", line):
            message = []
            continue
        m = re.match(r"\[  FAILED  \] (\S+) \(", line)
        if m:
            text = next((x.strip() for x in message if x.strip() and x.strip() != "Failed"), "")
            out[m.group(1)] = text[:200] or "(no message)"
            message = []
        elif not line.startswith("["):
            message.append(line)
    return out


def failure_lines(e):
    tail = "\n".join("    " + line for line in e.stderr.strip().splitlines()[-6:])
    return [f"**Failed**: `{e.name}` exited {e.code}:", "", f"    $ {' '.join(e.cmd)}", tail, ""]


class Validation:
    def __init__(self, args):
        self.args = args
        self.out = args.out
        self.r = Runner(args.swapscope, args.out, args.peer)
        self.iters = 5 if args.quick else 30
        try:
            import torch
            self.torch = torch if torch.cuda.is_available() else None
            self.torch_why = "" if self.torch else "PyTorch sees no CUDA device"
        except ImportError as e:
            self.torch, self.torch_why = None, f"PyTorch cannot be imported ({e})"

    def need_torch(self):
        if not self.torch:
            raise RuntimeError(self.torch_why)
        return self.torch

    def load(self, name):
        """A JSON output an earlier section (of this run or an earlier one) saved, or None."""
        path = os.path.join(self.out, name + ".json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    # --- sections -----------------------------------------------------------------------------
    def check(self):
        script = os.path.join(self.r.bundle, "check")
        cmd = [script] if os.path.exists(script) else ["bash", CHECK_SCRIPT, "--bundle", self.r.bundle]
        lines = ["## Check: driver and libraries", ""]
        try:
            p = self.r.run("check", cmd)
            return lines + ["```", p.stdout.strip(), "```"]
        except CommandFailed as e:
            missing = [ln for ln in e.stdout.splitlines() if ln.startswith("missing:")]
            with open(os.path.join(self.out, "check.txt"), "w") as f:
                f.write(e.stdout + e.stderr)
            raise CommandFailed(e.name, e.cmd, e.code,
                                "\n".join(missing) or e.stderr) from None

    def gpu_tests(self):
        lines = ["## GPU tests (SWAPSCOPE_REQUIRE_GPU=1)", "", "| program | result |", "|---|---|"]
        details, failed = [], None
        for prog in ("runtime_tests", "collectors_tests"):
            path = os.path.join(self.r.bundle, prog)
            if not os.path.exists(path):
                lines.append(f"| {prog} | **not in the bundle** (scripts/gpu-bundle.sh packs it) |")
                failed = failed or CommandFailed(f"gpu-tests-{prog}", [path], "not run",
                                                 f"{path} is not there")
                continue
            try:
                p = self.r.run(f"gpu-tests-{prog}", [path, "--gtest_filter=*Gpu.*"])
                passed = re.search(r"\[  PASSED  \] (\d+) test", p.stdout)
                skipped = re.search(r"\[  SKIPPED \] (\d+) test", p.stdout)
                lines.append(f"| {prog} | {passed.group(1) if passed else '?'} passed"
                             f"{', ' + skipped.group(1) + ' skipped' if skipped else ''} |")
            except CommandFailed as e:
                tests = gtest_failures(e.stdout)
                lines.append(f"| {prog} | **failed** (exit {e.code}): {len(tests)} test(s) |")
                details += [f"- `{prog}` {name}: {why}" for name, why in tests.items()]
                why = "\n".join(f"{name}: {why}" for name, why in tests.items())
                failed = failed or CommandFailed(e.name, e.cmd, e.code, why or e.stderr)
        if failed:
            raise PartialSection(lines + ([""] + details if details else []), failed)
        return lines

    def numerics(self):
        lines = ["## Numerics: CUDA against the CPU backend", "",
                 "One SGD step with lr 1, momentum 0 and weight decay 0 from the same initial "
                 "weights and synthetic minibatch, so that w1 - w0 is the gradient. A tensor's "
                 "error is max |du_cuda - du_cpu| / max |du_cpu|; tolerance "
                 f"{UPDATE_TOLERANCE:g}; the loss within {LOSS_TOLERANCE:g}, the batch-norm "
                 f"running statistics within {STATS_TOLERANCE:g} of their largest value. Plain "
                 "fp32 on the GPU (FMA convolutions, no TF32).", "",
                 "| network | k | loss rel. error | worst update | its error | worst running stats "
                 "| its error | pass |", "|---|---|---|---|---|---|---|---|"]
        for model, k in (("fmnist-cnn", 32), ("resnet20", 16)):
            def step(dev, lr):
                path = os.path.join(self.out, f"weights-{model}-{dev}-lr{lr}.bin")
                j = self.r.swapscope(f"numerics-{model}-{dev}-lr{lr}", "train", "--model", model,
                                     "--data", "synthetic", "--batch", str(k), "--iters", "1",
                                     "--budget", "1GiB", "--device", dev, "--math", "fp32",
                                     "--lr", str(lr), "--momentum", "0", "--weight-decay", "0",
                                     "--save-weights", path, "--force")
                return j, read_weights(path)
            _, w0 = step("cpu", 0)
            jc, wc = step("cpu", 1)
            jg, wg = step("cuda", 1)
            lerr = abs(jg["first_loss"] - jc["first_loss"]) / abs(jc["first_loss"])
            upd = {n: update_error(w0[n], wc[n], wg[n]) for n in wc if n.endswith(".weights")}
            stats = {n: value_error(wc[n], wg[n]) for n in wc if n.endswith(".running_stats")}
            wu = max(upd, key=upd.get)
            ws = max(stats, key=stats.get) if stats else None
            ok = (lerr <= LOSS_TOLERANCE and upd[wu] <= UPDATE_TOLERANCE and
                  (ws is None or stats[ws] <= STATS_TOLERANCE))
            lines.append(f"| {model} | {k} | {lerr:.2e} | {wu} | {upd[wu]:.2e} | "
                         f"{ws or '-'} | {stats[ws] if ws else 0:.2e} | "
                         f"{'yes' if ok else '**no**'} |")
        return lines

    def determinism(self):
        lines = ["## Bit-identical weights across swap sets (deterministic mode)", "",
                 "resnet20 at k = 64, 5 iterations, `--device cuda --deterministic`.", "",
                 "| policy | offloaded bytes | weights sha256 (first 16) |", "|---|---|---|"]
        digests = set()
        for policy in ("keep-all", "swap-all", "vdnn-conv"):
            path = os.path.join(self.out, f"weights-det-{policy}.bin")
            j = self.r.swapscope(f"determinism-{policy}", "train", "--model", "resnet20",
                                 "--data", "synthetic", "--batch", "64", "--iters", "5",
                                 "--budget", "2GiB", "--device", "cuda", "--deterministic",
                                 "--policy", policy, "--save-weights", path, "--force")
            digests.add(sha256(path))
            lines.append(f"| {policy} | {j['offload_bytes']} | `{sha256(path)}` |")
        lines += ["", "Identical: **" + ("yes" if len(digests) == 1 else "no") + "**."]
        return lines

    def throughput(self):
        n = self.iters
        sw = self.r.swapscope("throughput-swapscope", "train", "--model", "resnet50", "--data",
                              "synthetic", "--batch", "64", "--iters", str(WARMUP + n),
                              "--warmup", str(WARMUP), "--budget", "40GiB", "--device", "cuda",
                              "--math", "fp32", "--policy", "keep-all")
        pt = self.r.peer("throughput-pytorch", "throughput", "--model", "resnet50", "--batch", "64",
                         "--iters", str(n), "--warmup", str(WARMUP), "--math", "fp32")
        # The same warm-up and the same number of timed iterations on both sides, as each
        # side reports them, or no ratio.
        s_timed = sw["iterations"] - sw["warmup"]
        if (sw["warmup"], s_timed) != (pt["warmup"], pt["iterations"]):
            raise RuntimeError(f"not like for like: Swapscope {sw['warmup']} warm-up and "
                               f"{s_timed} timed iterations, PyTorch {pt['warmup']} and "
                               f"{pt['iterations']}")
        if sw["t_iter_median_s"] is None:
            raise RuntimeError("swapscope train reported no median iteration")
        s_med, p_med = sw["t_iter_median_s"], pt["t_iter_median_s"]
        return ["## Throughput: resnet50, k = 64, fp32, synthetic data", "",
                f"Both sides: {sw['warmup']} warm-up iterations left out, then the median of "
                f"{s_timed} iterations, each timed from the host with the device synchronised "
                "before and after. The input of every timed step: Swapscope's `train` copies the "
                "minibatch from the caller's memory into pinned staging memory and from there "
                "to the GPU; the peer: " + pt.get("input", "not stated") + ". Swapscope chose "
                "its algorithms when the executor was built (cuDNN's heuristics); PyTorch runs "
                "with `cudnn.benchmark = False` (heuristics) and builds its plans in the "
                "warm-up.", "",
                "| | warm-up | timed | median iteration | images/s (median) |",
                "|---|---|---|---|---|",
                f"| Swapscope keep-all | {sw['warmup']} | {s_timed} | {s_med * 1e3:.2f} ms | "
                f"{64 / s_med:.1f} |",
                f"| {pt.get('framework', 'PyTorch')} | {pt['warmup']} | {pt['iterations']} | "
                f"{p_med * 1e3:.2f} ms | {64 / p_med:.1f} |",
                "", f"Ratio Swapscope / PyTorch (images/s): **{p_med / s_med:.3f}**."]

    def pcie(self):
        torch = self.need_torch()
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
        db = os.path.join(self.out, "resnet50-profile.swapdb")
        plan = os.path.join(self.out, "resnet50-swap-all.plan.json")
        self.r.swapscope("pcie-profile", "profile", "--model", "resnet50", "--budget", "16GiB",
                         "--db", db, "--force", "--device", "cuda", "--conv-algo", "memory",
                         "--max-batch", "128", "--iters", "2")
        self.r.swapscope("pcie-plan", "plan", "--db", db, "--budget", "16GiB", "--batch", "128",
                         "--policy", "swap-all", "--out", plan, "--force")
        runs = {}
        for collector in ("cupti", "cupti-all-api"):
            runs[collector] = self.r.swapscope(
                f"pcie-run-{collector}", "run", "--plan", plan, "--device", "cuda",
                "--conv-algo", "memory", "--collector", collector,
                "--iters", str(max(3, self.iters // 5)))
        c = runs["cupti"]["collector"]
        ex = {}
        for d in ("h2d", "d2h"):
            t = c["transfers"][d]
            ex[d] = t["bytes"] / t["busy_ns"] if t["busy_ns"] else float("nan")
        lines = ["## PCIe: pinned copies against the swap executor", "",
                 "| | h2d GB/s | d2h GB/s |", "|---|---|---|",
                 f"| pinned memcpy of 256 MiB, alone (median of 10) | {h2d:.1f} | {d2h:.1f} |",
                 f"| both directions at once (sum {duplex:.1f} GB/s) | - | - |",
                 f"| swap executor, resnet50 swap-all k = 128 | {ex['h2d']:.1f} | {ex['d2h']:.1f} |",
                 "", f"Executor transfers overlapped with compute: h2d "
                 f"{c['transfers']['h2d']['overlapped']} of {c['transfers']['h2d']['count']}, d2h "
                 f"{c['transfers']['d2h']['overlapped']} of {c['transfers']['d2h']['count']}.", "",
                 "| CUPTI API records | collector overhead | untagged kernels | steps missing |",
                 "|---|---|---|---|"]
        for collector, label in (("cupti", "launch and copy calls only"),
                                 ("cupti-all-api", "every runtime and driver call")):
            cc = runs[collector]["collector"]
            cov = cc.get("step_coverage", {})
            lines.append(f"| {label} | {100 * cc['overhead']:+.1f} % (median of {cc['iterations']})"
                         f" | {cc['untagged_kernels']} | {len(cov.get('missing', []))} |")
        for problem in c.get("step_coverage", {}).get("problems", []):
            lines.append(f"- missing: {problem}")
        allowed = c.get("step_coverage", {}).get("allowed", [])
        if allowed:
            lines += ["", "Steps without a kernel, allowed: " + "; ".join(allowed) + "."]
        return lines

    def trainability(self):
        an = self.r.swapscope("trainability-analyze", "analyze", "--model", "resnet152",
                              "--batch", "1", "--budget", "8GiB", "--policy", "swap-all")
        k = an["k_max"]["swap_all"]
        verified, refusals = None, []
        while k > 0:  # lowered only while the engine says the plan does not fit
            try:
                verified = self.r.swapscope(
                    f"trainability-swapscope-k{k}", "train", "--model", "resnet152", "--data",
                    "synthetic", "--batch", str(k), "--iters", "2", "--budget", "8GiB",
                    "--device", "cuda", "--conv-algo", "memory", "--policy", "swap-all")
                break
            except CommandFailed as e:
                what = e.does_not_fit()
                if not what:
                    raise
                refusals.append(f"{k} ({what})")
                k -= max(1, k // 64)
        with open(os.path.join(self.out, "trainability.json"), "w") as f:
            json.dump({"k": k if verified else None, "refused": refusals}, f)
        lines = ["## Trainability: resnet152, 224x224, 8 GiB", "",
                 "| | largest k | how |", "|---|---|---|",
                 f"| Swapscope swap-all | {k if verified else 'none'} | analyzer k_max "
                 f"{an['k_max']['swap_all']}; refused as not fitting at "
                 f"{', '.join(refusals) or 'none'}; trained 2 iterations at the value "
                 "shown |"]
        try:
            ptk = self.r.peer("trainability-pytorch", "largest-k", "--model", "resnet152",
                              "--budget-gib", "8")
            lines.append(f"| PyTorch | {ptk['largest_k']} | bisection under "
                         f"set_per_process_memory_fraction({ptk.get('memory_fraction', 0):.4f}) |")
        except Exception as e:  # the Swapscope half is kept
            lines += [f"| PyTorch | - | failed: {e} |"]
            raise PartialSection(lines, e) from None
        return lines

    def memory(self):
        lines = ["## Memory fidelity: predicted against measured pool peak", "",
                 "The predictions include the kernels' workspaces and the CUDA backend's padding "
                 "(16 bytes per buffer, 256 per workspace).", "",
                 "| run | predicted | measured | error |", "|---|---|---|---|"]
        rows = 0
        sw = self.load("throughput-swapscope")
        if sw:
            rows += 1
            lines.append(self.peak_row("resnet50 keep-all k=64", sw["pool"]["predicted_peak"],
                                       sw["pool"]["high_water"]))
        tr = self.load("trainability")
        if tr and tr.get("k"):
            j = self.load(f"trainability-swapscope-k{tr['k']}")
            if j:
                rows += 1
                lines.append(self.peak_row(f"resnet152 swap-all k={tr['k']}",
                                           j["pool"]["predicted_peak"], j["pool"]["high_water"]))
        run = self.load("pcie-run-cupti")
        if run:
            rows += 1
            rp = run["peak_bytes"]
            lines.append(self.peak_row("resnet50 swap-all k=128 (plan)", rp["with_workspace"],
                                       rp["measured"]))
        if rows == 0:
            raise RuntimeError("no run of the throughput, trainability or pcie sections to read")
        return lines

    @staticmethod
    def peak_row(name, pred, meas):
        return f"| {name} | {pred} | {meas} | {(meas - pred) / pred:+.2e} |"


class PartialSection(Exception):
    """A section that failed after measuring something worth keeping."""

    def __init__(self, lines, cause):
        super().__init__(str(cause))
        self.lines, self.cause = lines, cause


def header(v):
    torch = v.torch
    if torch:
        gpu = (f"GPU: **{torch.cuda.get_device_name(0)}** "
               f"({torch.cuda.get_device_properties(0).total_memory / 2**30:.1f} GiB), PyTorch "
               f"{torch.__version__}, CUDA {torch.version.cuda}, cuDNN "
               f"{torch.backends.cudnn.version()}.")
    else:
        gpu = f"GPU: unknown ({v.torch_why})."
    return ["# GPU validation", "",
            f"{gpu} Written by `bench/gpu/validate.py` on "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
            f"{' (--quick)' if v.args.quick else ''}. Math mode: plain fp32 on both sides "
            "(Swapscope `--math fp32`: FMA convolutions and no TF32 in cuBLAS; PyTorch "
            "`allow_tf32 = False` for cuDNN and matmul). Sections run separately; each names "
            "when it was written.", ""]


def write_report(v):
    parts = header(v)
    for name in SECTIONS:
        path = os.path.join(v.out, "sections", name + ".md")
        if os.path.exists(path):
            with open(path) as f:
                parts += [f.read().rstrip("\n"), ""]
    with open(os.path.join(v.out, "gpu-validation.md"), "w") as f:
        f.write("\n".join(parts).rstrip("\n") + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--swapscope", required=True, help="the swapscope binary (CUDA backend)")
    ap.add_argument("--out", default="gpu-validation", help="report folder (default ./gpu-validation)")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    ap.add_argument("--peer", default=PEER,
                    help="the PyTorch peer (default bench/peers/torch_train.py; tests use a fake)")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help="comma-separated sections to run (default: all): " + ", ".join(SECTIONS))
    args = ap.parse_args()
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        ap.error(f"--sections: unknown section(s) {', '.join(unknown)}; choose from "
                 + ", ".join(SECTIONS))
    os.makedirs(os.path.join(args.out, "sections"), exist_ok=True)
    v = Validation(args)
    failed = []
    for name in SECTIONS:
        if name not in chosen:
            continue
        t0 = time.time()
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        try:
            lines = getattr(v, name.replace("-", "_"))()
        except PartialSection as e:
            lines = e.lines + [""] + (failure_lines(e.cause) if isinstance(e.cause, CommandFailed)
                                      else [f"**Failed**: {e.cause}"])
            failed.append(name)
        except CommandFailed as e:
            lines = [f"## {name}", ""] + failure_lines(e)
            failed.append(name)
        except Exception as e:  # a section's own error is recorded, and the next one runs
            lines = [f"## {name}", "", f"**Failed**: {type(e).__name__}: {e}"]
            failed.append(name)
        lines += ["", f"_Section `{name}`: written {stamp}, {time.time() - t0:.0f} s._"]
        with open(os.path.join(args.out, "sections", name + ".md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        write_report(v)
        print(f"validate.py: {name}: {'failed' if name in failed else 'done'}", flush=True)
    print(os.path.join(args.out, "gpu-validation.md"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
