#!/usr/bin/env bash
# `blr sensitivity --checkpoint C` (network sensitivities): the front hands it to the torch part;
# IVON, AdamW and Laplace checkpoints give one score per training example, a LOO estimate above
# the in-sample NLL, a top list sorted by score, the retraining check and the pictures;
# `blr train --sensitivity-every` records the LOO estimate per epoch and draws loo.png; bad input
# (no checkpoint, SGD without a posterior, --retrain 1, retraining flags without --retrain) is one
# sentence with a non-zero exit.
# Usage: torch_sensitivity.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_sensitivity.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

expect_fail missing-file "nothing.ckpt" sensitivity --checkpoint "$work/nothing.ckpt"
expect_fail retrain-one "must be 0 (no check) or at least 2" sensitivity --checkpoint a.ckpt \
  --retrain 1
expect_fail retrain-flag "applies to the retraining check" sensitivity --checkpoint a.ckpt \
  --retrain-steps 5
expect_fail top-zero "'--top' must be a positive" sensitivity --checkpoint a.ckpt --top 0
# Without --checkpoint it is the GLM command, which needs a model name.
expect_fail glm "model" sensitivity --top 3

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  finish
  exit 0
fi
common=(--train-limit 300 --test-limit 200 --batch-size 50 --threads 1 --hidden 16 --quiet)
train() {  # NAME OPTIMIZER EPOCHS EXTRA...
  local name=$1 opt=$2 epochs=$3
  shift 3
  "$blr" train --optimizer "$opt" --epochs "$epochs" "${common[@]}" --out "$work/$name" "$@" \
    >"$work/$name.out" 2>"$work/$name.err" || { fail "train $name: exit $?"; cat "$work/$name.err" >&2; }
}
train ivon ivon 3 --sensitivity-every 1 --json "$work/ivon-train.json"
train adamw adamw 1 --adamw-weight-decay 0.01
train sgd sgd 1
expect_fail sgd-no-posterior "fit a Laplace posterior" sensitivity --checkpoint sgd/sgd.ckpt \
  --threads 1
expect_fail sgd-train "fit a Laplace posterior" train --optimizer sgd --epochs 1 \
  "${common[@]}" --sensitivity-every 1
"$blr" laplace --checkpoint sgd/sgd.ckpt --prior-precision 10 --save "$work/laplace.ckpt" \
  --threads 1 --quiet >/dev/null 2>"$work/laplace.err" || fail "laplace: exit $?"

sens() {  # NAME CHECKPOINT EXTRA...
  local name=$1 ckpt=$2
  shift 2
  "$blr" sensitivity --checkpoint "$ckpt" --threads 1 --quiet --top 5 --json "$work/$name.json" \
    "$@" >"$work/$name.out" 2>"$work/$name.err" ||
    { fail "sensitivity $name: exit $?"; cat "$work/$name.err" >&2; }
}
sens s_ivon ivon/ivon.ckpt --out "$work/pics" --retrain 4 --retrain-steps 5 --retrain-classes
sens s_adamw adamw/adamw.ckpt
sens s_laplace laplace.ckpt
grep -q "most influential" "$work/s_ivon.out" || fail "sensitivity: no table"
for png in influence validation; do
  [ -s "$work/pics/$png.png" ] || fail "sensitivity: $png.png missing"
done
[ -s "$work/ivon/loo.png" ] || fail "train --sensitivity-every: loo.png missing"
python3 - "$work" <<'PY' || fail "sensitivity: JSON checks failed (see above)"
import json, math, sys
w = sys.argv[1]
for name, source in [("s_ivon", "IVON"), ("s_adamw", "AdamW"), ("s_laplace", "Laplace")]:
    j = json.load(open(f"{w}/{name}.json"))
    assert source in j["source"], (name, j["source"])
    n, k = j["examples"], j["classes"]
    assert n == 300 and k == 10, (n, k)
    for key in ("error", "variance", "deviation"):
        assert len(j[key]) == n and all(len(r) == k for r in j[key]), key
    assert len(j["score"]) == n and min(j["score"]) >= 0
    assert all(min(r) >= 0 for r in j["variance"])
    # e sums to zero over the classes (p sums to one, the one-hot to one)
    assert all(abs(sum(r)) < 1e-9 for r in j["error"])
    # deviation = variance * error
    for dv, v, e in zip(j["deviation"][:20], j["variance"][:20], j["error"][:20]):
        assert all(abs(a - b * c) <= 1e-12 * (1 + abs(a)) for a, b, c in zip(dv, v, e))
    top = [t["score"] for t in j["top"]]
    assert top == sorted(top, reverse=True) and top[0] == max(j["score"]), name
    assert j["loo"]["nll"] > j["in_sample"]["nll"], (name, j["loo"], j["in_sample"])
    assert abs(sum(j["class_score"]) - sum(j["score"])) < 1e-9 * sum(j["score"])
v = json.load(open(f"{w}/s_ivon.json"))["validation"]
assert len(v["removed"]) == 4 and len(set(v["removed"])) == 4
assert all(t >= 0 for t in v["true"]) and -1 <= v["score_correlation"] <= 1
c = json.load(open(f"{w}/s_ivon.json"))["class_validation"]
assert sorted(c["removed"]) == list(range(10))
t = json.load(open(f"{w}/ivon-train.json"))["sensitivity"]
assert [e["epoch"] for e in t["epochs"]] == [1, 2, 3], t
assert all(e["loo_nll"] > e["train_nll"] and len(e["top"]) == 10 for e in t["epochs"])
PY
finish
