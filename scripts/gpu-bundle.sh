#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the headless CLI with the CUDA backend and packs it for a GPU machine that has only
# PyTorch's CUDA libraries: DIR/swapscope plus DIR/lib with the libraries it links that are
# neither the C/C++ runtime nor CUDA's (oneDNN, OpenCL loader, SQLite, zlib, OpenMP). CUDA's
# libraries (cudart, cuBLAS, cuDNN, CUPTI) come from PyTorch's wheels on that machine, which
# bench/gpu/validate.py puts on LD_LIBRARY_PATH.
#   scripts/gpu-bundle.sh [DIR]     (default: build/gpu-bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/gpu-bundle}"
build=build/gpu-release
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSWAPSCOPE_CUDA=ON -DSWAPSCOPE_GUI=OFF \
  -DSWAPSCOPE_TESTS=OFF -DSWAPSCOPE_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target swapscope
rm -rf "$out"
mkdir -p "$out/lib"
cp "$build/app/cli/swapscope" "$out/"
ldd "$out/swapscope" | awk '/=> \//{print $1" "$3}' | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    libcuda*|libcublas*|libcudnn*|libcupti*|libnvrtc*|libnvJitLink*) ;;
    *) cp -L "$path" "$out/lib/$name" ;;
  esac
done
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)): $(ls "$out/lib" | tr '\n' ' ')"
