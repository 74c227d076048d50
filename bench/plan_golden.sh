#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes `swapscope plan --json` of a fixed list of configurations, one file each, so that two
# builds' plans can be compared byte for byte (a change to the planner's speed must not change a
# plan). Both sample runs under every policy, paper mode, a fixed k, sub-batches, the
# whole-training objective on one and on four GPUs, ResNet-152 at 224x224 from 0.8 to 12 GiB and
# ResNet-50 at 2 and 8 GiB (the resnet56 sample's fits transferred). Each file holds the JSON, or
# the error text, and the exit status.
#
# usage: bench/plan_golden.sh BUILD_DIR OUT_DIR
#        diff -r OUT_DIR_A OUT_DIR_B   (no output: the same plans)
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
cli="$1/app/cli/swapscope"
out=$2
r56=sample_runs/resnet56-32x32-cpu-profile.swapdb
fm=sample_runs/fmnist-cnn-cpu-profile.swapdb
[[ -x $cli ]] || { echo "no swapscope CLI at $cli (build first)" >&2; exit 2; }
[[ -f $r56 && -f $fm ]] || { echo "run from the repository root (sample runs not found)" >&2; exit 2; }
mkdir -p "$out"

n=0
one() {
  local name=$1; shift
  local rc=0
  "$cli" plan --json "$@" > "$out/$name.json" 2>&1 || rc=$?
  echo "exit $rc" >> "$out/$name.json"
  n=$((n + 1))
}

for policy in keep-all swap-all vdnn-conv accudnn recompute-light ito; do
  for budget in 48MiB 128MiB 512MiB; do
    one "r56-$policy-$budget" --db "$r56" --policy "$policy" --budget "$budget"
  done
  one "fm-$policy-24MiB" --db "$fm" --policy "$policy" --budget 24MiB
done
one r56-paper-64MiB --db "$r56" --mode paper --budget 64MiB
one r56-paper-256MiB --db "$r56" --mode paper --budget 256MiB
one fm-paper-24MiB --db "$fm" --mode paper --budget 24MiB
one r56-batch16 --db "$r56" --batch 16 --budget 64MiB
one r56-batch64-sub4 --db "$r56" --batch 64 --sub-batches 4 --budget 64MiB
one r56-batch64-subauto --db "$r56" --batch 64 --sub-batches auto --budget 64MiB
one r56-batch256-allow --db "$r56" --batch 256 --allow-sub-batches --budget 64MiB
one r56-whole --db "$r56" --budget 128MiB --dataset-size 50000 --epochs 2
one r56-whole-4gpus --db "$r56" --budget 128MiB --dataset-size 50000 --epochs 2 --gpus 4 --link-bandwidth 25GB
for budget in 0.8GiB 1GiB 1.5GiB 2GiB 3GiB 4GiB 6GiB 8GiB 12GiB; do
  one "resnet152-$budget" --db "$r56" --model resnet152 --budget "$budget"
done
one resnet152-paper-8GiB --db "$r56" --model resnet152 --mode paper --budget 8GiB
one resnet50-2GiB --db "$r56" --model resnet50 --budget 2GiB
one resnet50-8GiB --db "$r56" --model resnet50 --budget 8GiB
echo "wrote $n plans to $out"
