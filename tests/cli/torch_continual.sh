#!/usr/bin/env bash
# `blr continual`: two tiny tasks of each kind. IVON with the posterior as the next prior, AdamW
# fine-tuning and retraining write the accuracy matrix (row t has t entries in [0, 1]), average
# accuracy and forgetting consistent with it, and the heat map; the stdout table shows the same
# numbers; a fixed seed gives the same matrix twice; bad options are one sentence with a non-zero
# exit.
# Usage: torch_continual.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_continual.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

expect_fail split-count "between 1 and 5" continual --tasks split --task-count 6
expect_fail zero-count "task-count" continual --tasks permuted --task-count 0
expect_fail adamw-posterior "needs --optimizer ivon" continual --optimizer adamw --prior posterior
expect_fail retrain-prior "does not apply with --retrain" continual --retrain --prior initial
expect_fail wrong-optimizer-flag "uses --optimizer adamw" continual --optimizer adamw --ivon-lr 0.1
expect_fail zero-epochs "epochs" continual --epochs 0
expect_fail bad-ivon-value "ivon-beta2" continual --ivon-beta2 2
for bad in "--tasks rotated" "--optimizer vogn" "--prior uniform"; do
  # shellcheck disable=SC2086
  "$blr" continual $bad >"$work/out" 2>"$work/err"
  status=$?
  [ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "$bad: exit status $status, expected 100–115"
done

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  finish
  exit 0
fi
common=(--task-count 2 --train-limit 600 --test-limit 200 --batch-size 100 --hidden 32
        --threads 1 --quiet)
run() {
  local name=$1
  shift
  "$blr" continual "${common[@]}" "$@" --json "$work/$name.json" >"$work/$name.out" \
    2>"$work/$name.err" || { fail "$name: exit status $?"; cat "$work/$name.err" >&2; }
}
run split-ivon --tasks split --optimizer ivon --out "$work/split-ivon"
run split-ivon-again --tasks split --optimizer ivon
run split-adamw --tasks split --optimizer adamw
run split-retrain --tasks split --optimizer adamw --retrain
run permuted-ivon --tasks permuted --optimizer ivon --ivon-lr 0.05
run permuted-initial --tasks permuted --optimizer ivon --prior initial --ivon-lr 0.05
python3 - "$work" <<'PY' || fail "continual: JSON checks failed (see above)"
import json, math, sys
w = sys.argv[1]
def load(name):
    return json.load(open(f"{w}/{name}.json"))
for name in ["split-ivon", "split-adamw", "split-retrain", "permuted-ivon", "permuted-initial"]:
    d = load(name)
    a = d["accuracy"]
    assert d["command"] == "continual" and len(a) == 2, (name, d)
    assert [len(r) for r in a] == [1, 2], (name, a)
    assert all(0.0 <= x <= 1.0 for r in a for x in r), (name, a)
    for t, r in enumerate(a):
        assert abs(d["average_accuracy"][t] - sum(r) / len(r)) < 1e-12, (name, d)
    assert d["forgetting"][0] == 0.0
    assert abs(d["forgetting"][1] - (a[0][0] - a[1][0])) < 1e-12, (name, d)
    assert d["train_sizes"] == [600, 600] and d["test_sizes"] == [200, 200], (name, d)
    # the table on stdout shows the matrix: the last row's average, in percent
    out = open(f"{w}/{name}.out").read()
    assert f"{100 * d['average_accuracy'][1]:.2f}" in out, (name, out)
    print(f"{name}: {d['method']}: {a}", file=sys.stderr)
assert load("split-ivon")["method"] == "ivon (posterior as the next prior)"
assert load("split-adamw")["method"] == "adamw (fine-tuning)"
assert load("split-retrain")["config"]["retrain"] is True
assert load("permuted-initial")["config"]["prior"] == "initial"
assert load("split-ivon")["task_names"] == ["classes 0/1", "classes 2/3"]
assert load("permuted-ivon")["task_names"] == ["identity", "permutation 2"]
# a two-class task learnt for one epoch is well above chance (0.5) right after it is learnt
assert load("split-ivon")["accuracy"][0][0] > 0.7 and load("split-adamw")["accuracy"][1][1] > 0.7
assert load("split-ivon")["accuracy"] == load("split-ivon-again")["accuracy"], "same seed, other matrix"
# the prior is what differs between these two runs: the second task is learnt differently
assert load("permuted-ivon")["accuracy"] != load("permuted-initial")["accuracy"]
PY
[ -s "$work/split-ivon/continual.json" ] || fail "--out: no continual.json"
if command -v gnuplot >/dev/null; then
  [ -s "$work/split-ivon/continual.png" ] || fail "--out: no continual.png although gnuplot is installed"
fi
finish
