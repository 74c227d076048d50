#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Predicted against measured, end to end on one machine: profile each network, plan one minibatch
# under each policy at three budgets (1.02 x swap-all's peak, where it stalls most; a middle one
# where vdnn-conv fits too; and 1.1 x keep-all's peak, where every prefetch can open early), run
# each plan REPS times (all plans of a network interleaved, so slow phases of a shared machine hit
# them alike) and report, per plan, the median over the runs of:
# - t_iter: each run's median iteration against the prediction;
# - total stall per iteration (the compute stream's idle time before steps 1..2N), and whether it
#   is within 25 % or 2 % of t_iter of the prediction, whichever is larger;
# - the stalled steps (stall > 1 % of t_iter) as sets: precision, recall, F1;
# - the step-start error (median and worst step), and whether the peak matched to the byte.
#
# usage: bench/plan_accuracy.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR  a build with the swapscope CLI (default build/release)
#   OUT_DIR    where the databases, plans, runs and report.md go (default BUILD_DIR/plan-accuracy)
# env: REPS (default 3), ITERS per run (default 5), PROFILE_ITERS (default 3),
#      NETS (default "resnet20 resnet56 fmnist-cnn"),
#      POLICIES (default "swap-all vdnn-conv accudnn"; keep-all may be added),
#      NICE (default 10: the campaign yields to other work on the machine),
#      OMP_WAIT_POLICY (default passive: on a machine shared with other work, OpenMP threads that
#      spin in barriers are descheduled mid-region and iterations slow several-fold at random;
#      the profile and the runs use the same setting, which the report records).
set -euo pipefail
build=${1:-build/release}
out=${2:-$build/plan-accuracy}
reps=${REPS:-3}
iters=${ITERS:-5}
profile_iters=${PROFILE_ITERS:-3}
nets=${NETS:-"resnet20 resnet56 fmnist-cnn"}
policies=${POLICIES:-"swap-all vdnn-conv accudnn"}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
cli="$build/app/cli/swapscope"
[[ -x $cli ]] || { echo "no swapscope CLI at $cli (build first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to write the report" >&2; exit 2; }
mkdir -p "$out"
ss() { nice -n "${NICE:-10}" "$cli" "$@"; }

# network -> k planned, profile budget, profile cap (the planned k lies inside the profiled range)
declare -A batch=([resnet20]=32 [resnet56]=16 [fmnist-cnn]=64)
declare -A pbudget=([resnet20]=64MiB [resnet56]=128MiB [fmnist-cnn]=32MiB)
declare -A cap=([resnet20]=64 [resnet56]=32 [fmnist-cnn]=96)

peak() {  # net k policy -> the analyzer's peak in bytes
  ss analyze --model "$1" --batch "$2" --policy "$3" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["policy_peak"]["bytes"])'
}

cat /proc/loadavg >"$out/loadavg-start"
date -u +%FT%TZ >"$out/started"
for net in $nets; do
  k=${batch[$net]}
  db="$out/$net-profile.swapdb"
  echo "== $net: profile in ${pbudget[$net]} (cap ${cap[$net]})" >&2
  ss profile --model "$net" --budget "${pbudget[$net]}" --max-batch "${cap[$net]}" \
    --iters "$profile_iters" --db "$db" --force >/dev/null
  sa=$(peak "$net" "$k" swap-all)
  vd=$(peak "$net" "$k" vdnn-conv)
  ka=$(peak "$net" "$k" keep-all)
  tight=$(python3 -c "print(int(1.02 * $sa))")
  mid=$(python3 -c "print(max($vd, int(1.25 * $sa)))")
  roomy=$(python3 -c "print(int(1.1 * $ka))")
  echo "tight $tight mid $mid roomy $roomy" >"$out/$net-budgets"
  for b in tight mid roomy; do
    bytes=$(awk -v b="$b" '{for (i = 1; i < NF; i += 2) if ($i == b) print $(i + 1)}' \
      "$out/$net-budgets")
    for policy in $policies; do
      plan="$out/$net-$b-$policy.json"
      rm -f "$plan" "$plan.err"
      if ! ss plan --db "$db" --budget "$bytes" --batch "$k" --policy "$policy" --out "$plan" \
        >/dev/null 2>"$plan.err"; then
        echo "   $b $policy: no plan ($(head -c 200 "$plan.err"))" >&2
      fi
    done
  done
  for rep in $(seq 1 "$reps"); do
    for b in tight mid roomy; do
      for policy in $policies; do
        plan="$out/$net-$b-$policy.json"
        [[ -f $plan ]] || continue
        echo "   run $rep/$reps $b $policy" >&2
        res="$out/$net-$b-$policy-run$rep.json"
        if ! ss run --plan "$plan" --iters "$iters" --json >"$res" 2>"$res.err"; then
          echo "   failed: $(head -c 200 "$res.err")" >&2
          rm -f "$res"
        fi
      done
    done
  done
done
cat /proc/loadavg >"$out/loadavg-end"

python3 - "$out" "$reps" "$nets" "$policies" "$iters" "$profile_iters" <<'PY'
import json, os, statistics as st, sys, pathlib
out, reps, nets, policies = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
iters, piters = sys.argv[5], sys.argv[6]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
cores = sum(1 for l in open("/proc/cpuinfo") if l.startswith("processor"))
load0, load1 = ((out / f).read_text().split()[:3] for f in ("loadavg-start", "loadavg-end"))
ms = lambda s: f"{s * 1e3:.1f}"
lines = [f"# Predicted against measured ({cpu}, {cores} cores)", "",
         f"Started {(out / 'started').read_text().strip()}; load average (1, 5, 15 min) "
         f"{' '.join(load0)} at the start, {' '.join(load1)} at the end. "
         f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}. Profiles: {piters} iterations per k; "
         f"each plan ran {reps} times, {iters} iterations after one warm-up, plans interleaved. "
         "Figures are medians over the runs of each run's median (t_iter, stall) or per-run score "
         "(F1, start error); spread = slowest / fastest run's t_iter - 1.", "",
         "| network | budget | policy | k | delay | t_iter pred | meas | err | spread | stall pred | meas | err | goal | stalled pred / meas | F1 | start err med / max | peak |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
t_err, stall_ok, f1_ok, peak_ok, rows = [], 0, 0, True, 0
for net in nets:
    budgets = dict(zip(*[iter((out / f"{net}-budgets").read_text().split())] * 2))
    for b in ("tight", "mid", "roomy"):
        for policy in policies:
            runs = [json.loads(p.read_text()) for r in range(1, reps + 1)
                    if (p := out / f"{net}-{b}-{policy}-run{r}.json").exists()]
            mib = int(budgets[b]) / 2**20
            if not runs:
                err = out / f"{net}-{b}-{policy}.json.err"
                why = "no plan: " + err.read_text().strip().split("\n")[0][:120] if err.exists() else "not run"
                if (out / f"{net}-{b}-{policy}.json").exists():
                    rerr = out / f"{net}-{b}-{policy}-run1.json.err"
                    why = "run failed: " + (rerr.read_text().strip().split("\n")[0][:160] if rerr.exists() else "?")
                lines.append(f"| {net} | {b} {mib:.1f} MiB | {policy} | | | {why} |||||||||||")
                continue
            rows += 1
            r0 = runs[0]
            tp = r0["t_iter_s"]["predicted"]
            tm = st.median(r["t_iter_s"]["measured"] for r in runs)
            spread = max(r["t_iter_s"]["measured"] for r in runs) / min(r["t_iter_s"]["measured"] for r in runs) - 1
            sp = r0["stall_s"]["predicted"]
            sm = st.median(r["stall_s"]["measured"] for r in runs)
            ok = abs(sp - sm) <= max(0.25 * sm, 0.02 * tm)
            f1 = st.median(r["stalled_steps"]["f1"] for r in runs)
            npred = len(r0["stalled_steps"]["predicted"])
            nmeas = st.median(len(r["stalled_steps"]["measured"]) for r in runs)
            se = [r["start_error_s"] for r in runs if r.get("start_error_s")]
            sem = f"{ms(st.median(s['median'] for s in se))} / {ms(st.median(s['max'] for s in se))} ms" if se else "-"
            peak = all(r["peak_bytes"]["predicted"] == r["peak_bytes"]["measured"] for r in runs)
            delay = f"{r0['reuse_delay']['planned']}/{r0['reuse_delay']['run']}"
            t_err.append((tp - tm) / tm)
            stall_ok += ok
            f1_ok += f1 >= 0.8
            peak_ok &= peak
            serr = f"{100 * (sp - sm) / sm:+.0f} %" if sm > 0 else "-"
            lines.append(f"| {net} | {b} {mib:.1f} MiB | {policy} | {r0['k']} | {delay} | {ms(tp)} ms | {ms(tm)} ms | "
                         f"{100 * (tp - tm) / tm:+.1f} % | {100 * spread:.0f} % | {ms(sp)} ms | {ms(sm)} ms | {serr} | "
                         f"{'yes' if ok else 'no'} | {npred} / {nmeas:g} | {f1:.2f} | {sem} | {'exact' if peak else 'NO'} |")
if rows:
    a = sorted(abs(e) for e in t_err)
    lines += ["", f"Over {rows} plans: t_iter |error| median {100 * st.median(a):.1f} %, worst {100 * a[-1]:.1f} % "
              f"(goal 5 % / 10 %); stall within max(25 %, 2 % of t_iter) in {stall_ok} of {rows}; "
              f"F1 >= 0.8 in {f1_ok} of {rows}; peak exact to the byte in {'every run' if peak_ok else 'NOT every run'}."]
(out / "report.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
