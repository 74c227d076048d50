#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages Swapscope builds and tests with, if any is missing.
# The CUDA toolkit is not a Debian package here: the build uses it where it is installed
# (SWAPSCOPE_CUDA=AUTO) and builds everything else without it.
set -euo pipefail

# ninja-build: the generator of every CMake preset but fuzz (default, ci, asan, release).
# python3: the tests of bench/gpu/validate.py (skipped, and said so, without it).
# clang-format: the formatting check (scripts/format-check.sh) CI runs.
# qt6-svg-dev: the app's SVG figures and the icon renderer; appstream: the metainfo check.
# libonnx-dev: the ONNX importer; its headers include protobuf's, which it does not depend on.
# ocl-icd-opencl-dev: Debian's oneDNN is built with an OpenCL GPU runtime, and its CMake package
# requires OpenCL; apt only recommends it, and recommendations are not installed here.
packages=(
  build-essential cmake ninja-build pkg-config clang-format
  nlohmann-json3-dev libsqlite3-dev
  qt6-base-dev qt6-svg-dev libqcustomplot-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev ocl-icd-opencl-dev zlib1g-dev dataset-fashion-mnist
  libonnx-dev libprotobuf-dev
  xvfb xauth appstream
  python3
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
