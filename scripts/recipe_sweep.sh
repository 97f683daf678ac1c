#!/usr/bin/env bash
# The validation sweep behind the image-small recipe (src/torch/train/recipe.cpp, docs/results.md
# "The demo's recipe"): IVON and AdamW on Fashion-MNIST, MLP 784-500-300-10, at the demo's budget.
#
# Selection is on a validation split, never on the test set: every configuration trains on 90 % of
# the training images (--validation 0.1, seeded by --seed 0) for EPOCHS epochs with a cosine
# schedule and is scored on the validation images — IVON by its posterior predictive (K = 16),
# AdamW at its mean — by the NLL, a proper scoring rule that rewards accuracy and calibration
# together. The table prints each configuration's validation accuracy, NLL and ECE, sorted by NLL
# within each optimizer.
#
# Usage: scripts/recipe_sweep.sh [BLR] [OUT] [EPOCHS] [FILTER]
#   (defaults: build/blr, recipe-sweep, 5, every configuration; FILTER: a grep -E pattern of names)
# Each configuration writes OUT/<name>.json; an existing file is reused (an interrupted sweep
# resumes).
set -euo pipefail
BLR=${1:-build/blr}
OUT=${2:-recipe-sweep}
EPOCHS=${3:-5}
FILTER=${4:-.}
mkdir -p "$OUT"
export OMP_WAIT_POLICY=PASSIVE

# name  optimizer  flags...
CONFIGS=(
  "ivon-lr0.1-h0.1-b0.99999 ivon --ivon-lr 0.1 --ivon-hess-init 0.1 --ivon-beta2 0.99999"
  "ivon-lr0.2-h0.1-b0.99999 ivon --ivon-lr 0.2 --ivon-hess-init 0.1 --ivon-beta2 0.99999"
  "ivon-lr0.5-h0.2-b0.99999 ivon --ivon-lr 0.5 --ivon-hess-init 0.2 --ivon-beta2 0.99999"
  "ivon-lr0.1-h0.1-b0.9995 ivon --ivon-lr 0.1 --ivon-hess-init 0.1 --ivon-beta2 0.9995"
  "ivon-lr0.2-h0.1-b0.9995 ivon --ivon-lr 0.2 --ivon-hess-init 0.1 --ivon-beta2 0.9995"
  "ivon-lr0.5-h0.1-b0.9995 ivon --ivon-lr 0.5 --ivon-hess-init 0.1 --ivon-beta2 0.9995"
  "ivon-lr0.2-h0.05-b0.9995 ivon --ivon-lr 0.2 --ivon-hess-init 0.05 --ivon-beta2 0.9995"
  "ivon-lr0.2-h0.2-b0.9995 ivon --ivon-lr 0.2 --ivon-hess-init 0.2 --ivon-beta2 0.9995"
  "ivon-lr0.2-h0.1-b0.999 ivon --ivon-lr 0.2 --ivon-hess-init 0.1 --ivon-beta2 0.999"
  # second round: larger steps, after the first showed IVON short of AdamW at lr ≤ 0.2
  "ivon-lr0.5-h0.2-b0.9999 ivon --ivon-lr 0.5 --ivon-hess-init 0.2 --ivon-beta2 0.9999"
  "ivon-lr0.5-h0.5-b0.99999 ivon --ivon-lr 0.5 --ivon-hess-init 0.5 --ivon-beta2 0.99999"
  "ivon-lr1-h0.2-b0.99999 ivon --ivon-lr 1.0 --ivon-hess-init 0.2 --ivon-beta2 0.99999"
  "ivon-lr1-h0.5-b0.99999 ivon --ivon-lr 1.0 --ivon-hess-init 0.5 --ivon-beta2 0.99999"
  "ivon-lr1-h0.2-b0.9999 ivon --ivon-lr 1.0 --ivon-hess-init 0.2 --ivon-beta2 0.9999"
  # third round, around the best of the second at 10 epochs
  "ivon-lr0.3-h0.2-b0.9999 ivon --ivon-lr 0.3 --ivon-hess-init 0.2 --ivon-beta2 0.9999"
  "ivon-lr0.5-h0.3-b0.9999 ivon --ivon-lr 0.5 --ivon-hess-init 0.3 --ivon-beta2 0.9999"
  "ivon-lr0.5-h0.2-b0.9999-wd5e-4 ivon --ivon-lr 0.5 --ivon-hess-init 0.2 --ivon-beta2 0.9999 --ivon-weight-decay 5e-4"
  "ivon-lr0.7-h0.2-b0.9999 ivon --ivon-lr 0.7 --ivon-hess-init 0.2 --ivon-beta2 0.9999"
  "adamw-lr3e-4 adamw --adamw-lr 3e-4"
  "adamw-lr1e-3 adamw --adamw-lr 1e-3"
  "adamw-lr3e-3 adamw --adamw-lr 3e-3"
)

for entry in "${CONFIGS[@]}"; do
  read -r name optimizer flags <<<"$entry"
  grep -qE -- "$FILTER" <<<"$name" || continue
  json="$OUT/$name.json"
  if [[ -s "$json" ]]; then
    echo "reusing $json"
    continue
  fi
  echo "== $name"
  # shellcheck disable=SC2086
  "$BLR" train --data fashion-mnist --model mlp --hidden 500,300 --epochs "$EPOCHS" \
    --batch-size 128 --seed 0 --validation 0.1 --recipe image-small --optimizer "$optimizer" \
    $flags --test-samples 16 --threads 1 --quiet --json "$json.tmp" >/dev/null
  mv "$json.tmp" "$json"
done

python3 - "$OUT" <<'PY'
import json, pathlib, sys
rows = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    doc = json.load(open(path))
    (name, run), = doc["optimizers"].items()
    mode = "predictive" if name != "adamw" else "mean"
    v, t = run["validation"][mode], run["test"][mode]
    rows.append((name, v["nll"], path.stem, v["accuracy"], v["ece"], t["accuracy"], t["nll"], t["ece"]))
print("validation (selection) and test (reported after the choice); IVON: predictive, AdamW: mean")
print(f"{'configuration':<28} {'val acc':>8} {'val NLL':>8} {'val ECE':>8} {'test acc':>8} {'test NLL':>8} {'test ECE':>8}")
for name, nll, stem, acc, ece, tacc, tnll, tece in sorted(rows):
    print(f"{stem:<28} {acc:>8.4f} {nll:>8.4f} {ece:>8.4f} {tacc:>8.4f} {tnll:>8.4f} {tece:>8.4f}")
PY
