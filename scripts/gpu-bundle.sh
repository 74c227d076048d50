#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the headless CLI with the CUDA backend, and the runtime's and collectors' test programs,
# and packs them for a GPU machine that has only PyTorch's CUDA libraries:
#   DIR/swapscope, DIR/runtime_tests, DIR/collectors_tests   (stripped)
#   DIR/check                                                (scripts/gpu-bundle-check.sh)
#   DIR/lib/                                                 the libraries they link that are
#                                                            neither the C/C++ runtime nor CUDA's
# CUDA's libraries (cudart, cuBLAS, cuDNN, CUPTI; CUDA 13) come from PyTorch's wheels on that
# machine, which bench/gpu/validate.py puts on LD_LIBRARY_PATH. Run DIR/check there first.
#   scripts/gpu-bundle.sh [DIR]     (default: build/gpu-bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/gpu-bundle}"
build=build/gpu-release
programs=(swapscope runtime_tests collectors_tests)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSWAPSCOPE_CUDA=ON -DSWAPSCOPE_GUI=OFF \
  -DSWAPSCOPE_TESTS=ON -DSWAPSCOPE_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${programs[@]}"
rm -rf "$out"
mkdir -p "$out/lib"
cp "$build/app/cli/swapscope" "$build/tests/runtime_tests" "$build/tests/collectors_tests" "$out/"
for p in "${programs[@]}"; do
  strip "$out/$p"
done
cp scripts/gpu-bundle-check.sh "$out/check"
chmod +x "$out/check"
for p in "${programs[@]}"; do
  ldd "$out/$p" | awk '/=> \//{print $1" "$3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libutil.so*|libresolv.so*|libanl.so*|\
    libnsl.so*|libmvec.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;  # the C and C++ runtime
    libcuda*|libcublas*|libcudnn*|libcupti*|libnvrtc*|libnvJitLink*) ;;
    *) cp -L "$path" "$out/lib/$name" ;;
  esac
done
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)): ${programs[*]} check; lib: $(ls "$out/lib" | tr '\n' ' ')"
