#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, ASan + UBSan, build/fuzz) and runs each for
# a while on a copy of its seed corpus in fuzz/corpus/ (the committed corpus is never written).
# Fails when any target finds something: a crash, a sanitizer report, an exception other than
# swapscope::Error, a broken invariant, a hang (-timeout) or a memory blow-up (-rss_limit_mb).
#
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]   run each target SECONDS (default 20)
#        scripts/fuzz.sh --check                 only say whether clang++ and libFuzzer are here
# Targets: network_json plan_json options run_db (default: all). Logs and findings go to
# build/fuzz/runs/<target>/ (FUZZ_OUT overrides build/fuzz/runs). Extra libFuzzer flags can be
# given in FUZZ_FLAGS, e.g. FUZZ_FLAGS="-jobs=2 -workers=2"; FUZZ_BUILD=0 skips the configure and
# build steps (for several runs at once on one build).
set -euo pipefail
cd "$(dirname "$0")/.."

cxx="${FUZZ_CXX:-clang++}"
check_toolchain() {
  if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "fuzz: $cxx not found (Debian: apt-get install clang libclang-rt-14-dev)"
    return 1
  fi
  local dir
  dir="$(mktemp -d)"
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
    >"$dir/probe.cpp"
  if ! "$cxx" -fsanitize=fuzzer,address,undefined "$dir/probe.cpp" -o "$dir/probe" \
    >"$dir/log" 2>&1; then
    echo "fuzz: $cxx cannot link -fsanitize=fuzzer: the libFuzzer runtime is missing" \
      "(Debian: apt-get install libclang-rt-14-dev)"
    rm -rf "$dir"
    return 1
  fi
  rm -rf "$dir"
  echo "fuzz: $("$cxx" --version | head -n1) with libFuzzer"
}

if [ "${1:-}" = "--check" ]; then
  check_toolchain
  exit
fi
seconds="${1:-20}"
shift || true
case "$seconds" in '' | *[!0-9]*)
  echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2
  exit 2
  ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(network_json plan_json options run_db)
check_toolchain >&2 || exit 1

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  cmake --preset fuzz "${launcher[@]}" >/dev/null
  cmake --build --preset fuzz -j "$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}") |
    sed -E '/^\[ *[0-9]+%\] Built target/d'
fi

# The largest input per format: network and plan files are small JSON, run databases of a few
# minibatches are tens to hundreds of KiB, option words are short.
max_len() {
  case "$1" in
    network_json | plan_json) echo 65536 ;;
    run_db) echo 262144 ;;
    *) echo 4096 ;;
  esac
}

out="${FUZZ_OUT:-build/fuzz/runs}"
failed=()
for t in "${targets[@]}"; do
  bin="build/fuzz/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: no target $t ($bin)" >&2; exit 2; }
  dir="$out/$t"
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/findings"
  cp -r "fuzz/corpus/$t/." "$dir/corpus/"
  dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  echo "fuzz: $t for ${seconds} s on a copy of fuzz/corpus/$t ($(ls "$dir/corpus" | wc -l) seeds)"
  rc=0
  # shellcheck disable=SC2086  # FUZZ_FLAGS holds several flags
  "$bin" -max_total_time="$seconds" -max_len="$(max_len "$t")" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/" "${dict[@]}" ${FUZZ_FLAGS:-} \
    "$dir/corpus" >"$dir/log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|stat::)' "$dir/log" | sed 's/^/  /' || true
  if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$dir/findings")" ]; then
    echo "fuzz: $t FAILED (exit $rc); log $dir/log, inputs in $dir/findings/:" >&2
    ls "$dir/findings" >&2 || true
    grep -m1 -B2 -A25 -E 'ERROR: |runtime error|swapscope fuzz finding|uncaught exception|deadly signal' \
      "$dir/log" >&2 || tail -n 30 "$dir/log" >&2
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no findings in ${targets[*]} (${seconds} s each)"
