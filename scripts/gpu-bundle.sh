#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the headless CLI with the CUDA backend, and the runtime's and collectors' test programs,
# and packs them for a GPU machine that has only PyTorch's CUDA libraries:
#   DIR/swapscope, DIR/runtime_tests, DIR/collectors_tests   (stripped)
#   DIR/check, DIR/elf_deps.py                               (scripts/gpu-bundle-check.sh and
#                                                            its ELF reader: no binutils there)
#   DIR/lib/                                                 the libraries they link that are
#                                                            not CUDA's, libstdc++.so.6 and
#                                                            libgcc_s.so.1 included (the
#                                                            programs need GLIBCXX_3.4.30); not
#                                                            glibc's
# and DIR.tar.xz, the folder packed to travel: at most 64 MiB (the most a GPU machine's working
# tree may carry beside the sources), or the script fails with its size. Unpack it there with
#   tar -xJf DIR.tar.xz -C "$(dirname DIR)"
# CUDA's libraries (cudart, cuBLAS, cuDNN, CUPTI; CUDA 13) come from PyTorch's wheels on that
# machine, which bench/gpu/validate.py puts on LD_LIBRARY_PATH. Run DIR/check there first.
#   scripts/gpu-bundle.sh [DIR]     (default: build/gpu-bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/gpu-bundle}"
build=build/gpu-release
programs=(swapscope runtime_tests collectors_tests)
limit=$((64 << 20))
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSWAPSCOPE_CUDA=ON -DSWAPSCOPE_GUI=OFF \
  -DSWAPSCOPE_TESTS=ON -DSWAPSCOPE_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${programs[@]}"
rm -rf "$out" "$out.tar.xz"
mkdir -p "$out/lib"
cp "$build/app/cli/swapscope" "$build/tests/runtime_tests" "$build/tests/collectors_tests" "$out/"
for p in "${programs[@]}"; do
  strip "$out/$p"
done
cp scripts/gpu-bundle-check.sh "$out/check"
cp scripts/elf_deps.py "$out/elf_deps.py"
chmod +x "$out/check" "$out/elf_deps.py"
for p in "${programs[@]}"; do
  ldd "$out/$p" | awk '/=> \//{print $1" "$3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libutil.so*|libresolv.so*|libanl.so*|\
    libnsl.so*|libmvec.so*|ld-linux*) ;;  # glibc: the machine's own
    libcuda*|libcublas*|libcudnn*|libcupti*|libnvrtc*|libnvJitLink*) ;;
    *) cp -L "$path" "$out/lib/$name" ;;
  esac
done
for name in libstdc++.so.6 libgcc_s.so.1; do
  [ -e "$out/lib/$name" ] || { echo "gpu-bundle: the programs link no $name" >&2; exit 1; }
done
tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -9 -T0 >"$out.tar.xz"
size="$(stat -c %s "$out.tar.xz")"
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
if [ "$size" -gt "$limit" ]; then
  echo "gpu-bundle: $out.tar.xz is $size bytes ($(mib "$size")), more than the 64 MiB a GPU" \
    "machine's working tree may carry beside the sources" >&2
  exit 1
fi
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)): ${programs[*]} check elf_deps.py;" \
  "lib: $(ls "$out/lib" | tr '\n' ' ')"
echo "gpu-bundle: $out.tar.xz: $size bytes ($(mib "$size")); unpack with" \
  "tar -xJf $out.tar.xz -C $(dirname "$out")"
