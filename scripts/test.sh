#!/usr/bin/env bash
# The test command (README, CI): installs what is missing, configures, builds with all cores,
# runs ctest. Without an argument it builds the ci preset: the default build (warnings are
# errors) with line tables only for debug information, which compiles faster.
# Usage: scripts/test.sh [preset]     (preset: ci | default | asan | release; default: ci)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-ci}"

scripts/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
QT_QPA_PLATFORM=offscreen ctest --preset "$preset" -j "$(nproc)"
