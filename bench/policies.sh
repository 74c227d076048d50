#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every policy of the policy table side by side, in prediction, with the built CLI and the two
# sample runs' fits: resnet56 and fmnist-cnn on their own profiles, and ResNet-50 and ResNet-152
# at 224x224 with the resnet56 fits transferred (as planner_bench does), each at three budgets.
# Per policy and budget: the largest k whose peak fits (k_max; its buffers may still not pack),
# and at one common k per budget (the largest k every policy but keep-all fits): the predicted
# t_iter, stall per iteration, bytes moved over the link per iteration and forward FLOPs
# recomputed per iteration. Then Ito et al.'s
# setting (ResNet-50, k = 640, 16 GiB): each policy against in-core (keep-all with no budget).
# Prints Markdown. Measured t_iter on the CPU backend comes from bench/plan_accuracy.sh with
# POLICIES set.
#
# usage: bench/policies.sh [BUILD_DIR]   (default build/release; run from the repository root)
set -euo pipefail
build=${1:-build/release}
cli="$build/app/cli/swapscope"
[[ -x $cli ]] || { echo "no swapscope CLI at $cli (build first)" >&2; exit 2; }
[[ -d sample_runs ]] || { echo "run from the repository root (sample_runs/ not found)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }
exec python3 - "$cli" <<'PY'
import json, os, re, subprocess, sys, tempfile
cli = sys.argv[1]
r56 = "sample_runs/resnet56-32x32-cpu-profile.swapdb"
fm = "sample_runs/fmnist-cnn-cpu-profile.swapdb"
policies = ["keep-all", "swap-all", "vdnn-conv", "accudnn", "recompute-light", "ito"]
cases = [("resnet56", r56, [], ["12MiB", "24MiB", "64MiB"]),
         ("fmnist-cnn", fm, [], ["8MiB", "16MiB", "32MiB"]),
         ("ResNet-50, 224x224", r56, ["--model", "resnet50"], ["4GiB", "8GiB", "16GiB"]),
         ("ResNet-152, 224x224", r56, ["--model", "resnet152"], ["4GiB", "8GiB", "16GiB"])]

def sh(args):
    p = subprocess.run([cli] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def kmax(db, extra, budget, policy):
    rc, out, err = sh(["plan", "--db", db, *extra, "--budget", budget, "--policy", policy])
    m = re.search(r"k_max (\d+)", out)
    return int(m.group(1)) if rc == 0 and m else 0

flops_cache = {}
def fwd_flops(extra, db, k):
    key = (tuple(extra), db, k)
    if key not in flops_cache:
        net = extra[1] if extra else None
        if net is None:  # the profiled network of the sample run, which is a zoo model
            net = "resnet56" if db == r56 else "fmnist-cnn"
        rc, out, err = sh(["analyze", "--model", net, "--batch", str(k), "--json"])
        if rc != 0:
            sys.exit(f"swapscope analyze --model {net} --batch {k} failed: {err.strip()}")
        flops_cache[key] = {l["name"]: l["forward_flops"] for l in json.loads(out)["layers"]}
    return flops_cache[key]

tmp = tempfile.mkdtemp()

def at_k(db, extra, budget, policy, k):
    # One plan: its text on stdout (the bytes moved), its plan file (the predictions).
    path = os.path.join(tmp, "plan.json")
    rc, out, err = sh(["plan", "--db", db, *extra, "--budget", budget, "--batch", str(k),
                       "--policy", policy, "--out", path, "--force"])
    if rc != 0:
        return None
    with open(path) as f:
        p = json.load(f)
    moved = re.search(r"swap set .* ([\d.]+ [KMG]?i?B) moved per iteration", out)
    f = fwd_flops(extra, db, k)
    rec = sum(f[r["fm"]] for r in p.get("recompute", []))
    return p["predictions"], moved.group(1) if moved else "?", rec, len(p["swap_set"]), len(p.get("recompute", []))

def ms(s):
    return f"{s * 1e3:.1f} ms" if s < 10 else f"{s:.2f} s"

def gflops(f):
    return "0" if f == 0 else f"{f / 1e6:.1f} M" if f < 1e9 else f"{f / 1e9:.2f} G"

for name, db, extra, budgets in cases:
    print(f"\n**{name}**\n")
    print("| budget | policy | k_max | t_iter at k | stall | moved | swapped / recomputed FMs | recomputed |")
    print("|---|---|---|---|---|---|---|---|")
    for b in budgets:
        km = {p: kmax(db, extra, b, p) for p in policies}
        common = min(km[p] for p in policies if p != "keep-all")
        for p in policies:
            r = at_k(db, extra, b, p, common) if common > 0 else None
            cells = (f"{ms(r[0]['t_iter_s'])} | {ms(r[0]['stall_s'])} | {r[1]} | {r[3]} / {r[4]} | {gflops(r[2])}"
                     if r else "does not fit | | | |")
            print(f"| {b} (k = {common}) | {p} | {km[p] or 'none'} | {cells} |")

print("\n**Ito et al.'s setting: ResNet-50, 224x224, k = 640 in 16 GiB (transferred fits)**\n")
print("| policy | t_iter | against in-core | stall | moved | recomputed |")
print("|---|---|---|---|---|---|")
incore = at_k(r56, ["--model", "resnet50"], "1TiB", "keep-all", 640)
if incore is None:
    sys.exit("keep-all at k = 640 in 1 TiB did not plan")
print(f"| keep-all, no budget (in-core) | {ms(incore[0]['t_iter_s'])} | | {ms(incore[0]['stall_s'])} | {incore[1]} | 0 |")
for p in policies[1:]:
    r = at_k(r56, ["--model", "resnet50"], "16GiB", p, 640)
    if not r:
        print(f"| {p} | does not fit | | | | |")
        continue
    rel = r[0]["t_iter_s"] / incore[0]["t_iter_s"] - 1
    print(f"| {p} | {ms(r[0]['t_iter_s'])} | {rel * 100:+.2f} % | {ms(r[0]['stall_s'])} | {r[1]} | {gflops(r[2])} |")
PY
