#!/usr/bin/env bash
# Recipes on the command line (train/recipe.hpp): --recipe sets the options of the run's optimizer
# and the schedule, warm-up and gradient clipping; flags given override it key by key; the
# language model takes lm-pretrain unless --recipe none; compare applies a recipe per optimizer
# and states IVON against AdamW in words; continual and launch take it too; --verbose prints the
# posterior's diagnostics and the JSON history holds them; bad names are one sentence.
# Usage: torch_recipe.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_recipe.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

# check NAME PYTHON-EXPR: the JSON document NAME.json satisfies the expression in d.
check() {
  python3 -c "import json,sys; d=json.load(sys.stdin); assert $2, d" <"$work/$1.json" 2>"$work/py.err" ||
    { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}

expect_fail unknown "Unknown recipe 'image-smal' (did you mean 'image-small'?)" \
  train --recipe image-smal --epochs 1
expect_fail resume "--resume takes the training configuration from the checkpoint; drop --recipe" \
  train --resume "$work" --recipe image-small
expect_fail clip "Option 'grad-clip' must be a finite number" train --grad-clip -1 --epochs 1
expect_fail empty-recipe "Option '--recipe' needs a recipe's name, or none." train --recipe "" --epochs 1

# A language model on a small corpus: lm-pretrain by default, none on request, flags override.
python3 - "$work/corpus.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(40):
        f.write("the quick brown fox %d jumps over the lazy dog.\n%%\n" % (i % 5))
PY
lm=(--model gpt --data "text:$work/corpus.txt" --gpt-context 8 --gpt-layers 1 --gpt-heads 1
    --gpt-width 16 --epochs 2 --batch-size 16 --threads 1 --test-samples 2 --quiet)
"$blr" train --optimizer ivon --ivon-lr 500 "${lm[@]}" --json "$work/lm.json" >/dev/null 2>"$work/lm.err" ||
  { fail "gpt with the default recipe: exit status $?"; cat "$work/lm.err" >&2; }
check lm 'd["optimizers"]["ivon"]["options"]["ess"] == 1e10 and d["optimizers"]["ivon"]["options"]["clip_radius"] == 1e-3'
check lm 'd["optimizers"]["ivon"]["options"]["lr"] == 500 and d["optimizers"]["ivon"]["options"]["hess_init"] == 1e-3'
check lm 'd["config"]["recipe"] == "lm-pretrain" and d["config"]["schedule"] == "warmup-cosine" and d["config"]["grad_clip"] == 1.0'
check lm 'abs(d["config"]["warmup_epochs"] - 0.04) < 1e-12'
"$blr" train --optimizer ivon --recipe none --ivon-ess 1e4 "${lm[@]}" --json "$work/none.json" >/dev/null 2>&1 ||
  fail "gpt with --recipe none: exit status $?"
check none 'd["config"]["recipe"] == "" and d["config"]["grad_clip"] == 0 and d["optimizers"]["ivon"]["options"]["clip_radius"] == "inf"'
"$blr" train --optimizer adamw --schedule constant --grad-clip 0.5 "${lm[@]}" --json "$work/adamw.json" \
  >/dev/null 2>&1 || fail "gpt adamw with explicit schedule: exit status $?"
check adamw 'd["config"]["schedule"] == "constant" and d["config"]["grad_clip"] == 0.5 and d["optimizers"]["adamw"]["options"]["beta2"] == 0.95'
# an optimizer the recipe does not cover: its defaults, and a note says so
"$blr" train --optimizer sgd "${lm[@]}" --json "$work/sgd.json" >/dev/null 2>"$work/sgd.err" ||
  fail "gpt sgd: exit status $?"
grep -q "recipe 'lm-pretrain' has no settings for sgd" "$work/sgd.err" ||
  { fail "no note for an optimizer the recipe does not cover"; cat "$work/sgd.err" >&2; }

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without it ran." >&2
  finish
  exit 0
fi
tiny=(--train-limit 512 --test-limit 300 --batch-size 64 --threads 1 --hidden 32 --epochs 2)

# train: the recipe's options under the flags given, and --verbose's diagnostics
"$blr" train --recipe image-resnet --optimizer ivon --ivon-lr 0.05 --verbose --test-samples 2 \
  "${tiny[@]}" --json "$work/train.json" >"$work/train.out" 2>"$work/train.err" ||
  { fail "train --recipe: exit status $?"; cat "$work/train.err" >&2; }
check train 'd["optimizers"]["ivon"]["options"]["lr"] == 0.05 and d["optimizers"]["ivon"]["options"]["hess_init"] == 0.5'
check train 'd["optimizers"]["ivon"]["options"]["weight_decay"] == 2e-4 and d["optimizers"]["ivon"]["options"]["ess"] == 512'
check train 'd["config"]["recipe"] == "image-resnet" and d["config"]["schedule"] == "warmup-cosine" and abs(d["config"]["warmup_epochs"] - 0.05) < 1e-12'
check train 'all("posterior" in e and len(e["posterior"]["curvature_quantiles"]) == 7 for e in d["optimizers"]["ivon"]["history"])'
check train 'd["optimizers"]["ivon"]["history"][-1]["posterior"]["initial_curvature"] == 0.5'
grep -q "posterior: h 1/50/99 %" "$work/train.err" || { fail "--verbose: no posterior line"; cat "$work/train.err" >&2; }
# the predictive's draws show progress with an ETA, as training does (issue 30, item 6)
grep -q "ivon: predictive, sample 2/2" "$work/train.err" || { fail "no progress of the predictive"; cat "$work/train.err" >&2; }
# β₂ = 0.9999 over 16 steps: h can move at most 1 − β₂¹⁶ ≈ 0.16 % from h₀, and the run says so once
[ "$(grep -c 'the posterior has not moved from its initial value' "$work/train.err")" -eq 1 ] ||
  { fail "the stuck-posterior warning is not given exactly once"; cat "$work/train.err" >&2; }
check train 'sum(1 for e in d["optimizers"]["ivon"]["history"] if "warning" in e) == 1'

# compare: each optimizer its own entry of the recipe, and the comparison in words
"$blr" compare --recipe image-small --optimizers ivon,adamw --adamw-lr 2e-3 --test-samples 2 "${tiny[@]}" \
  --json "$work/compare.json" >"$work/compare.out" 2>"$work/compare.err" ||
  { fail "compare --recipe: exit status $?"; cat "$work/compare.err" >&2; }
check compare 'd["optimizers"]["adamw"]["options"]["lr"] == 2e-3 and d["optimizers"]["adamw"]["options"]["weight_decay"] == 1e-4'
check compare 'd["optimizers"]["ivon"]["options"]["beta2"] == 0.9999 and d["optimizers"]["ivon"]["options"]["hess_init"] == 0.2'
grep -qE "^ivon's predictive against adamw: NLL [0-9.]+ vs [0-9.]+ \((lower|higher|equal)\), ECE" "$work/compare.out" ||
  { fail "compare: no comparison sentence"; cat "$work/compare.out" >&2; }

# compare --seeds: every optimizer once per seed, means ± sd, the comparison with its seed count
expect_fail seeds "Option '--seeds' must lie in [1, 100]" compare --optimizers ivon --seeds 0 "${tiny[@]}"
"$blr" compare --recipe image-small --optimizers ivon,adamw --seeds 2 --test-samples 2 "${tiny[@]}" \
  --json "$work/seeds.json" >"$work/seeds.out" 2>"$work/seeds.err" ||
  { fail "compare --seeds: exit status $?"; cat "$work/seeds.err" >&2; }
check seeds 'd["seeds"]["count"] == 2 and [r["parameter_digest"] != "" for r in d["seeds"]["runs"]["ivon"]] == [True, True]'
check seeds 'len({r["parameter_digest"] for r in d["seeds"]["runs"]["adamw"]}) == 2'
check seeds 'abs(d["seeds"]["summary"]["ivon"]["predictive"]["nll"]["mean"] - sum(r["test"]["predictive"]["nll"] for r in d["seeds"]["runs"]["ivon"]) / 2) < 1e-12'
grep -qE "^ivon's predictive against adamw over 2 seeds: NLL [0-9.]+ vs [0-9.]+ \(lower in [012] of 2\)" "$work/seeds.out" ||
  { fail "compare --seeds: no comparison over the seeds"; cat "$work/seeds.out" >&2; }
# The second table (aECE, cwECE, AURC, OOD-AUPR, FPR95): its cells are the JSON summary's means.
python3 - "$work" <<'PY' 2>"$work/py.err" || { fail "compare --seeds: second table: $(tail -1 "$work/py.err")"; cat "$work/seeds.out" >&2; }
import json, sys
w = sys.argv[1]
lines = open(f"{w}/seeds.out").read().splitlines()
head = next(i for i, l in enumerate(lines) if l.split()[2:7] == ["aECE", "cwECE", "AURC", "OOD-AUPR", "FPR95"])
row = next(l for l in lines[head:] if l.startswith("ivon") and "predictive" in l)
cells = [c.split("±")[0].strip() for c in row.split(")", 1)[1].split("  ") if c.strip()]
s = json.load(open(f"{w}/seeds.json"))["seeds"]["summary"]["ivon"]["predictive"]
for cell, key in zip(cells, ["adaptive_ece", "classwise_ece", "aurc", "ood_aupr", "ood_fpr95"]):
    assert float(cell) == round(s[key]["mean"], 4), (key, cell, s[key]["mean"])
PY

# continual: the recipe's IVON options
"$blr" continual --recipe image-small --tasks split --task-count 2 --epochs 1 --hidden 16 \
  --train-limit 256 --test-limit 100 --threads 1 --quiet --json "$work/continual.json" >/dev/null 2>"$work/continual.err" ||
  { fail "continual --recipe: exit status $?"; cat "$work/continual.err" >&2; }
check continual 'd["config"]["optimizer_options"]["hess_init"] == 0.2 and d["config"]["optimizer_options"]["beta2"] == 0.9999'

# launch: the recipe reaches every rank through the command it runs
if "$blr" launch --nproc 2 -- train --recipe image-small --optimizer ivon --quiet "${tiny[@]}" \
     --test-samples 2 --json "$work/launch.json" >"$work/launch.out" 2>"$work/launch.err"; then
  check launch 'd["optimizers"]["ivon"]["options"]["beta2"] == 0.9999 and d["config"]["recipe"] == "image-small"'
elif grep -q "Gloo" "$work/launch.err"; then
  echo "SKIP: launch (no Gloo in this LibTorch)" >&2
else
  fail "launch -- train --recipe: failed"; cat "$work/launch.err" >&2
fi
finish
echo "all recipe checks passed"
