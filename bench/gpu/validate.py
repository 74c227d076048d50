#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Swapscope's GPU validation: one run on a machine with an NVIDIA GPU writes one report.

  python3 bench/gpu/validate.py --swapscope BIN --first-run [--out DIR]
  python3 bench/gpu/validate.py --swapscope BIN [--out DIR] [--quick] [--sections A,B,...]

BIN is a headless `swapscope` built with the CUDA backend, normally from the folder that
scripts/gpu-bundle.sh makes (BIN's folder then also holds `check`, the GPU test programs and the
non-CUDA libraries). The machine needs python3 with PyTorch and torchvision, whose CUDA 13 wheels
provide cuDNN, cuBLAS, the CUDA runtime and CUPTI; the script puts their folders on
LD_LIBRARY_PATH. No Qt, network or cuDNN headers are needed.

--first-run runs check, gpu-tests, numerics, determinism, throughput, pcie and memory, each
within its time budget (BUDGET_S, 425 s in all, under 8 minutes on an H100 with the start-up):
a command still running when its section's budget is spent is stopped and fails its section,
and the next section runs. Trainability runs only when asked (--sections trainability).

The report is DIR/gpu-validation.md; every command, its exit status, time and stderr go to
DIR/commands.log, every raw JSON output beside them. Each section is written as soon as it
finishes (DIR/sections/), and a failing command fails only its section, which records it; the
report is rebuilt from every section written so far, so `--sections` reruns some sections and
keeps the others. The sections:

  check         the bundle's check (driver, libraries, versioned symbols), the GPU's compute
                mode and memory (nvidia-smi), PyTorch's versions (the peer, a child process)
  gpu-tests     the GPU tests of runtime_tests and collectors_tests, SWAPSCOPE_REQUIRE_GPU=1
  numerics      one SGD step with lr 1, momentum 0, weight decay 0 on the CPU and the CUDA
                backend (--conv-algo memory --deterministic) from the same weights and
                minibatch: the loss, each tensor's update w1 - w0 and the batch-norm running
                statistics, for fmnist-cnn, resnet20, and resnet20 in 2 sub-batches; the
                default algorithms' errors reported apart, with the algorithms named
  determinism   bit-identical weights across keep-all, swap-all, vdnn-conv and recompute-light
                (--deterministic)
  throughput    resnet50, k = 64, fp32: median iteration after the same warm-up, Swapscope
                keep-all (the SGD update in one launch) against PyTorch, both copying the
                batch through page-locked staging memory to the GPU in each step; no ratio unless
                both warm-ups match
  pcie          page-locked copies (PyTorch, in a child) against the swap executor's transfers
                (CUPTI), the collector's overhead with launch-only and with all API records,
                step coverage
  trainability  the largest k of resnet152 at 224x224 under 8 GiB, Swapscope against PyTorch:
                bisection on k from analyze's k_max, within half the host memory for the
                swapped FMs' page-locked copies (analyze's host bytes and 20 %)
  memory        the predicted pool peak against the measured one, from the runs above

validate.py itself never loads CUDA: every GPU figure comes from a child process, one at a
time, so that a GPU in exclusive-process compute mode serves each of them.

The environment overrides the limits: SWAPSCOPE_VALIDATE_COMMAND_LIMIT_S (every command,
default 480), SWAPSCOPE_VALIDATE_BUDGET_<SECTION>_S (a section's budget, e.g.
SWAPSCOPE_VALIDATE_BUDGET_GPU_TESTS_S=90) and SWAPSCOPE_VALIDATE_FIRST_RUN_S (what the
budgets of --first-run may add up to, default 480).

A program that prints "fake-gpu: would take N s" on stderr (the stand-ins of the dry runs in
bench/gpu/test) is charged N seconds against its section's budget instead of the time it ran,
and the report then gives the time the plan would take.

Every figure in it is measured by this run; nothing is filled in by hand.
"""
import argparse
import glob
import hashlib
import importlib.util
import json
import math
import os
import re
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
WARMUP = 5
SECTIONS = ["check", "gpu-tests", "numerics", "determinism", "throughput", "pcie",
            "trainability", "memory"]
FIRST_RUN = ["check", "gpu-tests", "numerics", "determinism", "throughput", "pcie", "memory"]
# Each section's time budget in seconds under --first-run, start-ups included: 425 s in all,
# so that the preset ends within 8 minutes on an H100. Budgets, not measurements.
BUDGET_S = {"check": 20, "gpu-tests": 75, "numerics": 70, "determinism": 45, "throughput": 60,
            "pcie": 150, "memory": 5}
COMMAND_LIMIT_S = 480  # every command under 8 minutes, so that a section can be rerun alone
FIRST_RUN_S = 480
FIRST_RUN_ITERS = 20  # timed iterations of the throughput comparison under --first-run
HOST_MARGIN = 1.2  # trainability: analyze's host bytes and 20 %
# The engine's refusals, before anything runs (exit 2), of a minibatch too large for the budget
# (PlanDoesNotFit: the peak, or the buffers' packing) or for the host memory the swapped FMs'
# copies need.
DOES_NOT_FIT = {
    "the pool": re.compile(r"the plan needs .* bytes short|do not pack into the pool"),
    "host memory": re.compile(r"the run needs .* of host memory .* bytes short"),
}
WOULD_TAKE = re.compile(r"^fake-gpu: would take ([0-9.]+) s", re.MULTILINE)


class BadSetting(Exception):
    """A limit from the environment that is not a positive number of seconds."""


def env_seconds(name, default):
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise BadSetting(f"{name}={text!r}: not a positive number of seconds")
    return value


def budget_variable(section):
    return "SWAPSCOPE_VALIDATE_BUDGET_" + section.upper().replace("-", "_") + "_S"


def limits():
    """The command limit, every section's budget and the first run's total, from the
    environment where it says so."""
    return (env_seconds("SWAPSCOPE_VALIDATE_COMMAND_LIMIT_S", COMMAND_LIMIT_S),
            {name: env_seconds(budget_variable(name), b) for name, b in BUDGET_S.items()},
            env_seconds("SWAPSCOPE_VALIDATE_FIRST_RUN_S", FIRST_RUN_S))


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


class Skipped(Exception):
    """A section that cannot run here, for a reason that is no failure."""


def nvidia_library_dirs():
    """PyTorch's lib folder and every nvidia/*/lib folder of the wheels it ships with, found
    without importing either (an import would load CUDA's libraries into this process)."""
    dirs = []
    try:
        spec = importlib.util.find_spec("torch")
        if spec and spec.origin:
            dirs.append(os.path.join(os.path.dirname(spec.origin), "lib"))
    except (ImportError, ValueError):
        pass
    try:
        spec = importlib.util.find_spec("nvidia")
        for root in (spec.submodule_search_locations or []) if spec else []:
            dirs += sorted(d for d in glob.glob(os.path.join(root, "**", "lib"), recursive=True)
                           if glob.glob(os.path.join(d, "*.so*")))
    except (ImportError, ValueError):
        pass
    return [d for d in dirs if os.path.isdir(d)]


class Clock:
    """A section's time: what its commands took (or, for a stand-in that says so, would take)
    against its budget; None: no budget."""

    def __init__(self, budget=None):
        self.budget, self.spent, self.planned = budget, 0.0, 0.0
        self.t0 = time.time()

    def left(self):
        return None if self.budget is None else self.budget - self.spent


class Runner:
    def __init__(self, binary, out, peer, command_limit):
        self.binary = os.path.abspath(binary)
        self.peer_script = os.path.abspath(peer)
        self.bundle = os.path.dirname(self.binary)
        self.out = out
        self.command_limit = command_limit
        self.clock = Clock()
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
        """Runs a command within the command limit and what is left of its section's budget;
        CommandFailed unless it exits 0 in time."""
        limit, why = self.command_limit, f"the command limit of {self.command_limit:g} s"
        left = self.clock.left()
        if left is not None and left < limit:
            limit, why = left, f"its section's budget of {self.clock.budget:g} s"
        if limit <= 0:
            self.log.write(f"$ {' '.join(cmd)}\n  not run: {why} is spent\n")
            self.log.flush()
            raise CommandFailed(name, cmd, "not run", f"not run: {why} is spent")
        t0 = time.time()
        try:
            p = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=limit)
            code, stdout, stderr = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            code, stdout = "timeout", e.stdout or ""
            stdout = stdout if isinstance(stdout, str) else stdout.decode(errors="replace")
            stderr = (e.stderr or "") if isinstance(e.stderr, str) else ""
            stderr += f"\nkilled after {limit:.0f} s: {why}"
        except OSError as e:
            code, stdout, stderr = "not run", "", str(e)
        took = time.time() - t0
        would = WOULD_TAKE.search(stderr or "")
        charged = float(would.group(1)) if would else took
        self.clock.spent += charged
        if would:
            self.clock.planned += charged
            if code == 0 and charged > limit:  # a real run would have been stopped here
                code = "timeout"
                stderr += f"\nwould be killed after {limit:.0f} s: {why}"
        self.log.write(f"$ {' '.join(cmd)}\n  exit {code} in {took:.1f} s"
                       f"{f' (would take {charged:.1f} s)' if would else ''}\n")
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


def host_memory_bytes():
    """The machine's host memory: /proc/meminfo's MemTotal, or 0 when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def gib(b):
    return f"{b / 2**30:.1f} GiB"


def layer_of(tensor):
    """The layer of a weight file's tensor: "layer1.0.conv1" of "layer1.0.conv1.weights"."""
    return tensor.rsplit(".", 1)[0]


class Validation:
    def __init__(self, args, command_limit):
        self.args = args
        self.out = args.out
        self.r = Runner(args.swapscope, args.out, args.peer, command_limit)
        self.iters = 5 if args.quick else FIRST_RUN_ITERS if args.first_run else 30
        self.host_memory = args.host_memory if args.host_memory else host_memory_bytes()

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
        lines = ["## Check: driver, libraries, compute mode", ""]
        failed = None
        try:
            p = self.r.run("check", cmd)
            lines += ["```", p.stdout.strip(), "```"]
        except CommandFailed as e:
            missing = [ln for ln in e.stdout.splitlines() if ln.startswith("missing:")]
            with open(os.path.join(self.out, "check.txt"), "w") as f:
                f.write(e.stdout + e.stderr)
            failed = CommandFailed(e.name, e.cmd, e.code, "\n".join(missing) or e.stderr)
            lines += ["```", "\n".join(missing) or e.stderr.strip(), "```"]
        gpu = {}
        lines.append("")
        try:
            p = self.r.run("check-nvidia-smi", [
                "nvidia-smi", "--query-gpu=name,compute_mode,memory.total,driver_version",
                "--format=csv,noheader"])
            fields = [x.strip() for x in p.stdout.strip().splitlines()[0].split(",")]
            gpu.update(zip(("name", "compute_mode", "memory", "driver"), fields))
            mode = gpu.get("compute_mode", "unknown")
            lines.append(f"GPU 0: {gpu.get('name')}, {gpu.get('memory')}, driver "
                         f"{gpu.get('driver')}; compute mode **{mode}**.")
            if mode == "Exclusive_Process":
                lines.append("One process at a time may hold a CUDA context: validate.py holds "
                             "none and runs its GPU programs one after the other.")
            elif mode == "Prohibited":
                failed = failed or RuntimeError("the GPU's compute mode is Prohibited: no "
                                                "process may create a CUDA context on it")
        except (CommandFailed, IndexError) as e:
            lines.append(f"Compute mode: unknown (nvidia-smi: {e}).")
        try:
            info = self.r.peer("check-pytorch", "info")
            gpu["pytorch"] = info
            lines.append(f"PyTorch {info.get('torch')}, CUDA {info.get('cuda')}, cuDNN "
                         f"{info.get('cudnn')}, on {info.get('gpu')} (the peer, a child "
                         "process).")
        except (CommandFailed, ValueError) as e:
            lines.append(f"PyTorch: not usable ({e}).")
            failed = failed or e
        with open(os.path.join(self.out, "gpu.json"), "w") as f:
            json.dump(gpu, f)
        if failed:
            raise PartialSection(lines, failed)
        return lines

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

    NUMERICS = (("fmnist-cnn", 32, 1), ("resnet20", 16, 1), ("resnet20", 16, 2))

    def numerics_step(self, model, k, subs, dev, lr, algo):
        """One step; its JSON and the weights after it. `algo`: "checked" (--conv-algo memory
        --deterministic) or "default" (the default algorithms); unused on the CPU."""
        tag = f"{model}-k{k}-s{subs}-{dev}-lr{lr}" + (f"-{algo}" if dev == "cuda" else "")
        path = os.path.join(self.out, f"weights-{tag}.bin")
        extra = ["--conv-algo", "memory", "--deterministic"] if algo == "checked" else []
        j = self.r.swapscope(f"numerics-{tag}", "train", "--model", model, "--data", "synthetic",
                             "--batch", str(k), "--sub-batches", str(subs), "--iters", "1",
                             "--budget", "1GiB", "--device", dev, "--math", "fp32",
                             *(extra if dev == "cuda" else []), "--lr", str(lr), "--momentum", "0",
                             "--weight-decay", "0", "--save-weights", path, "--force")
        return j, read_weights(path)

    def numerics(self):
        lines = ["## Numerics: CUDA against the CPU backend", "",
                 "One SGD step with lr 1, momentum 0 and weight decay 0 from the same initial "
                 "weights and synthetic minibatch, so that w1 - w0 is the gradient. A tensor's "
                 "error is max |du_cuda - du_cpu| / max |du_cpu|; tolerance "
                 f"{UPDATE_TOLERANCE:g}; the loss within {LOSS_TOLERANCE:g}, the batch-norm "
                 f"running statistics within {STATS_TOLERANCE:g} of their largest value. Plain "
                 "fp32 on the GPU (FMA convolutions, no TF32), `--conv-algo memory "
                 "--deterministic`: the algorithms are the same in every run. S: sub-batches "
                 "(batch norm normalises each pass with its own statistics).", "",
                 "| network | k | S | loss rel. error | worst update | its error "
                 "| worst running stats | its error | pass |",
                 "|---|---|---|---|---|---|---|---|---|"]
        defaults, failed = [], []
        for model, k, subs in self.NUMERICS:
            _, w0 = self.numerics_step(model, k, subs, "cpu", 0, None)
            jc, wc = self.numerics_step(model, k, subs, "cpu", 1, None)
            jg, wg = self.numerics_step(model, k, subs, "cuda", 1, "checked")
            lerr = abs(jg["first_loss"] - jc["first_loss"]) / abs(jc["first_loss"])
            upd = {n: update_error(w0[n], wc[n], wg[n]) for n in wc if n.endswith(".weights")}
            stats = {n: value_error(wc[n], wg[n]) for n in wc if n.endswith(".running_stats")}
            wu = max(upd, key=upd.get)
            ws = max(stats, key=stats.get) if stats else None
            ok = (lerr <= LOSS_TOLERANCE and upd[wu] <= UPDATE_TOLERANCE and
                  (ws is None or stats[ws] <= STATS_TOLERANCE))
            if not ok:
                failed.append(f"{model} k={k} S={subs}")
            lines.append(f"| {model} | {k} | {subs} | {lerr:.2e} | {wu} | {upd[wu]:.2e} | "
                         f"{ws or '-'} | {stats[ws] if ws else 0:.2e} | "
                         f"{'yes' if ok else '**no**'} |")
            # The default algorithms (cuDNN's heuristics, not restricted to deterministic ones):
            # reported apart, never failing the section.
            try:
                jd, wd = self.numerics_step(model, k, subs, "cuda", 1, "default")
                dupd = {n: update_error(w0[n], wc[n], wd[n]) for n in wc if n.endswith(".weights")}
                dw = max(dupd, key=dupd.get)
                algos = {c["layer"]: c["algorithms"] for c in jd.get("kernel_choices", [])}
                beyond = dupd[dw] > UPDATE_TOLERANCE
                defaults.append(f"| {model} | {k} | {subs} | {dw} | {dupd[dw]:.2e} | "
                                f"{'**beyond**' if beyond else 'within'} | "
                                f"{algos.get(layer_of(dw)) or 'not reported'} |")
            except (CommandFailed, ValueError, KeyError) as e:
                defaults.append(f"| {model} | {k} | {subs} | - | - | failed: "
                                f"{str(e).splitlines()[0]} | - |")
        lines += ["", "The default algorithms (`--conv-algo performance`, not restricted to "
                  "deterministic ones), reported apart: they do not fail the section. The "
                  "algorithms are those of the worst tensor's layer, as `train` reports them.",
                  "", "| network | k | S | worst update | its error | tolerance | its layer's "
                  "algorithms |", "|---|---|---|---|---|---|---|"] + defaults
        if failed:
            raise PartialSection(lines, RuntimeError("beyond the tolerance: " + ", ".join(failed)))
        return lines

    def determinism(self):
        lines = ["## Bit-identical weights across swap sets (deterministic mode)", "",
                 "resnet20 at k = 64, 5 iterations, `--device cuda --deterministic`.", "",
                 "| policy | offloaded bytes | weights sha256 (first 16) |", "|---|---|---|"]
        digests = set()
        for policy in ("keep-all", "swap-all", "vdnn-conv", "recompute-light"):
            path = os.path.join(self.out, f"weights-det-{policy}.bin")
            j = self.r.swapscope(f"determinism-{policy}", "train", "--model", "resnet20",
                                 "--data", "synthetic", "--batch", "64", "--iters", "5",
                                 "--budget", "2GiB", "--device", "cuda", "--deterministic",
                                 "--policy", policy, "--save-weights", path, "--force")
            digests.add(sha256(path))
            lines.append(f"| {policy} | {j['offload_bytes']} | `{sha256(path)}` |")
        lines += ["", "Identical: **" + ("yes" if len(digests) == 1 else "no") + "**."]
        if len(digests) != 1:
            raise PartialSection(lines, RuntimeError("the weights differ between policies"))
        return lines

    def throughput(self):
        n = self.iters
        sw = self.r.swapscope("throughput-swapscope", "train", "--model", "resnet50", "--data",
                              "synthetic", "--batch", "64", "--iters", str(WARMUP + n),
                              "--warmup", str(WARMUP), "--budget", "40GiB", "--device", "cuda",
                              "--math", "fp32", "--policy", "keep-all", "--update",
                              "multi-tensor")
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
        tasks = sw.get("last_iteration", {}).get("tasks")
        return ["## Throughput: resnet50, k = 64, fp32, synthetic data", "",
                f"Both sides: {sw['warmup']} warm-up iterations left out, then the median of "
                f"{s_timed} iterations, each timed from the host with the device synchronised "
                "before and after. The input of every timed step: Swapscope's `train` copies the "
                "minibatch from the caller's memory into page-locked staging memory and from there "
                "to the GPU; the peer: " + pt.get("input", "not stated") + ". Swapscope chose "
                "its algorithms when the executor was built (cuDNN's heuristics); PyTorch runs "
                "with `cudnn.benchmark = False` (heuristics) and builds its plans in the "
                "warm-up.", "",
                f"Swapscope's SGD update: {sw.get('update', 'per-layer')} (multi-tensor: one "
                "task, one kernel launch for every parameter, as PyTorch's foreach path). Inside "
                f"its timed iteration: {tasks if tasks is not None else 'an unreported number of'}"
                " tasks, each bracketed by two CUDA events recorded as it is enqueued (the "
                "events order the streams; the timings are read from them after the iteration's "
                "end, outside the median).", "",
                "| | warm-up | timed | median iteration | images/s (median) |",
                "|---|---|---|---|---|",
                f"| Swapscope keep-all | {sw['warmup']} | {s_timed} | {s_med * 1e3:.2f} ms | "
                f"{64 / s_med:.1f} |",
                f"| {pt.get('framework', 'PyTorch')} | {pt['warmup']} | {pt['iterations']} | "
                f"{p_med * 1e3:.2f} ms | {64 / p_med:.1f} |",
                "", f"Ratio Swapscope / PyTorch (images/s): **{p_med / s_med:.3f}**."]

    def pcie(self):
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
        lines = ["## PCIe: page-locked copies against the swap executor", "",
                 "| | h2d GB/s | d2h GB/s |", "|---|---|---|"]
        copies = None
        try:  # PyTorch's copies, in a child process: this one never holds a CUDA context
            copies = self.r.peer("pcie-pytorch", "pcie", "--mib", "256", "--reps", "10")
            lines += [f"| page-locked memcpy of 256 MiB, alone (median of 10) | {copies['h2d_gbps']:.1f}"
                      f" | {copies['d2h_gbps']:.1f} |",
                      f"| both directions at once (sum {copies['duplex_gbps']:.1f} GB/s) | - | - |"]
        except (CommandFailed, ValueError, KeyError) as e:
            lines.append(f"| page-locked memcpy (PyTorch) | failed: {str(e).splitlines()[0]} | - |")
            copies = e
        lines += [f"| swap executor, resnet50 swap-all k = 128 | {ex['h2d']:.1f} | "
                  f"{ex['d2h']:.1f} |",
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
        if isinstance(copies, Exception):
            raise PartialSection(lines, copies)
        return lines

    def trainability(self):
        common = ["--model", "resnet152", "--budget", "8GiB", "--policy", "swap-all"]
        an = self.r.swapscope("trainability-analyze-k1", "analyze", *common, "--batch", "1")
        k_max = an["k_max"]["swap_all"]
        if k_max < 1:
            raise Skipped("the analyzer finds no k of resnet152 within 8 GiB under swap-all")
        h1 = an["host_memory"]["bytes"]
        hk = h1
        if k_max > 1:
            hk = self.r.swapscope(f"trainability-analyze-k{k_max}", "analyze", *common,
                                  "--batch", str(k_max))["host_memory"]["bytes"]
        # analyze's host bytes are linear in k: the FMs' host copies and the staged minibatch
        # grow with it, the weights' host copy does not.
        per_k = (hk - h1) / (k_max - 1) if k_max > 1 else 0.0
        fixed = h1 - per_k

        def page_locked(k):  # what a run at k may page-lock, with the margin
            return HOST_MARGIN * (fixed + per_k * k)
        half = self.host_memory // 2
        if not self.host_memory:
            raise Skipped("this machine's host memory is unknown (/proc/meminfo has no "
                          "MemTotal): nothing is page-locked without knowing half of it")
        if page_locked(1) > half:
            raise Skipped(f"even k = 1 would page-lock {gib(page_locked(1))} (analyze's {h1} bytes and "
                          f"{100 * (HOST_MARGIN - 1):.0f} %), more than half of this machine's "
                          f"{gib(self.host_memory)} of host memory")
        k_hi = k_max
        if per_k > 0:
            k_hi = min(k_max, int((half / HOST_MARGIN - fixed) // per_k))
        tried, refusals = {}, []

        def fits(k):
            """Trains 2 iterations at k: True, False on the engine's refusal; raises otherwise."""
            if k in tried:
                return tried[k]
            try:
                self.r.swapscope(
                    f"trainability-swapscope-k{k}", "train", "--model", "resnet152", "--data",
                    "synthetic", "--synthetic-size", str(k), "--batch", str(k), "--iters", "2",
                    "--budget", "8GiB", "--device", "cuda", "--conv-algo", "memory",
                    "--policy", "swap-all")
                tried[k] = True
            except CommandFailed as e:
                what = e.does_not_fit()
                if not what:
                    raise
                refusals.append(f"{k} ({what})")
                tried[k] = False
            return tried[k]

        # Bisection: the largest k <= k_hi that trains; fits(lo) holds (0 trivially), hi fails.
        lo, hi = 0, k_hi + 1
        if fits(k_hi):
            lo = k_hi
        else:
            hi = k_hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid
        k = lo
        with open(os.path.join(self.out, "trainability.json"), "w") as f:
            json.dump({"k": k or None, "refused": refusals, "k_max": k_max, "k_hi": k_hi,
                       "tried": sorted(tried)}, f)
        host_cap = ("" if k_hi == k_max else
                    f"; at most {k_hi} by host memory (half of {gib(self.host_memory)}, "
                    f"{gib(page_locked(k_hi))} page-locked with the margin)")
        lines = ["## Trainability: resnet152, 224x224, 8 GiB", "",
                 "| | largest k | how |", "|---|---|---|",
                 f"| Swapscope swap-all | {k or 'none'} | analyzer k_max {k_max}{host_cap}; "
                 f"bisection over {len(tried)} start-ups; refused as not fitting at "
                 f"{', '.join(refusals) or 'none'}; trained 2 iterations at the value shown |"]
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
            lines.append(self.peak_row("resnet50 swap-all k=128 (plan, CUPTI collector)",
                                       rp["with_workspace"], rp["measured"]))
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
    gpu = v.load("gpu") or {}
    pt = gpu.get("pytorch") or {}
    if gpu.get("name") or pt.get("gpu"):
        text = (f"GPU: **{gpu.get('name') or pt.get('gpu')}** ({gpu.get('memory', '?')}, "
                f"compute mode {gpu.get('compute_mode', 'unknown')}), driver "
                f"{gpu.get('driver', '?')}, PyTorch {pt.get('torch', '?')}, CUDA "
                f"{pt.get('cuda', '?')}, cuDNN {pt.get('cudnn', '?')}.")
    else:
        text = "GPU: unknown (the check section has not named it)."
    mode = " (--first-run)" if v.args.first_run else " (--quick)" if v.args.quick else ""
    return ["# GPU validation", "",
            f"{text} Written by `bench/gpu/validate.py` on "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}{mode}. Math mode: plain "
            "fp32 on both sides (Swapscope `--math fp32`: FMA convolutions and no TF32 in "
            "cuBLAS; PyTorch `allow_tf32 = False` for cuDNN and matmul). Sections run "
            "separately; each names when it was written and how long it took.", ""]


def write_report(v):
    parts = header(v)
    for name in SECTIONS:
        path = os.path.join(v.out, "sections", name + ".md")
        if os.path.exists(path):
            with open(path) as f:
                parts += [f.read().rstrip("\n"), ""]
    with open(os.path.join(v.out, "gpu-validation.md"), "w") as f:
        f.write("\n".join(parts).rstrip("\n") + "\n")


def section_footer(name, clock, stamp):
    took = f"{time.time() - clock.t0:.0f} s"
    if clock.planned:
        took += f" here; the programs report that it would take {clock.spent:.0f} s"
    budget = f" of its budget of {clock.budget:g} s" if clock.budget is not None else ""
    return f"_Section `{name}`: written {stamp}, {took}{budget}._"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--swapscope", required=True, help="the swapscope binary (CUDA backend)")
    ap.add_argument("--out", default="gpu-validation", help="report folder (default ./gpu-validation)")
    ap.add_argument("--first-run", action="store_true",
                    help="the first run's sections, each within its budget: "
                    + ", ".join(FIRST_RUN))
    ap.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    ap.add_argument("--peer", default=PEER,
                    help="the PyTorch peer (default bench/peers/torch_train.py; tests use a fake)")
    ap.add_argument("--sections", default=None,
                    help="comma-separated sections to run (default: all): " + ", ".join(SECTIONS))
    ap.add_argument("--host-memory", type=int, default=0,
                    help="the host memory trainability keeps half of (default: MemTotal)")
    args = ap.parse_args()
    if args.first_run and args.sections is not None:
        ap.error("--first-run runs its own sections (" + ", ".join(FIRST_RUN) + "); give "
                 "either --first-run or --sections")
    if args.first_run and args.quick:
        ap.error("--first-run sets its own iterations; leave --quick out")
    chosen = FIRST_RUN if args.first_run else [
        s.strip() for s in (args.sections or ",".join(SECTIONS)).split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        ap.error(f"--sections: unknown section(s) {', '.join(unknown)}; choose from "
                 + ", ".join(SECTIONS))
    try:
        command_limit, budgets, first_run_s = limits()
    except BadSetting as e:
        ap.error(str(e))
    if args.first_run:
        total = sum(budgets[s] for s in FIRST_RUN)
        if total > first_run_s:
            ap.error(f"the first run's budgets add up to {total:g} s, more than its "
                     f"{first_run_s:g} s (SWAPSCOPE_VALIDATE_FIRST_RUN_S): "
                     + ", ".join(f"{s} {budgets[s]:g}" for s in FIRST_RUN))
    os.makedirs(os.path.join(args.out, "sections"), exist_ok=True)
    v = Validation(args, command_limit)
    failed, skipped, plan = [], [], []
    for name in SECTIONS:
        if name not in chosen:
            continue
        clock = Clock(budgets.get(name) if args.first_run else None)
        v.r.clock = clock
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        try:
            lines = getattr(v, name.replace("-", "_"))()
        except Skipped as e:
            lines = [f"## {name}", "", f"**Skipped**: {e}"]
            skipped.append(name)
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
        lines += ["", section_footer(name, clock, stamp)]
        with open(os.path.join(args.out, "sections", name + ".md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        write_report(v)
        state = "failed" if name in failed else "skipped" if name in skipped else "done"
        spent = (f" ({clock.spent:.0f} s of {clock.budget:g} s)" if clock.budget is not None
                 else "")
        print(f"validate.py: {name}: {state}{spent}", flush=True)
        plan.append((name, clock))
    if any(c.planned for _, c in plan):
        total = sum(c.spent for _, c in plan)
        budget = sum(c.budget for _, c in plan if c.budget is not None)
        print("validate.py: the programs report that this plan would take "
              f"{total:.0f} s" + (f" of its {budget:g} s of budgets" if budget else "") + ": "
              + ", ".join(f"{n} {c.spent:.0f} s" for n, c in plan), flush=True)
    print(os.path.join(args.out, "gpu-validation.md"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
