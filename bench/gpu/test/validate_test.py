#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of bench/gpu/validate.py without a GPU: its update-based numerics check, and whole runs
against stand-ins for the GPU programs: a fake `swapscope` (fake_swapscope.py) that fails in one
section, which must leave a partial report with every other section in it, a fake PyTorch peer
(fake_peer.py), a fake nvidia-smi and fake GPU test programs. Each stand-in reports the time
the real program would take on an H100, so that the --first-run preset is dry-run against its
budgets. PyTorch is not needed, and validate.py must never import it."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import validate  # noqa: E402

FAKE = os.path.join(HERE, "fake_swapscope.py")
FAKE_PEER = os.path.join(HERE, "fake_peer.py")
FAKE_SMI = os.path.join(HERE, "fake_nvidia_smi.py")
FAKE_GTEST = os.path.join(HERE, "fake_gtest.py")


GTEST_FAILED = """[ RUN      ] CudaBackendGpu.Agrees
/src/tests/runtime/cuda_backend_test.cpp:462: Failure
Failed
SWAPSCOPE_REQUIRE_GPU=1, but no CUDA backend here: the driver is too old
[  FAILED  ] CudaBackendGpu.Agrees (0 ms)
[ RUN      ] CudaBackendGpu.Passes
[       OK ] CudaBackendGpu.Passes (5 ms)
[  PASSED  ] 1 test.
[  FAILED  ] 1 test, listed below:
[  FAILED  ] CudaBackendGpu.Agrees
"""


class GtestOutput(unittest.TestCase):
    def test_each_failed_test_with_its_first_message(self):
        self.assertEqual(validate.gtest_failures(GTEST_FAILED), {
            "CudaBackendGpu.Agrees":
                "SWAPSCOPE_REQUIRE_GPU=1, but no CUDA backend here: the driver is too old"})
        self.assertEqual(validate.gtest_failures("[  PASSED  ] 3 tests.\n"), {})


class NumericsCheck(unittest.TestCase):
    def test_a_one_percent_gradient_error_fails_the_update_check(self):
        w0 = [1.0, -0.5, 0.25, 2.0]
        g = [0.01, -0.02, 0.005, 0.03]
        ref = [w - d for w, d in zip(w0, g)]  # lr 1, momentum 0, weight decay 0
        bad = [w - 1.01 * d for w, d in zip(w0, g)]
        self.assertAlmostEqual(validate.update_error(w0, ref, bad), 0.01, places=6)
        self.assertGreater(validate.update_error(w0, ref, bad), validate.UPDATE_TOLERANCE)
        self.assertEqual(validate.update_error(w0, ref, ref), 0.0)
        # The weights after a step of lr 0.01 differ by 1e-6 of their scale: the older check,
        # max |w_cuda - w_cpu| / max |w_cpu| against 1e-4, passes the same error.
        small = [w - 0.01 * d for w, d in zip(w0, g)]
        small_bad = [w - 0.01 * 1.01 * d for w, d in zip(w0, g)]
        self.assertLess(validate.value_error(small, small_bad), 1e-4)

    def test_a_tensor_without_an_update_fails_unless_the_other_has_none(self):
        self.assertEqual(validate.update_error([1.0], [1.0], [1.0]), 0.0)
        self.assertEqual(validate.update_error([1.0], [1.0], [1.5]), float("inf"))


@unittest.skipUnless(os.environ.get("SWAPSCOPE_BINARY"),
                     "SWAPSCOPE_BINARY (the real swapscope) is not set")
class RefusalsOfTheRealEngine(unittest.TestCase):
    """validate.py lowers k only on the engine's refusals; they must be recognised as the real
    program words them, and nothing else."""

    def refusal(self, *args):
        cmd = [os.environ["SWAPSCOPE_BINARY"], "train", "--model", "fmnist-cnn", "--data",
               "synthetic", "--batch", "8", "--iters", "1", *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        return validate.CommandFailed("t", cmd, p.returncode, p.stderr).does_not_fit()

    def test_the_pool_and_host_memory_refusals_are_recognised(self):
        self.assertEqual(self.refusal("--budget", "1MiB"), "the pool")
        # On the CPU backend the pool is host memory: a budget no machine has.
        self.assertEqual(self.refusal("--budget", "9223372036854775807"), "host memory")

    def test_other_errors_are_not(self):
        self.assertIsNone(self.refusal("--budget", "1MiB", "--policy", "no-such-policy"))
        self.assertIsNone(self.refusal("--budget", "1GiB", "--device", "no-such-device"))


class PartialReport(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="validate-test-")
        self.bundle = os.path.join(self.dir, "bundle")
        os.makedirs(self.bundle)
        shutil.copy(FAKE, os.path.join(self.bundle, "swapscope"))
        # A bundle check that passes: the real one needs a driver this machine may not have.
        with open(os.path.join(self.bundle, "check"), "w") as f:
            f.write("#!/bin/sh\necho 'check: everything the bundle needs is here'\n"
                    "echo 'fake-gpu: would take 2.00 s' >&2\n")
        os.chmod(os.path.join(self.bundle, "check"), 0o755)
        self.bin = os.path.join(self.dir, "bin")  # nvidia-smi
        os.makedirs(self.bin)
        shutil.copy(FAKE_SMI, os.path.join(self.bin, "nvidia-smi"))
        self.out = os.path.join(self.dir, "out")

    def gpu_test_programs(self):
        for name in ("runtime_tests", "collectors_tests"):
            shutil.copy(FAKE_GTEST, os.path.join(self.bundle, name))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def validate(self, *args, quick=True, host_memory=64 << 30, **env):
        e = {k: v for k, v in os.environ.items() if not k.startswith("SWAPSCOPE_VALIDATE_")}
        e.pop("PYTHONPATH", None)
        e["PATH"] = self.bin + os.pathsep + e.get("PATH", "")
        e.update(env)
        p = subprocess.run([sys.executable, os.path.join(HERE, "..", "validate.py"), "--swapscope",
                            os.path.join(self.bundle, "swapscope"), "--out", self.out,
                            *(["--quick"] if quick else []), "--peer", FAKE_PEER,
                            "--host-memory", str(host_memory), *args],
                           env=e, capture_output=True, text=True, timeout=300)
        path = os.path.join(self.out, "gpu-validation.md")
        if not os.path.exists(path):
            return p, ""
        with open(path) as f:
            return p, f.read()

    def tried_k(self):
        return [int(k) for k in re.findall(r"train --model resnet152 .*?--batch (\d+)", self.log())]

    def log(self):
        with open(os.path.join(self.out, "commands.log")) as f:
            return f.read()

    def test_a_failing_section_is_recorded_and_the_others_run(self):
        p, report = self.validate(FAKE_FAIL_DETERMINISM="1")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("validate.py: determinism: failed", p.stdout)
        self.assertIn("validate.py: numerics: done", p.stdout)
        # The sections before and after the failure are in the report.
        self.assertIn("## Check: driver, libraries, compute mode", report)
        self.assertIn("| fmnist-cnn | 32 | 1 |", report)
        self.assertIn("| resnet20 | 16 | 1 |", report)
        self.assertNotIn("**no**", report)  # the fake's updates agree within the tolerance
        self.assertIn("**Failed**: `determinism-swap-all` exited 1:", report)
        self.assertIn("cudaErrorIllegalAddress", report)
        # Refused as not fitting at 10 and 9, trained at 8; the peer's bisection beside it.
        self.assertIn("| Swapscope swap-all | 8 | analyzer k_max 10; bisection over 5 start-ups; "
                      "refused as not fitting at 10 (the pool), 9 (the pool);", report)
        self.assertIn("| PyTorch | 7 | bisection", report)
        self.assertIn("## Memory fidelity", report)
        self.assertIn("| resnet152 swap-all k=8 | 1008 | 1008 | +0.00e+00 |", report)
        # PyTorch's copies come from the peer, a child process.
        self.assertIn("| page-locked memcpy of 256 MiB, alone (median of 10) | 25.0 | 24.0 |", report)
        self.assertIn("## Throughput: resnet50", report)
        for name in validate.SECTIONS:
            self.assertTrue(os.path.exists(os.path.join(self.out, "sections", name + ".md")), name)

    def test_a_real_error_in_the_k_search_stops_it(self):
        p, report = self.validate("--sections", "trainability", FAKE_CRASH_K="9")
        self.assertEqual(p.returncode, 1)
        self.assertIn("**Failed**: `trainability-swapscope-k9` exited 1:", report)
        self.assertIn("cudaErrorLaunchFailure", report)
        self.assertEqual(self.tried_k(), [10, 5, 7, 8, 9])  # bisection, stopped at the crash
        self.assertNotIn("## Numerics", report)  # not asked for

    def test_the_k_search_bisects_from_the_analyzers_k(self):
        # k_max 1000, trains up to 300: at most 11 start-ups (k // 64 steps took 30 and more).
        p, report = self.validate("--sections", "trainability", FAKE_KMAX="1000",
                                  FAKE_FIT_K="300", FAKE_HOST_PER_K="1000")
        self.assertEqual(p.returncode, 0, p.stderr + report)
        tried = self.tried_k()
        self.assertEqual(tried[0], 1000)
        self.assertLessEqual(len(tried), 11)
        self.assertIn(300, tried)
        self.assertIn(301, tried)  # the refusal that bounds it
        self.assertIn("| Swapscope swap-all | 300 | analyzer k_max 1000; bisection over "
                      f"{len(tried)} start-ups;", report)

    def test_the_k_search_pins_at_most_half_the_host_memory(self):
        # 16 GiB of host memory: 8 GiB for 1.2 x (1 GiB + 200 MB k), so k <= 30, never above.
        p, report = self.validate("--sections", "trainability", host_memory=16 << 30,
                                  FAKE_KMAX="100", FAKE_FIT_K="300")
        self.assertEqual(p.returncode, 0, p.stderr + report)
        self.assertEqual(self.tried_k(), [30])
        self.assertIn("| Swapscope swap-all | 30 | analyzer k_max 100; at most 30 by host memory "
                      "(half of 16.0 GiB,", report)
        self.assertIn("--synthetic-size 30 --batch 30", self.log())

    def test_the_k_search_is_skipped_when_k_1_needs_more_than_half(self):
        p, report = self.validate("--sections", "trainability", host_memory=2 << 30)
        self.assertEqual(p.returncode, 0, p.stderr + report)
        self.assertIn("validate.py: trainability: skipped", p.stdout)
        self.assertIn("**Skipped**: even k = 1 would page-lock 1.4 GiB (analyze's 1273741824 bytes and "
                      "20 %), more than half of this machine's 2.0 GiB of host memory", report)
        self.assertEqual(self.tried_k(), [])

    def test_failing_gpu_tests_are_named_with_their_reasons(self):
        def program(name, text, code):
            path = os.path.join(self.bundle, name)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\ncat <<'EOF'\n{text}EOF\nexit {code}\n")
            os.chmod(path, 0o755)
        program("runtime_tests", GTEST_FAILED, 1)
        program("collectors_tests", "[  PASSED  ] 1 test.\n", 0)
        p, report = self.validate("--sections", "gpu-tests")
        self.assertEqual(p.returncode, 1)
        self.assertIn("| runtime_tests | **failed** (exit 1): 1 test(s) |", report)
        self.assertIn("| collectors_tests | 1 passed |", report)
        self.assertIn("- `runtime_tests` CudaBackendGpu.Agrees: SWAPSCOPE_REQUIRE_GPU=1, but no CUDA "
                      "backend here: the driver is too old", report)

    def test_throughput_compares_medians_after_the_same_warm_up(self):
        p, report = self.validate("--sections", "throughput")
        self.assertEqual(p.returncode, 0, p.stderr + report)
        # --quick: 5 timed iterations after validate.WARMUP on both sides, as each side reports.
        w = validate.WARMUP
        self.assertIn(f"| Swapscope keep-all | {w} | 5 | 50.00 ms | 1280.0 |", report)
        self.assertIn(f"| pytorch 0.0-fake | {w} | 5 | 100.00 ms | 640.0 |", report)
        self.assertIn("Ratio Swapscope / PyTorch (images/s): **2.000**.", report)
        self.assertIn("the peer: a fake page-locked batch.", report)  # the peer's input, stated
        log = self.log()
        self.assertIn(f"train --model resnet50 --data synthetic --batch 64 --iters {w + 5} "
                      f"--warmup {w}", log)
        self.assertIn(f"throughput --model resnet50 --batch 64 --iters 5 --warmup {w}", log)

    def test_a_different_warm_up_gives_no_ratio(self):
        p, report = self.validate("--sections", "throughput", FAKE_PEER_WARMUP="1")
        self.assertEqual(p.returncode, 1)
        self.assertIn("not like for like: Swapscope 5 warm-up and 5 timed iterations, PyTorch 1 "
                      "and 5", report)
        self.assertNotIn("Ratio", report)

    def test_the_k_search_also_lowers_k_when_host_memory_is_short(self):
        p, report = self.validate("--sections", "trainability", FAKE_HOST_K="9")
        self.assertEqual(p.returncode, 0, p.stderr + report)
        self.assertIn("| Swapscope swap-all | 8 | analyzer k_max 10; bisection over 5 start-ups; "
                      "refused as not fitting at 10 (host memory), 9 (the pool);", report)

    def test_rerunning_one_section_keeps_the_others(self):
        self.validate("--sections", "numerics,determinism", FAKE_FAIL_DETERMINISM="1")
        p, report = self.validate("--sections", "determinism")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| fmnist-cnn | 32 | 1 |", report)  # from the first run
        self.assertIn("| recompute-light | 0 |", report)
        self.assertIn("Identical: **yes**.", report)  # the rerun
        self.assertNotIn("**Failed**", report)

    def test_the_first_run_plan_fits_its_budgets_in_a_dry_run_without_importing_torch(self):
        # A `torch` that records who imports it: any import by validate.py's own process would
        # load CUDA there and hold a context beside the programs it runs.
        fake = os.path.join(self.dir, "pylib", "torch")
        os.makedirs(fake)
        marker = os.path.join(self.dir, "torch-imported-by")
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("import sys\n"
                    f"open({marker!r}, 'a').write(' '.join(sys.argv) + '\\n')\n")
        self.gpu_test_programs()
        p, report = self.validate("--first-run", quick=False,
                                  PYTHONPATH=os.path.join(self.dir, "pylib"))
        imported = open(marker).read() if os.path.exists(marker) else ""
        self.assertNotIn("validate.py", imported)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr + report)
        budgets = dict(validate.BUDGET_S)
        for name in validate.FIRST_RUN:
            m = re.search(rf"validate.py: {name}: done \((\d+) s of (\d+) s\)", p.stdout)
            self.assertIsNotNone(m, name + "\n" + p.stdout)
            self.assertEqual(int(m.group(2)), budgets[name])
            self.assertLessEqual(int(m.group(1)), budgets[name], name)
            self.assertTrue(os.path.exists(os.path.join(self.out, "sections", name + ".md")))
        self.assertFalse(os.path.exists(os.path.join(self.out, "sections", "trainability.md")))
        m = re.search(r"this plan would take (\d+) s of its (\d+) s of budgets", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertEqual(int(m.group(2)), sum(budgets[s] for s in validate.FIRST_RUN))
        self.assertLessEqual(int(m.group(2)), 480)
        self.assertGreater(int(m.group(1)), 60)  # the stand-ins' estimates were charged
        self.assertIn("the programs report that it would take", report)
        self.assertIn("| runtime_tests | 10 passed |", report)
        self.assertIn("GPU: **NVIDIA H100 80GB HBM3** (81559 MiB, compute mode Default)", report)
        self.assertIn("--iters 25 --warmup 5", self.log())  # 20 timed iterations
        self.assertIn("--update multi-tensor", self.log())
        self.assertIn("Swapscope's SGD update: multi-tensor", report)
        print("\n" + p.stdout.strip().splitlines()[-2], file=sys.stderr)

    def test_a_section_past_its_budget_is_stopped_and_the_next_runs(self):
        # determinism: four CUDA runs of about 3.6 s each against a budget of 10 s.
        self.gpu_test_programs()
        p, report = self.validate("--first-run", quick=False,
                                  SWAPSCOPE_VALIDATE_BUDGET_DETERMINISM_S="10")
        self.assertEqual(p.returncode, 1)
        self.assertIn("validate.py: determinism: failed", p.stdout)
        self.assertIn("validate.py: throughput: done", p.stdout)
        self.assertIn("would be killed after 3 s: its section's budget of 10 s", report)
        self.assertIn("**Failed**: `determinism-vdnn-conv` exited timeout:", report)

    def test_the_command_limit_comes_from_the_environment(self):
        p, report = self.validate("--sections", "determinism",
                                  SWAPSCOPE_VALIDATE_COMMAND_LIMIT_S="2")
        self.assertEqual(p.returncode, 1)
        self.assertIn("would be killed after 2 s: the command limit of 2 s", report)

    def test_bad_limits_are_refused_with_the_variable_named(self):
        p, _ = self.validate("--first-run", quick=False, SWAPSCOPE_VALIDATE_COMMAND_LIMIT_S="8m")
        self.assertEqual(p.returncode, 2)
        self.assertIn("SWAPSCOPE_VALIDATE_COMMAND_LIMIT_S='8m': not a positive number of seconds",
                      p.stderr)
        p, _ = self.validate("--first-run", quick=False, SWAPSCOPE_VALIDATE_BUDGET_PCIE_S="300")
        self.assertEqual(p.returncode, 2)
        self.assertIn("the first run's budgets add up to 575 s, more than its 480 s", p.stderr)
        p, _ = self.validate("--first-run", "--sections", "numerics", quick=False)
        self.assertEqual(p.returncode, 2)

    def test_the_compute_mode_is_read_first(self):
        p, report = self.validate("--sections", "check",
                                  FAKE_COMPUTE_MODE="Exclusive_Process")
        self.assertEqual(p.returncode, 0, p.stderr + report)
        self.assertIn("compute mode **Exclusive_Process**", report)
        self.assertIn("validate.py holds none", report)
        self.assertIn("PyTorch 0.0-fake, CUDA 13.0, cuDNN 91900", report)
        p, report = self.validate("--sections", "check", FAKE_COMPUTE_MODE="Prohibited")
        self.assertEqual(p.returncode, 1)
        self.assertIn("**Failed**: the GPU's compute mode is Prohibited", report)

    def test_numerics_run_deterministic_algorithms_and_report_the_defaults_apart(self):
        p, report = self.validate("--sections", "numerics", FAKE_DEFAULT_ALGO_ERROR="1")
        self.assertEqual(p.returncode, 0, p.stderr + report)
        self.assertIn("| resnet20 | 16 | 2 |", report)  # sub-batches with batch norm
        self.assertNotIn("**no**", report)
        self.assertIn("| fmnist-cnn | 32 | 1 | conv.weights | 1.00e-03 | **beyond** | fwd "
                      "IMPLICIT_PRECOMP_GEMM 1.0 MiB; bwd-data ALGO_1 0 B; bwd-filter ALGO_1 0 B |",
                      report)
        log = self.log()
        self.assertIn("--device cuda --math fp32 --conv-algo memory --deterministic --lr 1", log)
        self.assertIn("--batch 16 --sub-batches 2", log)

    def test_an_unknown_section_is_refused(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "..", "validate.py"), "--swapscope",
                            "x", "--sections", "numerics,speed"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown section(s) speed", p.stderr)


if __name__ == "__main__":
    unittest.main()
