#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Paper mode (Algorithm 2) against argmin, accudnn, with the built CLI on the resnet56 sample run:
# for resnet56 itself and for ResNet-152 at 224x224 (the resnet56 fits transferred, as
# planner_bench does), 8 budgets from the smallest that trains (swap-all at k = 1) to 16 GiB,
# roughly geometric. Prints a Markdown table: k, predicted throughput, stall and bytes moved per
# iteration for each mode; "no k" where paper mode finds no k that meets (6).
#
# usage: bench/plan_modes.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
build=${1:-build/release}
cli="$build/app/cli/swapscope"
db=sample_runs/resnet56-32x32-cpu-profile.swapdb
[[ -x $cli ]] || { echo "no swapscope CLI at $cli (build first)" >&2; exit 2; }
[[ -f $db ]] || { echo "run from the repository root ($db not found)" >&2; exit 2; }

# The smallest budget that trains: from the error a budget of 1 byte gets.
minimum() {
  { "$cli" plan --db "$db" "$@" --budget 1 2>&1 || true; } | sed -n 's/.*swap-all.s [^(]*(\([0-9]*\) bytes).*/\1/p;
    s/.*needs [^(]*(\([0-9]*\) bytes) at k = 1.*/\1/p' | head -1
}

# One plan: "k | samples/s | stall | moved" or "no k" / the error's first words.
cell() {
  local text
  if ! text=$("$cli" plan --db "$db" "$@" 2>&1); then
    if grep -q "Algorithm 2 found no feasible k" <<<"$text"; then echo "no k | | |"; else
      echo "error | | |"; fi
    return
  fi
  awk '
    /^  k  / { k = $2 }
    /^  t_iter/ { tput = sprintf("%#.3g", k * 1000 / $2) }
    /^  stall/ { stall = $2 " " $3 }
    /^  swap set/ { for (i = 1; i <= NF; ++i) if ($i == "moved") moved = $(i - 2) " " $(i - 1) }
    END { printf "%s | %s | %s | %s\n", k, tput, stall, moved }' <<<"$text"
}

table() {
  local name=$1; shift
  local budgets=("$@")
  echo
  echo "**$name**"
  echo
  echo "| budget | paper k | samples/s | stall | moved | argmin k | samples/s | stall | moved |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for b in "${budgets[@]}"; do
    echo "| $b | $(cell "${net[@]}" --budget "$b" --mode paper) | $(cell "${net[@]}" --budget "$b") |"
  done
}

net=()
min56=$(minimum)
table "resnet56 (the sample's own network)" "$min56" 32MiB 96MiB 256MiB 768MiB 2GiB 6GiB 16GiB
net=(--model resnet152)
min152=$(minimum --model resnet152)
table "ResNet-152, 224x224 (transferred)" "$min152" 1GiB 1.5GiB 2.5GiB 4GiB 6.5GiB 10GiB 16GiB
