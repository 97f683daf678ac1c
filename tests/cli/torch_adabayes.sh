#!/usr/bin/env bash
# AdaBayes and AdaBayes-FP from the CLI: `blr compare --optimizers adabayes,adabayes-fp` trains
# them on a short Fashion-MNIST run; AdaBayes reports a posterior predictive, AdaBayes-FP (a point
# estimate) none; bad options are one sentence naming the option.
# Usage: torch_adabayes.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_adabayes.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

"$blr" train --optimizer adabayes --adabayes-lr-sgd -1 >"$work/bad.out" 2>"$work/bad.err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--adabayes-lr-sgd -1: exit status $status, expected 100–115"
grep -q "'lr_sgd'" "$work/bad.err" || fail "--adabayes-lr-sgd -1: the error does not name lr_sgd"
"$blr" train --optimizer adabayes-fp --adabayes-fp-batch-size 0 >"$work/bad2.out" 2>"$work/bad2.err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--adabayes-fp-batch-size 0: exit status $status, expected 100–115"
grep -q "'batch_size'" "$work/bad2.err" || fail "--adabayes-fp-batch-size 0: the error does not name the option"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi
"$blr" compare --optimizers adabayes,adabayes-fp --test-samples 4 --json "$work/compare.json" \
  --adabayes-batch-size 100 --adabayes-fp-batch-size 100 \
  --train-limit 2000 --test-limit 500 --batch-size 100 --threads 1 --hidden 64 --epochs 2 \
  >"$work/compare.out" 2>"$work/compare.err" ||
  { fail "compare adabayes,adabayes-fp: exit status $?"; tail -5 "$work/compare.err" >&2; }
python3 - "$work/compare.json" <<'PY' || fail "compare adabayes,adabayes-fp: JSON check failed (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
for name in ("adabayes", "adabayes-fp"):
    test = d["optimizers"][name]["test"]
    print(f"{name}: test accuracy {test['mean']['accuracy']:.3f}", file=sys.stderr)
    assert test["mean"]["accuracy"] > 0.5, name
assert d["optimizers"]["adabayes-fp"]["test"]["predictive"]["samples"] == 0
assert d["optimizers"]["adabayes"]["test"]["predictive"]["samples"] == 4
assert d["optimizers"]["adabayes"]["test"]["predictive"]["accuracy"] > 0.5
PY
finish
echo "all AdaBayes CLI checks passed"
