#!/usr/bin/env bash
# SAM, bSAM and MC dropout from the CLI: `blr compare --optimizers sam,bsam,mc-dropout` trains
# them on a short Fashion-MNIST run; bSAM and MC dropout report a posterior predictive, SAM (a point
# estimate) none; bad options are one sentence naming the option.
# Usage: torch_sam_dropout.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_sam_dropout.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

"$blr" train --optimizer bsam --bsam-rho -1 >"$work/bad.out" 2>"$work/bad.err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--bsam-rho -1: exit status $status, expected 100–115"
grep -q "'rho'" "$work/bad.err" || fail "--bsam-rho -1: the error does not name rho"
"$blr" train --optimizer mc-dropout --mc-dropout-keep-probability 0 >"$work/bad2.out" 2>"$work/bad2.err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--mc-dropout-keep-probability 0: exit status $status, expected 100–115"
grep -q "'keep_probability'" "$work/bad2.err" || fail "--mc-dropout-keep-probability 0: the error does not name the option"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi
"$blr" compare --optimizers sam,bsam,mc-dropout --test-samples 4 --json "$work/compare.json" \
  --train-limit 2000 --test-limit 500 --batch-size 100 --threads 1 --hidden 64 --epochs 2 \
  >"$work/compare.out" 2>"$work/compare.err" ||
  { fail "compare sam,bsam,mc-dropout: exit status $?"; tail -5 "$work/compare.err" >&2; }
python3 - "$work/compare.json" <<'PY' || fail "compare sam,bsam,mc-dropout: JSON check failed (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
for name in ("sam", "bsam", "mc-dropout"):
    test = d["optimizers"][name]["test"]
    print(f"{name}: test accuracy {test['mean']['accuracy']:.3f}", file=sys.stderr)
    assert test["mean"]["accuracy"] > 0.5, name
assert d["optimizers"]["sam"]["test"]["predictive"]["samples"] == 0
assert d["optimizers"]["bsam"]["test"]["predictive"]["samples"] == 4
assert d["optimizers"]["bsam"]["test"]["predictive"]["accuracy"] > 0.5
assert d["optimizers"]["mc-dropout"]["test"]["predictive"]["samples"] == 4
assert d["optimizers"]["mc-dropout"]["test"]["predictive"]["accuracy"] > 0.5
PY
finish
echo "all SAM, bSAM and MC-dropout CLI checks passed"
