#!/usr/bin/env bash
# scripts/results_table.py (issue 29, item 6) prints what the runs measured: a two-seed `blr
# compare` is tabulated as the demo and as a vision task, and every cell must equal the mean ± sd
# that compare itself reports in its JSON summary (computed in C++, independently of the script);
# the ratio of seconds per epoch is IVON's mean over AdamW's. A directory with no runs is an error.
# Usage: results_table.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: results_table.sh <path-to-blr> <source-dir>}
src=${2:?}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

"$blr" compare --optimizers ivon,adamw --seeds 2 --train-limit 600 --test-limit 300 --epochs 1 \
  --hidden 16 --test-samples 4 --threads 1 --quiet --json "$work/c.json" >/dev/null 2>"$work/c.err" ||
  { cat "$work/c.err" >&2; fail "blr compare --seeds 2 failed"; finish; exit 1; }
python3 "$src/scripts/results_table.py" --demo "$work/c.json" >"$work/demo.md" 2>"$work/demo.err" ||
  { cat "$work/demo.err" >&2; fail "results_table.py --demo failed"; }
python3 - "$work/c.json" "$work/demo.md" <<'PY' || fail "the demo table differs from compare's summary"
import json, sys
d = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read().splitlines()
summary = d["seeds"]["summary"]
def cell(stat, digits):
    return f"{stat['mean']:.{digits}f} ± {stat['sd']:.{digits}f}"
def row(label):
    rows = [line for line in table if f"| {label} |" in line]
    assert len(rows) == 1, (label, table)
    return [c.strip() for c in rows[0].strip("|").split("|")]
ivon = row("IVON, predictive (K = 4)")
adamw = row("AdamW")
for cells, s in ((ivon, summary["ivon"]["predictive"]), (adamw, summary["adamw"]["mean"])):
    assert cells[2] == cell(s["accuracy"], 4), (cells, s["accuracy"])
    assert cells[3] == cell(s["nll"], 4), (cells, s["nll"])
    assert cells[4] == cell(s["ece"], 4), (cells, s["ece"])
    assert cells[5] == cell(s["ood_auroc"], 3), (cells, s["ood_auroc"])
    assert cells[7] == "2", cells
ratio = summary["ivon"]["mean"]["s_epoch"]["mean"] / summary["adamw"]["mean"]["s_epoch"]["mean"]
assert ivon[6] == f"{ratio:.2f}×" and adamw[6] == "1.00×", (ivon[6], ratio)
PY

# The same runs as a vision task: one compare file per seed.
mkdir -p "$work/vision"
python3 - "$work/c.json" "$work/vision" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for seed in range(2):
    one = dict(d, optimizers={n: runs[seed] for n, runs in d["seeds"]["runs"].items()})
    del one["seeds"]
    json.dump(one, open(f"{sys.argv[2]}/lenet-compare-seed{seed}.json", "w"))
PY
python3 "$src/scripts/results_table.py" --vision "$work/vision" >"$work/vision.md" 2>&1 ||
  fail "results_table.py --vision failed"
grep -q "| LeNet-5 | IVON, predictive (K = 4) |" "$work/vision.md" || fail "no LeNet-5 IVON row"
grep -q "| LeNet-5 | \*published:\* deterministic" "$work/vision.md" || fail "no published row"
diff <(grep "IVON, predictive" "$work/demo.md" | cut -d'|' -f4-) \
  <(grep "IVON, predictive" "$work/vision.md" | cut -d'|' -f4-) >/dev/null ||
  fail "the vision table's IVON row differs from the demo table's for the same runs"

# A second protocol (vision_results.sh PROTOCOL=uncertainty-baselines: batch 256) given after the
# first: its task names its budget, its compare-cosine rows their schedule, and the published
# LeNet-5 rows stand once, under it.
mkdir -p "$work/protocol"
python3 - "$work/vision" "$work/protocol" <<'PY'
import json, sys
for seed in range(2):
    d = json.load(open(f"{sys.argv[1]}/lenet-compare-seed{seed}.json"))
    d["batch_size"] = 256
    json.dump(d, open(f"{sys.argv[2]}/lenet-compare-seed{seed}.json", "w"))
    d["schedule"] = "cosine"
    json.dump(d, open(f"{sys.argv[2]}/lenet-compare-cosine-seed{seed}.json", "w"))
PY
python3 "$src/scripts/results_table.py" --vision "$work/vision" --vision "$work/protocol" \
  >"$work/protocol.md" 2>&1 || fail "results_table.py with two --vision directories failed"
task="LeNet-5, 1 epochs, batch 256, constant rate, 600 training images"
grep -q "^| $task | IVON (cosine schedule), predictive (K = 4) |" "$work/protocol.md" ||
  fail "no cosine row under the second protocol's task"
[ "$(grep -c '\*published:\* deterministic' "$work/protocol.md")" = 1 ] ||
  fail "the published rows do not stand once"
grep -q "^| $task | \*published:\* deterministic" "$work/protocol.md" ||
  fail "the published rows are not under the last LeNet-5 table"

# The ResNet-20 deep ensembles kept in the tree (docs/results/vision): two output files and one
# recorded file (seed 0, whose output was not kept) make one three-seed row whose cells are the
# mean ± sd of the three ensembles' test metrics.
python3 "$src/scripts/results_table.py" --vision "$src/docs/results/vision" >"$work/kept.md" 2>&1 ||
  fail "results_table.py --vision docs/results/vision failed"
python3 - "$src/docs/results/vision" "$work/kept.md" <<'PY' || fail "the kept ensembles' row is wrong"
import json, pathlib, statistics, sys
kept = pathlib.Path(sys.argv[1])
runs = [json.load(open(f))["ensemble"] for f in sorted(kept.glob("resnet20-ensemble-seed*.json"))]
assert len(runs) == 3, len(runs)
assert all("recorded_from" in json.load(open(f)) for f in kept.glob("*.recorded.json"))
rows = [l for l in open(sys.argv[2]).read().splitlines() if "| deep ensemble, 5 AdamW |" in l]
assert len(rows) == 1, rows
cells = [c.strip() for c in rows[0].strip("|").split("|")]
for column, key in ((2, "accuracy"), (3, "nll"), (4, "ece")):
    values = [r["test"][key] for r in runs]
    want = f"{statistics.fmean(values):.4f} ± {statistics.stdev(values):.4f}"
    assert cells[column] == want, (key, cells[column], want)
assert cells[7] == "3", cells
PY

# LeNet-5 under uncertainty-baselines' protocol, kept in the tree (stops 42-43): AdamW's and IVON's
# (cosine schedule; IVON with ess 25000 and AdamW with weight decay 0.1, stop 43) rows are the
# mean ± sd of the three seeds' files, under the protocol's task; a tag's words name the setting
# (essN: "ess N", wdX: "weight decay X"; the search's one-seed files in search/ are not read).
python3 "$src/scripts/results_table.py" --vision "$src/docs/results/vision-uncertainty-baselines" \
  >"$work/ub.md" 2>&1 || fail "results_table.py --vision docs/results/vision-uncertainty-baselines failed"
python3 - "$src/docs/results/vision-uncertainty-baselines" "$work/ub.md" <<'PY' ||
import json, pathlib, statistics, sys
kept = pathlib.Path(sys.argv[1])
table = open(sys.argv[2]).read().splitlines()
task = "LeNet-5, 25 epochs, batch 256, constant rate, 50 000 training images"
for pattern, name, label, prediction in (
        ("lenet-compare-seed*.json", "adamw", "AdamW", "mean"),
        ("lenet-compare-cosine-seed*.json", "ivon", "IVON (cosine schedule), predictive (K = 32)",
         "predictive"),
        ("lenet-compare-cosine-ess25000-seed*.json", "ivon",
         "IVON (cosine schedule, ess 25000), predictive (K = 32)", "predictive"),
        ("lenet-compare-adamw-wd0.1-seed*.json", "adamw", "AdamW (weight decay 0.1)", "mean")):
    runs = [json.load(open(f))["optimizers"][name]["test"][prediction]
            for f in sorted(kept.glob(pattern))]
    assert len(runs) == 3, (pattern, len(runs))
    rows = [l for l in table if l.startswith(f"| {task} | {label} |")]
    assert len(rows) == 1, (label, table)
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    for column, key in ((2, "accuracy"), (3, "nll"), (4, "ece")):
        values = [r[key] for r in runs]
        want = f"{statistics.fmean(values):.4f} ± {statistics.stdev(values):.4f}"
        assert cells[column] == want, (label, key, cells[column], want)
    assert cells[7] == "3", cells
assert sum("*published:* deterministic" in l for l in table) == 1, table
PY
  fail "the kept uncertainty-baselines rows are wrong"

if python3 "$src/scripts/results_table.py" >/dev/null 2>"$work/none.err"; then
  fail "results_table.py without inputs exited 0"
fi
finish
