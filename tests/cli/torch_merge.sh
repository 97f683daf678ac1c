#!/usr/bin/env bash
# `blr merge`: one fine-tuned model merged into a base comes back exactly (uncertainty and average:
# `blr eval` of the merge gives that model's numbers at the mean); two models merge by all three
# methods into checkpoints that `blr eval` scores; bad input (missing file, shape mismatch,
# unknown method, scale <= 0) is one sentence with a non-zero exit.
# Usage: torch_merge.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_merge.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

expect_fail no-base "needs --base" merge --models a.ckpt --out m.ckpt
expect_fail no-models "needs --models" merge --base a.ckpt --out m.ckpt
expect_fail unknown-method "Unknown merge method 'median'" merge --base a.ckpt --models b.ckpt \
  --method median --out m.ckpt
expect_fail zero-scale "Option 'scale' must be a positive" merge --base a.ckpt --models b.ckpt \
  --scale 0 --out m.ckpt
expect_fail negative-scale "Option 'scale' must be a positive" merge --base a.ckpt --models b.ckpt \
  --method task-arithmetic --scale -1 --out m.ckpt
expect_fail average-scale "not to average" merge --base a.ckpt --models b.ckpt --method average \
  --scale 2 --out m.ckpt
expect_fail average-delta0 "--delta0 applies to uncertainty merging only, not to average" merge \
  --base a.ckpt --models b.ckpt --method average --delta0 1 --out m.ckpt
expect_fail task-arithmetic-delta0 "not to task-arithmetic" merge --base a.ckpt --models b.ckpt \
  --method task-arithmetic --delta0 1 --out m.ckpt
expect_fail missing-file "nothing.ckpt" merge --base "$work/nothing.ckpt" --models b.ckpt \
  --out m.ckpt

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  finish
  exit 0
fi
common=(--train-limit 1000 --test-limit 500 --batch-size 100 --threads 1 --epochs 1 --quiet)
train() {  # NAME OPTIMIZER HIDDEN SEED
  "$blr" train --optimizer "$2" --hidden "$3" --seed "$4" "${common[@]}" --out "$work/$1" \
    >"$work/$1.out" 2>"$work/$1.err" || { fail "train $1: exit $?"; cat "$work/$1.err" >&2; }
}
train base ivon 32 1
train ivon ivon 32 2
train adamw adamw 32 3
train narrow adamw 16 4
expect_fail shape-mismatch "merging needs one architecture" merge --base base/ivon.ckpt \
  --models adamw/adamw.ckpt,narrow/adamw.ckpt --out m.ckpt --threads 1
expect_fail missing-model "nothing.ckpt" merge --base base/ivon.ckpt \
  --models adamw/adamw.ckpt,nothing.ckpt --out m.ckpt --threads 1

evaluate() {  # NAME CHECKPOINT
  "$blr" eval --checkpoint "$2" --threads 1 --quiet --json "$work/$1.json" >/dev/null \
    2>"$work/$1.err" || { fail "eval $1: exit $?"; cat "$work/$1.err" >&2; }
}
merge() {  # NAME ARGS...
  local name=$1
  shift
  "$blr" merge --base base/ivon.ckpt --threads 1 --out "$work/$name.ckpt" "$@" \
    >"$work/$name.out" 2>"$work/$name.err" || { fail "merge $name: exit $?"; cat "$work/$name.err" >&2; }
  evaluate "eval_$name" "$work/$name.ckpt"
}
merge one_unc --models adamw/adamw.ckpt
merge one_avg --models adamw/adamw.ckpt --method average
merge one_ivon --models ivon/ivon.ckpt
grep -q "IVON posterior precision" "$work/one_ivon.err" || fail "merge: no IVON curvature named"
grep -q "N·diag GGN over 1000 training examples" "$work/one_unc.err" ||
  fail "merge: no GGN curvature named for the AdamW model"
merge two_unc --models adamw/adamw.ckpt,ivon/ivon.ckpt
merge two_avg --models adamw/adamw.ckpt,ivon/ivon.ckpt --method average
merge two_ta --models adamw/adamw.ckpt,ivon/ivon.ckpt --method task-arithmetic --scale 0.3
evaluate adamw adamw/adamw.ckpt
evaluate ivon ivon/ivon.ckpt
grep -q "blr merge: average of 2 model(s) into the base base/ivon.ckpt written to" "$work/two_avg.err" ||
  { fail "merge --method average names settings it does not use"; cat "$work/two_avg.err" >&2; }
# a merged model is reported as merged, from which base optimizer (not as the fresh sgd it holds)
"$blr" eval --checkpoint "$work/two_unc.ckpt" --threads 1 >"$work/merged.out" 2>"$work/merged.err" ||
  fail "eval of a merge: exit $?"
grep -q "^merged " "$work/merged.out" || { fail "a merged model's row is not labelled merged"; cat "$work/merged.out" >&2; }
grep -q "merged: uncertainty merge of 2 model(s) into a base trained with ivon" "$work/merged.out" ||
  { fail "a merged model's origin is not stated"; cat "$work/merged.out" >&2; }
grep -q "(uncertainty merge of 2 model(s) into a base trained with ivon)" "$work/merged.err" ||
  { fail "eval's progress line does not say the model is merged"; cat "$work/merged.err" >&2; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['optimizers']; (e,)=d.values(); assert e['origin'].startswith('uncertainty merge'), e" \
  "$work/eval_two_unc.json" || fail "the JSON of a merged model has no origin"
python3 - "$work" <<'PY' || fail "merge: JSON checks failed (see above)"
import json, sys
w = sys.argv[1]
def mean(name):
    d = json.load(open(f"{w}/{name}.json"))["optimizers"]
    (entry,) = d.values()
    return entry["test"]["mean"]
adamw, ivon = mean("adamw"), mean("ivon")
for name, ref in [("eval_one_unc", adamw), ("eval_one_avg", adamw), ("eval_one_ivon", ivon)]:
    got = mean(name)
    assert got["accuracy"] == ref["accuracy"] and got["nll"] == ref["nll"], (name, got, ref)
accs = {n: mean(f"eval_{n}")["accuracy"] for n in ["two_unc", "two_avg", "two_ta"]}
nlls = {n: mean(f"eval_{n}")["nll"] for n in ["two_unc", "two_avg", "two_ta"]}
print("two-model merges:", accs, file=sys.stderr)
assert len(set(nlls.values())) == 3, nlls  # three methods, three different models
PY
finish
