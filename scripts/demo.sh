#!/usr/bin/env bash
# The main job: builds the CLI, then lists the zoo, analyses networks, trains on Fashion-MNIST,
# profiles into a run database and exports a Perfetto trace, each command printed before its output.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target swapscope
swapscope=build/release/app/cli/swapscope

# Bold command lines on a terminal, plain text in a log.
if [ -t 1 ]; then b=$'\033[1m' n=$'\033[0m'; else b="" n=""; fi
say() { printf '\n%s$ %s%s\n' "$b" "$*" "$n"; }
step() { say "swapscope $*"; "$swapscope" "$@"; }

step models
# ResNet-152 at k = 32 under an 8 GiB budget: the AccUDNN paper's headline case. Show the totals.
say "swapscope analyze --model resnet152 --batch 32 --budget 8GiB | tail -n 17"
"$swapscope" analyze --model resnet152 --batch 32 --budget 8GiB | tail -n 17
# The whole table for a small network, with the swap set of vDNN's conv policy.
step analyze --model fmnist-cnn --batch 64 --budget 16MiB --policy vdnn-conv
# Networks round-trip through network JSON: write one out, read it back, same answer.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$swapscope" analyze --model resnet56 --batch 128 --dump-net "$tmp/resnet56.json" >/dev/null
say "swapscope analyze --net resnet56.json --batch 128 --budget 1GiB --json  (selected keys)"
"$swapscope" analyze --net "$tmp/resnet56.json" --batch 128 --budget 1GiB --json |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print({k: d[k] for k in ("params","forward_macs","forward_flops","k_max")})' 2>/dev/null ||
  "$swapscope" analyze --net "$tmp/resnet56.json" --batch 128 --budget 1GiB | tail -n 4
# Bad input gets a clear message and exit code 2.
say "swapscope analyze --model resnet18 --batch 8 --budget '12 parsecs'"
"$swapscope" analyze --model resnet18 --batch 8 --budget "12 parsecs" || echo "(exit code $?)"

# Train the Fashion-MNIST CNN on the real data set with every FM swapped, in a 24 MiB pool.
step train --model fmnist-cnn --data fashion-mnist --batch 64 --iters 300 --budget 24MiB --policy swap-all
# A pool smaller than the plan's peak is refused before training, with the shortfall.
say "swapscope train --model fmnist-cnn --data fashion-mnist --batch 64 --iters 300 --budget 16MiB --policy swap-all"
"$swapscope" train --model fmnist-cnn --data fashion-mnist --batch 64 --iters 300 --budget 16MiB --policy swap-all || echo "(exit code $?)"

# The profiling stage: swap-all at five minibatches, every step, transfer and pool sample recorded
# in a run database; then what it holds, and one iteration as a Perfetto trace.
step profile --model fmnist-cnn --budget 32MiB --iters 3 --db "$tmp/fmnist.swapdb"
step info --db "$tmp/fmnist.swapdb"
step trace --db "$tmp/fmnist.swapdb" --k 47 --out "$tmp/fmnist-trace.json"
