#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tests the GPU bundle's check script (scripts/gpu-bundle-check.sh) on a small bundle made here:
# a program that needs one library by SONAME and by symbol version. The check must pass with
# everything present and a recent driver, and name each missing piece: an old driver, the
# library removed, the library in an older version. The check runs with objdump and readelf
# shadowed by stand-ins that fail (the GPU machine has no binutils); where readelf is here, the
# ELF reader it uses (elf_deps.py) is compared with it.
#   cuda_bundle_check_test.sh CXX CHECK_SCRIPT      (exit 77: skipped, with the reason)
set -uo pipefail
cxx="$1"
check="$2"
elf_deps="$(dirname "$check")/elf_deps.py"
for tool in python3 "$cxx"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "skipped: $tool is not installed"
    exit 77
  fi
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
lib=libswapscope_check_fixture.so.1
cat >"$work/fix.cpp" <<'CPP'
extern "C" int fixture_value() { return 2; }
CPP
cat >"$work/main.cpp" <<'CPP'
extern "C" int fixture_value();
int main() { return fixture_value() == 2 ? 0 : 1; }
CPP
echo 'FIXTURE_2 { global: fixture_value; local: *; };' >"$work/v2.map"
echo 'FIXTURE_1 { global: fixture_value; local: *; };' >"$work/v1.map"
mkdir -p "$work/new" "$work/old" "$work/bundle/lib"
"$cxx" -shared -fPIC -o "$work/new/$lib" -Wl,-soname,$lib -Wl,--version-script="$work/v2.map" \
  "$work/fix.cpp" || exit 1
"$cxx" -shared -fPIC -o "$work/old/$lib" -Wl,-soname,$lib -Wl,--version-script="$work/v1.map" \
  "$work/fix.cpp" || exit 1
"$cxx" -o "$work/bundle/swapscope" "$work/main.cpp" "$work/new/$lib" || exit 1
echo 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:29 UTC 2025' \
  >"$work/driver-580"
echo 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  575.57.08  Sat May 24 07:21:18 UTC 2025' \
  >"$work/driver-575"

# binutils' readers, shadowed by stand-ins that fail and note that they were called: the GPU
# machine has no binutils.
mkdir -p "$work/nobinutils"
for tool in objdump readelf; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 127\n' "$tool" "$work/binutils-called" \
    >"$work/nobinutils/$tool"
  chmod +x "$work/nobinutils/$tool"
done

failures=0
# The ELF reader against readelf: the same NEEDED entries, RUNPATH, version definitions and
# version needs, for the fixture's program and library and for libstdc++.
if command -v readelf >/dev/null 2>&1; then
  stdcxx="$("$cxx" -print-file-name=libstdc++.so.6)"
  for file in "$work/bundle/swapscope" "$work/new/$lib" "$(readlink -f "$stdcxx")"; do
    want="$( (readelf -dW "$file" | sed -nE 's/.*\((NEEDED|SONAME|RUNPATH|RPATH)\).*\[(.*)\]$/\1 \2/p'
              readelf -VW "$file" | awk '
                /^Version definition section/ {s = "def"; next}
                /^Version needs section/ {s = "need"; next}
                /^Version symbols section/ {s = ""; next}
                s == "def" && / Flags: / && !/Flags: BASE/ {n = $NF; print "VERDEF " n}
                s == "need" && /File: / {f = $0; sub(/.*File: /, "", f); sub(/ .*/, "", f)}
                s == "need" && / Name: / {print "VERNEED " f " " $3}') | sort)"
    got="$(python3 "$elf_deps" "$file" | sort)"
    if [ "$want" != "$got" ] || [ -z "$got" ]; then
      echo "FAIL elf_deps.py on $file differs from readelf:"
      diff <(echo "$want") <(echo "$got") | head -20
      failures=$((failures + 1))
    else
      echo "ok   elf_deps.py reads $(basename "$file") as readelf does ($(echo "$got" | wc -l) items)"
    fi
  done
fi

# expect NAME EXIT_CODE PATTERN... : runs the check and wants the exit code and every line.
run() {
  env -u LD_LIBRARY_PATH PATH="$work/nobinutils:$PATH" bash "$check" --bundle "$work/bundle" \
    "$@" >"$work/out" 2>&1
}
expect() {
  local name="$1" code="$2" rc
  shift 2
  rc="$(cat "$work/rc")"
  if [ "$rc" != "$code" ]; then
    echo "FAIL $name: exit $rc, expected $code"; cat "$work/out"; failures=$((failures + 1)); return
  fi
  for line in "$@"; do
    if ! grep -qxF -- "$line" "$work/out"; then
      echo "FAIL $name: no line '$line' in:"; cat "$work/out"; failures=$((failures + 1)); return
    fi
  done
  echo "ok   $name"
}

cp "$work/new/$lib" "$work/bundle/lib/"
run --driver-version-file "$work/driver-580"; echo $? >"$work/rc"
expect "everything present" 0 "driver:   NVIDIA 580.65.06 ($work/driver-580)" \
  "check: everything the bundle needs is here"
grep -q "^  $lib  *$work/bundle/lib/$lib\$" "$work/out" ||
  { echo "FAIL the library's place is not reported"; cat "$work/out"; failures=$((failures + 1)); }

run --driver-version-file "$work/driver-575"; echo $? >"$work/rc"
expect "old driver" 1 \
  "missing: NVIDIA driver 580 or newer: this machine has 575.57.08, too old for CUDA 13" \
  "check: 1 missing piece(s); the bundle will not run here"

run --driver-version-file "$work/no-such-file"; echo $? >"$work/rc"
expect "no driver" 1 \
  "missing: NVIDIA driver: neither nvidia-smi nor $work/no-such-file reports one (no GPU or no driver here)"

rm "$work/bundle/lib/$lib"
run --driver-version-file "$work/driver-580"; echo $? >"$work/rc"
expect "library removed" 1 \
  "missing: $lib (needed by swapscope): not in the bundle's lib, LD_LIBRARY_PATH, PyTorch's wheel folders, the RUNPATH or the loader's cache" \
  "check: 1 missing piece(s); the bundle will not run here"

cp "$work/old/$lib" "$work/bundle/lib/"
run --driver-version-file "$work/driver-580"; echo $? >"$work/rc"
expect "older library" 1 \
  "missing: version FIXTURE_2 of $lib (needed by swapscope): $work/bundle/lib/$lib does not define it (its newest: FIXTURE_1)"

# A library found only through the program's RUNPATH (as the CUDA toolkit's folder), not in the
# bundle's lib: it resolves there, and is missing once that folder is gone.
rm "$work/bundle/lib/$lib"
mkdir -p "$work/toolkit"
cp "$work/new/$lib" "$work/toolkit/"
"$cxx" -o "$work/bundle/swapscope" "$work/main.cpp" "$work/toolkit/$lib" \
  -Wl,--enable-new-dtags,-rpath,"$work/toolkit" || exit 1
run --driver-version-file "$work/driver-580"; echo $? >"$work/rc"
expect "library in the RUNPATH" 0 "runpath:  $work/toolkit" \
  "check: everything the bundle needs is here"
grep -q "^  $lib  *$work/toolkit/$lib\$" "$work/out" ||
  { echo "FAIL the library's place in the RUNPATH is not reported"; cat "$work/out"; failures=$((failures + 1)); }
rm -r "$work/toolkit"
run --driver-version-file "$work/driver-580"; echo $? >"$work/rc"
expect "RUNPATH folder gone" 1 \
  "missing: $lib (needed by swapscope): not in the bundle's lib, LD_LIBRARY_PATH, PyTorch's wheel folders, the RUNPATH or the loader's cache"

if [ -s "$work/binutils-called" ]; then
  echo "FAIL the check called binutils:"; cat "$work/binutils-called"; failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || exit 1
echo "the check names every missing piece"
