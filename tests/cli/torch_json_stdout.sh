#!/usr/bin/env bash
# `--json -` for train, compare, eval, optimizers and bench step: stdout is the JSON document alone (table and progress on
# stderr); and the OpenMP wait policy blr sets when the user has not: the JSON records the
# OMP_WAIT_POLICY the run had (PASSIVE when unset by the user, the user's value otherwise), and
# LibTorch is loaded once per command started through `blr` (the front sets the policy before it
# starts blr-torch; blr-torch started alone sets it and starts itself again: twice).
# Usage: torch_json_stdout.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_json_stdout.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
# check NAME PYTHON-EXPR: the JSON document on NAME.json satisfies the expression in d.
check() {
  python3 -c "import json,sys; d=json.load(sys.stdin); assert $2, d" <"$work/$1.json" 2>"$work/py.err" ||
    { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}

# commands without data: the optimizer reference and the step benchmark
"$blr" optimizers --json - >"$work/optimizers.json" 2>"$work/optimizers.err" || fail "optimizers: exit status $?"
check optimizers '"ivon" in [o["name"] for o in d["optimizers"]] and "lm-pretrain" in [r["name"] for r in d["recipes"]]'
grep -q -- "--ivon-lr" "$work/optimizers.err" || fail "optimizers: the listing is not on stderr"
"$blr" bench step --params 1000 --repeats 2 --threads 1 --json - >"$work/step.json" 2>"$work/step.err" ||
  { fail "bench step: exit status $?"; cat "$work/step.err" >&2; }
check step '"ivon" in d and "adamw" in d'
grep -q "ratio to AdamW" "$work/step.err" || fail "bench step: the table is not on stderr"

# loads ARGS...: how many times LibTorch is loaded while `ARGS...` runs (the loader's own count)
loads() {
  LD_DEBUG=files "$@" 2>&1 >/dev/null |
    grep -cE 'file=libtorch_cpu\.so[.0-9]* \[0\];  generating link map'
}
part="$(dirname "$blr")/blr-torch"
n=$(unset OMP_WAIT_POLICY; loads "$blr" train --epochs x)
[ "$n" = 1 ] || fail "blr train (policy unset): LibTorch loaded $n times, not once"
n=$(export OMP_WAIT_POLICY=ACTIVE; loads "$blr" train --epochs x)
[ "$n" = 1 ] || fail "blr train (policy ACTIVE): LibTorch loaded $n times, not once"
n=$(unset OMP_WAIT_POLICY; loads "$part" train --epochs x)
[ "$n" = 2 ] ||
  fail "blr-torch train (policy unset): LibTorch loaded $n times, not twice (set, then again)"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist); only the" \
       "checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi

tiny=(--train-limit 256 --test-limit 300 --batch-size 64 --threads 1 --hidden 32 --epochs 1)
cd "$work" || exit 1

# train, without --quiet: progress and the table must both stay off stdout
env -u OMP_WAIT_POLICY "$blr" train --optimizer ivon --test-samples 2 --out "$work/run" \
  --json - "${tiny[@]}" >"$work/train.json" 2>"$work/train.err" ||
  { fail "train: exit status $?"; cat "$work/train.err" >&2; }
check train 'd["command"] == "train" and "ivon" in d["optimizers"]'
check train 'd["omp_wait_policy"] == "PASSIVE"'
grep -q "predictive (K=2)" "$work/train.err" || fail "train: the table is not on stderr"
grep -q "epoch 1/1" "$work/train.err" || fail "train: the progress is not on stderr"
[ -e "$work/-" ] && fail "train: wrote a file named '-'"

# the user's own OMP_WAIT_POLICY is kept
OMP_WAIT_POLICY=ACTIVE "$blr" eval --checkpoint "$work/run/ivon.ckpt" --test-samples 2 --threads 1 \
  --json - >"$work/eval.json" 2>"$work/eval.err" || { fail "eval: exit status $?"; cat "$work/eval.err" >&2; }
check eval 'd["command"] == "eval" and d["omp_wait_policy"] == "ACTIVE"'
grep -q "predictive (K=2)" "$work/eval.err" || fail "eval: the table is not on stderr"

"$blr" compare --optimizers sgd,adamw --json - "${tiny[@]}" 2>"$work/compare.err" |
  python3 -m json.tool >"$work/compare.json" || fail "compare --json - | python3 -m json.tool failed"
check compare 'sorted(d["optimizers"]) == ["adamw", "sgd"]'
grep -q '^adamw ' "$work/compare.err" || fail "compare: the table is not on stderr"

finish
echo "all torch --json - checks passed"
