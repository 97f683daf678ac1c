#!/usr/bin/env bash
# Fine-tuning on one task of a class split: `blr train --classes C --init BASE.ckpt` keeps exactly
# the examples of those classes (counted here from the label file itself) and starts from the
# base run's parameters with a fresh optimizer; `blr eval --classes C` scores one task's test set;
# a run resumed from such a checkpoint does not start from BASE again. Bad input (a class the data
# does not have, a repeated class, another model, --classes on regression) is one sentence.
# Usage: torch_finetune.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_finetune.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed." >&2
  exit 0
fi
check() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$work/$1.json" \
    2>"$work/py.err" || { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}
# How many of the first N test labels lie in a set of classes (the IDX label file read directly).
count_labels() {  # N CLASSES
  python3 -c '
import gzip, sys
n, classes = int(sys.argv[2]), {int(c) for c in sys.argv[3].split(",")}
labels = gzip.open(sys.argv[1]).read()[8:8 + n]
print(sum(1 for b in labels if b in classes))' "$data_dir/t10k-labels-idx1-ubyte.gz" "$1" "$2"
}
common=(--train-limit 2000 --test-limit 600 --batch-size 100 --hidden 32 --threads 1 --quiet)

"$blr" train --optimizer adamw --epochs 3 --out "$work/base" --json "$work/base.json" \
  "${common[@]}" >/dev/null 2>"$work/err" || { fail "base: exit $?"; cat "$work/err" >&2; }
check base 'd["optimizers"]["adamw"]["test"]["mean"]["count"] == 600'

# task A = classes 0-4 from the base; task A from scratch for comparison
"$blr" train --optimizer ivon --epochs 1 --classes 0,1,2,3,4 --init "$work/base/adamw.ckpt" \
  --out "$work/a" --json "$work/a.json" "${common[@]}" >/dev/null 2>"$work/err" ||
  { fail "fine-tune: exit $?"; cat "$work/err" >&2; }
"$blr" train --optimizer ivon --epochs 1 --classes 0,1,2,3,4 --json "$work/scratch.json" \
  "${common[@]}" >/dev/null 2>"$work/err" || { fail "scratch: exit $?"; cat "$work/err" >&2; }
expected=$(count_labels 600 0,1,2,3,4)
check a "d['optimizers']['ivon']['test']['mean']['count'] == $expected"
# the fine-tuned run starts where the base ended: its first loss is the base's level, far below
# the ln 10 = 2.30 of a fresh network (and below the run from scratch)
check a "d['optimizers']['ivon']['initial_loss'] < 1.2"
check scratch "d['optimizers']['ivon']['initial_loss'] > 1.8"
python3 -c '
import json, sys
a, s = (json.load(open(f))["optimizers"]["ivon"]["test"]["mean"]["accuracy"] for f in sys.argv[1:])
assert a > s, (a, s)' "$work/a.json" "$work/scratch.json" || fail "fine-tuning is not ahead of training from scratch"

# eval of the base on task B's test set only
"$blr" eval --checkpoint "$work/base/adamw.ckpt" --classes 5,6,7,8,9 --json "$work/evb.json" \
  --threads 1 --quiet >/dev/null 2>"$work/err" || { fail "eval --classes: exit $?"; cat "$work/err" >&2; }
check evb "d['optimizers']['adamw']['test']['mean']['count'] == $(count_labels 600 5,6,7,8,9)"
# a task A model scored on task B (its own training set stays classes 0-4)
"$blr" eval --checkpoint "$work/a/ivon.ckpt" --classes 5,6,7,8,9 --json "$work/evab.json" \
  --threads 1 --quiet >/dev/null 2>"$work/err" || { fail "eval across tasks: exit $?"; cat "$work/err" >&2; }
check evab "d['optimizers']['ivon']['test']['mean']['count'] == $(count_labels 600 5,6,7,8,9)"

# a resumed fine-tuning run continues its own state (the base may be gone)
mv "$work/base" "$work/base-moved"
"$blr" train --resume "$work/a/ivon.ckpt" --epochs 2 --json "$work/a2.json" --threads 1 --quiet \
  >/dev/null 2>"$work/err" || { fail "resume of a fine-tuned run: exit $?"; cat "$work/err" >&2; }
check a2 "len(d['optimizers']['ivon']['history']) == 2"
mv "$work/base-moved" "$work/base"

expect_fail classes-out-of-range "names class 12, but 'fashion-mnist' has classes 0 to 9" \
  train --classes 3,12 --epochs 1 "${common[@]}"
expect_fail classes-twice "names class 3 twice" train --classes 3,3 --epochs 1 "${common[@]}"
expect_fail classes-negative "which are >= 0" train --classes -1 --epochs 1 "${common[@]}"
expect_fail init-other-model "holds the model 'mlp 784-32-10', but this run builds 'mlp 784-16-10'" \
  train --init "$work/base/adamw.ckpt" --epochs 1 --train-limit 200 --hidden 16 --threads 1 --quiet
expect_fail init-missing "nothing.ckpt" train --init "$work/nothing.ckpt" --epochs 1 "${common[@]}"
printf 'x1,y\n1,2\n2,3\n3,5\n4,4\n5,7\n' >"$work/reg.csv"
expect_fail classes-regression "does not apply to regression" \
  train --data "$work/reg.csv" --task regression --classes 0 --epochs 1 --threads 1 --quiet
finish
