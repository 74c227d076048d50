#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU bundle's `check`: run it first on the GPU machine. It reports the NVIDIA driver, every
# shared library the bundle's programs need (and those libraries need) with where it resolves,
# the versioned symbols they need against what the resolved libraries define, glibc and
# libstdc++, and cuDNN's run-time sub-libraries. It exits 1 with one line starting "missing:" per
# missing piece, 0 when everything is there. It needs bash, python3 and elf_deps.py beside it
# (which reads the ELF files), no binutils.
#
#   check [--bundle DIR] [--driver-version-file FILE] [--min-driver N]
#
# Libraries resolve as bench/gpu/validate.py arranges it: DIR/lib, then LD_LIBRARY_PATH, then
# PyTorch's lib folder and its NVIDIA wheels' site-packages/nvidia/*/lib (found with python3
# where it imports torch or nvidia), then the programs' RUNPATH (the CUDA toolkit's folder on the
# machine that built them), then the loader's cache (ldconfig -p) and default folders.
# DIR defaults to this script's folder; the programs checked are DIR/swapscope and whichever of
# DIR/runtime_tests and DIR/collectors_tests are there. The driver comes from nvidia-smi, or from
# /proc/driver/nvidia/version (--driver-version-file overrides it, for tests); the CUDA 13
# libraries need driver 580 or newer (--min-driver).
set -uo pipefail

bundle="$(cd "$(dirname "$0")" && pwd)"
driver_file=/proc/driver/nvidia/version
min_driver=580
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle="$(cd "$2" && pwd)" || exit 2; shift 2 ;;
    --driver-version-file) driver_file="$2"; shift 2 ;;
    --min-driver) min_driver="$2"; shift 2 ;;
    -h|--help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

missing=()
miss() { missing+=("$1"); echo "missing: $1"; }

# The ELF files are read by elf_deps.py beside this script (no binutils needed).
elf_deps="$(cd "$(dirname "$0")" && pwd)/elf_deps.py"
if ! command -v python3 >/dev/null 2>&1; then
  echo "check: python3 is not installed: $elf_deps reads what the programs need" >&2
  exit 2
fi
if [ ! -f "$elf_deps" ]; then
  echo "check: $elf_deps is not there: it reads what the programs need" >&2
  exit 2
fi

# --- the driver ------------------------------------------------------------------------------
driver=""
if [ "$driver_file" = /proc/driver/nvidia/version ] && command -v nvidia-smi >/dev/null 2>&1; then
  driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')"
  [ -n "$driver" ] && echo "driver:   NVIDIA $driver (nvidia-smi)"
fi
if [ -z "$driver" ] && [ -r "$driver_file" ]; then
  driver="$(grep -oE 'Kernel Module[^0-9]*[0-9]+(\.[0-9]+)+' "$driver_file" | grep -oE '[0-9]+(\.[0-9]+)+' | head -n1)"
  [ -n "$driver" ] && echo "driver:   NVIDIA $driver ($driver_file)"
fi
if [ -z "$driver" ]; then
  miss "NVIDIA driver: neither nvidia-smi nor $driver_file reports one (no GPU or no driver here)"
elif [ "${driver%%.*}" -lt "$min_driver" ] 2>/dev/null; then
  miss "NVIDIA driver $min_driver or newer: this machine has $driver, too old for CUDA 13"
fi

# --- where libraries are looked for ----------------------------------------------------------
search=()
[ -d "$bundle/lib" ] && search+=("$bundle/lib")
IFS=: read -r -a ldpath <<<"${LD_LIBRARY_PATH:-}"
for d in "${ldpath[@]}"; do [ -n "$d" ] && [ -d "$d" ] && search+=("$d"); done
python=""
command -v python3 >/dev/null 2>&1 && python=python3
# PyTorch's lib folder and its NVIDIA wheels' lib folders, as bench/gpu/validate.py finds them.
wheel_dirs='
import glob, os
dirs = []
try:
    import torch
    dirs.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
except Exception:
    pass
try:
    import nvidia
    for root in nvidia.__path__:
        dirs += sorted(glob.glob(os.path.join(root, "*", "lib")))
        dirs += sorted(glob.glob(os.path.join(root, "*", "*", "lib")))
except Exception:
    pass
print("\n".join(d for d in dirs if os.path.isdir(d)))
'
if [ -n "$python" ]; then
  while IFS= read -r d; do
    [ -n "$d" ] && search+=("$d")
  done < <("$python" -c "$wheel_dirs" 2>/dev/null)
  echo "python:   $("$python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null) ($(command -v "$python"))"
else
  echo "python:   none (PyTorch's wheel folders not searched)"
fi
if [ ${#search[@]} -gt 0 ]; then echo "searched: ${search[*]}"; else echo "searched: the loader cache only"; fi

ldcache="$(/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null || true)"
resolve() {  # SONAME -> path, or nothing
  local name="$1" d p
  for d in "${search[@]}"; do
    if [ -e "$d/$name" ]; then echo "$d/$name"; return; fi
  done
  p="$(awk -v n="$name" '$1 == n && /x86-64|x86_64|AArch64|aarch64/ {print $NF; exit}' <<<"$ldcache")"
  if [ -n "$p" ]; then echo "$p"; return; fi
  for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
    if [ -e "$d/$name" ]; then echo "$d/$name"; return; fi
  done
}
# elf_deps.py reads the dynamic section and the version tables without listing every symbol
# (readelf -V would, which takes minutes on cuBLAS). Each file is read once: what it gives is
# kept in a file (the callers run in subshells, which keep no variable).
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
headers() {
  local kept="$cache/${1//\//%}"
  [ -f "$kept" ] || python3 "$elf_deps" "$1" >"$kept" 2>/dev/null
  cat "$kept"
}
needed() { headers "$1" | awk '$1 == "NEEDED" {print $2}'; }
# "FILE VERSION" per line: the versions a program or library needs from each library.
version_needs() { headers "$1" | awk '$1 == "VERNEED" {print $2, $3}'; }
version_defs() { headers "$1" | awk '$1 == "VERDEF" {print $2}'; }

# --- the programs and every library they need, transitively ----------------------------------
programs=()
for p in swapscope runtime_tests collectors_tests; do
  [ -f "$bundle/$p" ] && programs+=("$bundle/$p")
done
if [ ${#programs[@]} -eq 0 ]; then
  miss "the bundle's programs: no swapscope in $bundle"
fi
# The programs' RUNPATH, after the folders above (the loader reads LD_LIBRARY_PATH first).
runpath=()
for p in "${programs[@]}"; do
  rp="$(headers "$p" | awk '$1 == "RUNPATH" || $1 == "RPATH" {print $2}')"
  IFS=: read -r -a rpdirs <<<"$rp"
  for d in "${rpdirs[@]}"; do
    d="${d//\$\{ORIGIN\}/$bundle}"
    d="${d//\$ORIGIN/$bundle}"
    [ -n "$d" ] && [ -d "$d" ] && [[ " ${runpath[*]} " != *" $d "* ]] && runpath+=("$d")
  done
done
if [ ${#runpath[@]} -gt 0 ]; then
  echo "runpath:  ${runpath[*]}"
  search+=("${runpath[@]}")
fi

declare -A where=() by=() seen=()
queue=("${programs[@]}")
system_lib() {
  case "$1" in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|libutil.so.*|libresolv.so.*|\
    libanl.so.*|libnsl.so.*|libmvec.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*) return 0 ;;
  esac
  return 1
}
echo "libraries:"
while [ ${#queue[@]} -gt 0 ]; do
  file="${queue[0]}"
  queue=("${queue[@]:1}")
  [ -n "${seen[$file]:-}" ] && continue
  seen[$file]=1
  for name in $(needed "$file"); do
    [ -n "${by[$name]:-}" ] && continue
    by[$name]="$(basename "$file")"
    path="$(resolve "$name")"
    if [ -z "$path" ]; then
      miss "$name (needed by $(basename "$file")): not in the bundle's lib, LD_LIBRARY_PATH, PyTorch's wheel folders, the RUNPATH or the loader's cache"
      continue
    fi
    where[$name]="$path"
    printf '  %-28s %s\n' "$name" "$path"
    # The C/C++ runtime's own needs are the system's; follow everything else, and the C++
    # runtime the bundle packs (its glibc versions must be this machine's).
    if ! system_lib "$name" || [[ "$path" == "$bundle/lib/"* ]]; then queue+=("$path"); fi
  done
done

# cuDNN 9 loads its sub-libraries at run time, from the folder libcudnn.so.9 is in.
if [ -n "${where[libcudnn.so.9]:-}" ]; then
  dir="$(dirname "$(readlink -f "${where[libcudnn.so.9]}")")"
  for sub in libcudnn_graph.so.9 libcudnn_ops.so.9 libcudnn_cnn.so.9 libcudnn_heuristic.so.9 \
             libcudnn_engines_precompiled.so.9; do
    if [ -e "$dir/$sub" ] || [ -e "$(dirname "${where[libcudnn.so.9]}")/$sub" ]; then
      printf '  %-28s %s\n' "$sub" "$dir/$sub (loaded by cuDNN)"
    else
      miss "$sub (loaded by libcudnn.so.9 at run time): not next to ${where[libcudnn.so.9]}"
    fi
  done
fi

# --- versioned symbols -----------------------------------------------------------------------
for file in "${!seen[@]}"; do
  while read -r lib version; do
    [ -z "$lib" ] && continue
    path="${where[$lib]:-}"
    [ -z "$path" ] && continue  # already reported as missing
    if ! version_defs "$path" | grep -qxF "$version"; then
      prefix="${version%%[0-9]*}"  # GLIBCXX_ of GLIBCXX_3.4.30
      have="$(version_defs "$path" | grep -F -- "$prefix" | grep -v -x -F -- "$lib" | sort -V | tail -n1)"
      miss "version $version of $lib (needed by $(basename "$file")): $path does not define it${have:+ (its newest: $have)}"
    fi
  done < <(version_needs "$file")
done

glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>/dev/null | head -n1)"
echo "glibc:    ${glibc:-unknown}"
if [ -n "${where[libstdc++.so.6]:-}" ]; then
  newest="$(version_defs "${where[libstdc++.so.6]}" | grep '^GLIBCXX_' | sort -V | tail -n1)"
  echo "libstdc++: ${where[libstdc++.so.6]} (up to ${newest:-unknown})"
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "check: ${#missing[@]} missing piece(s); the bundle will not run here"
  exit 1
fi
echo "check: everything the bundle needs is here"
