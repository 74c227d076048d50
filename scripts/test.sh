#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds with all cores, runs ctest.
# Usage: scripts/test.sh [preset]     (preset: default | asan | release | ci; default: default)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"

scripts/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
QT_QPA_PLATFORM=offscreen ctest --preset "$preset" -j "$(nproc)"
