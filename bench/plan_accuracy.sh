#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Predicted against measured, end to end on one machine: profile a network, plan one minibatch
# under keep-all, swap-all and accudnn at a budget where swap-all stalls, run each plan REPS
# times (policies interleaved, so slow phases of a shared machine hit all three alike) and
# report the median of the runs' median t_iter against the prediction, the peak and the stall.
#
# usage: bench/plan_accuracy.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR  a build with the swapscope CLI (default build/release)
#   OUT_DIR    where the databases, plans and report.md go (default BUILD_DIR/plan-accuracy)
# env: REPS (default 3), ITERS per run (default 5), NETS (default "resnet56 fmnist-cnn")
set -euo pipefail
build=${1:-build/release}
out=${2:-$build/plan-accuracy}
reps=${REPS:-3}
iters=${ITERS:-5}
nets=${NETS:-"resnet56 fmnist-cnn"}
cli="$build/app/cli/swapscope"
[[ -x $cli ]] || { echo "no swapscope CLI at $cli (build first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to write the report" >&2; exit 2; }
mkdir -p "$out"

# network -> budget, k, profile cap
declare -A budget=([resnet56]=256MiB [fmnist-cnn]=32MiB)
declare -A batch=([resnet56]=32 [fmnist-cnn]=64)
declare -A cap=([resnet56]=128 [fmnist-cnn]=96)

for net in $nets; do
  db="$out/$net-profile.swapdb"
  echo "== $net: profile in ${budget[$net]} (cap ${cap[$net]})" >&2
  "$cli" profile --model "$net" --budget "${budget[$net]}" --max-batch "${cap[$net]}" \
    --iters 5 --db "$db" --force >/dev/null
  for policy in keep-all swap-all accudnn; do
    "$cli" plan --db "$db" --budget "${budget[$net]}" --batch "${batch[$net]}" \
      --policy "$policy" --out "$out/$net-$policy.json" >/dev/null
  done
  for rep in $(seq 1 "$reps"); do
    for policy in keep-all swap-all accudnn; do
      echo "   run $rep/$reps $policy" >&2
      "$cli" run --plan "$out/$net-$policy.json" --iters "$iters" --json \
        >"$out/$net-$policy-run$rep.json"
    done
  done
done

python3 - "$out" "$reps" "$nets" "$(uname -n)" <<'PY'
import json, statistics, sys, pathlib
out, reps, nets = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = [f"# Predicted against measured ({cpu}, {len(open('/proc/cpuinfo').read().split('processor')) - 1} cores)", "",
         f"Each plan ran {reps} times; measured = median over runs of each run's median t_iter.", "",
         "| network | policy | k | t_iter predicted | measured (runs) | error | peak predicted = measured | stall predicted | stall measured |",
         "|---|---|---|---|---|---|---|---|---|"]
for net in nets:
    for policy in ["keep-all", "swap-all", "accudnn"]:
        runs = [json.load(open(out / f"{net}-{policy}-run{r}.json")) for r in range(1, reps + 1)]
        pred = runs[0]["t_iter_s"]["predicted"]
        meas = [r["t_iter_s"]["measured"] for r in runs]
        m = statistics.median(meas)
        peak = all(r["peak_bytes"]["predicted"] == r["peak_bytes"]["measured"] for r in runs)
        sp = runs[0]["stall_s"]["predicted"]
        sm = statistics.median(r["stall_s"]["measured"] for r in runs)
        lines.append(f"| {net} | {policy} | {runs[0]['k']} | {pred*1e3:.1f} ms | {m*1e3:.1f} ms "
                     f"({', '.join(f'{x*1e3:.1f}' for x in meas)}) | {100*(pred-m)/m:+.1f} % | "
                     f"{'yes' if peak else 'NO'} | {sp*1e3:.2f} ms | {sm*1e3:.2f} ms |")
(out / "report.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
