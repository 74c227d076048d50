#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of bench/gpu/validate.py without a GPU: its update-based numerics check, and whole runs
against a fake `swapscope` (fake_swapscope.py) that fails in one section, which must leave a
partial report with every other section in it, and a fake PyTorch peer (fake_peer.py) for the
throughput comparison. PyTorch is not needed: the sections that use it in-process record that
they could not run."""
import os
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
            f.write("#!/bin/sh\necho 'check: everything the bundle needs is here'\n")
        os.chmod(os.path.join(self.bundle, "check"), 0o755)
        self.out = os.path.join(self.dir, "out")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def validate(self, *args, **env):
        e = dict(os.environ)
        e.update(env)
        e.pop("PYTHONPATH", None)
        p = subprocess.run([sys.executable, os.path.join(HERE, "..", "validate.py"), "--swapscope",
                            os.path.join(self.bundle, "swapscope"), "--out", self.out, "--quick",
                            "--peer", FAKE_PEER, *args],
                           env=e, capture_output=True, text=True, timeout=300)
        with open(os.path.join(self.out, "gpu-validation.md")) as f:
            return p, f.read()

    def log(self):
        with open(os.path.join(self.out, "commands.log")) as f:
            return f.read()

    def test_a_failing_section_is_recorded_and_the_others_run(self):
        p, report = self.validate(FAKE_FAIL_DETERMINISM="1")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("validate.py: determinism: failed", p.stdout)
        self.assertIn("validate.py: numerics: done", p.stdout)
        # The sections before and after the failure are in the report.
        self.assertIn("## Check: driver and libraries", report)
        self.assertIn("| fmnist-cnn | 32 |", report)
        self.assertIn("| resnet20 | 16 |", report)
        self.assertNotIn("**no**", report)  # the fake's updates agree within the tolerance
        self.assertIn("**Failed**: `determinism-swap-all` exited 1:", report)
        self.assertIn("cudaErrorIllegalAddress", report)
        # Refused as not fitting at 10 and 9, trained at 8; the peer's bisection beside it.
        self.assertIn("| Swapscope swap-all | 8 | analyzer k_max 10; refused as not fitting at "
                      "10 (the pool), 9 (the pool);", report)
        self.assertIn("| PyTorch | 7 | bisection", report)
        self.assertIn("## Memory fidelity", report)
        self.assertIn("| resnet152 swap-all k=8 | 1008 | 1008 | +0.00e+00 |", report)
        # Without PyTorch (or a GPU) the section that needs it in-process says why, and nothing
        # else stops.
        self.assertIn("## pcie", report)
        self.assertIn("## Throughput: resnet50", report)
        for name in validate.SECTIONS:
            self.assertTrue(os.path.exists(os.path.join(self.out, "sections", name + ".md")), name)

    def test_a_real_error_in_the_k_search_stops_it_instead_of_lowering_k(self):
        p, report = self.validate("--sections", "trainability", FAKE_CRASH_K="9")
        self.assertEqual(p.returncode, 1)
        self.assertIn("**Failed**: `trainability-swapscope-k9` exited 1:", report)
        self.assertIn("cudaErrorLaunchFailure", report)
        self.assertIn("--batch 10", self.log())
        self.assertNotIn("--batch 8", self.log())
        self.assertNotIn("## Numerics", report)  # not asked for

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
        self.assertIn("the peer: a fake pinned batch.", report)  # the peer's input, stated
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
        self.assertIn("| Swapscope swap-all | 8 | analyzer k_max 10; refused as not fitting at "
                      "10 (host memory), 9 (the pool);", report)

    def test_rerunning_one_section_keeps_the_others(self):
        self.validate("--sections", "numerics,determinism", FAKE_FAIL_DETERMINISM="1")
        p, report = self.validate("--sections", "determinism")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| fmnist-cnn | 32 |", report)  # from the first run
        self.assertIn("Identical: **yes**.", report)  # the rerun
        self.assertNotIn("**Failed**", report)

    def test_an_unknown_section_is_refused(self):
        p = subprocess.run([sys.executable, os.path.join(HERE, "..", "validate.py"), "--swapscope",
                            "x", "--sections", "numerics,speed"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown section(s) speed", p.stderr)


if __name__ == "__main__":
    unittest.main()
