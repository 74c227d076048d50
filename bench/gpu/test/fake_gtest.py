#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for the bundle's GPU test programs (runtime_tests, collectors_tests) in
validate_test.py: GoogleTest's summary of N passed tests, and the time the real program's GPU
suites would take on an H100 (estimates: each test opens the CUDA backend in about 3 s and
trains small networks for a few iterations)."""
import os
import sys

# name: (tests, seconds)
PROGRAMS = {"runtime_tests": (10, 45.0), "collectors_tests": (1, 10.0)}


def main():
    tests, seconds = PROGRAMS.get(os.path.basename(sys.argv[0]), (1, 5.0))
    print(f"[==========] {tests} tests ran.\n[  PASSED  ] {tests} tests.")
    seconds *= float(os.environ.get("FAKE_SLOW", "1"))
    sys.stderr.write(f"fake-gpu: would take {seconds:.2f} s\n")


if __name__ == "__main__":
    main()
