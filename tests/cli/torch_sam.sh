#!/usr/bin/env bash
# SAM and bSAM from the CLI: `blr compare --optimizers sam,bsam` trains both on a short
# Fashion-MNIST run; bSAM reports a posterior predictive, SAM (a point estimate) none.
# Usage: torch_sam.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_sam.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

"$blr" train --optimizer bsam --bsam-rho -1 >"$work/bad.out" 2>"$work/bad.err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--bsam-rho -1: exit status $status, expected 100–115"
grep -q "'rho'" "$work/bad.err" || fail "--bsam-rho -1: the error does not name rho"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi
"$blr" compare --optimizers sam,bsam --test-samples 4 --json "$work/compare.json" \
  --train-limit 2000 --test-limit 500 --batch-size 100 --threads 1 --hidden 64 --epochs 2 \
  >"$work/compare.out" 2>"$work/compare.err" ||
  { fail "compare sam,bsam: exit status $?"; tail -5 "$work/compare.err" >&2; }
python3 - "$work/compare.json" <<'PY' || fail "compare sam,bsam: JSON check failed (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
for name in ("sam", "bsam"):
    test = d["optimizers"][name]["test"]
    print(f"{name}: test accuracy {test['mean']['accuracy']:.3f}", file=sys.stderr)
    assert test["mean"]["accuracy"] > 0.5, name
assert d["optimizers"]["sam"]["test"]["predictive"]["samples"] == 0
assert d["optimizers"]["bsam"]["test"]["predictive"]["samples"] == 4
assert d["optimizers"]["bsam"]["test"]["predictive"]["accuracy"] > 0.5
PY
finish
echo "all SAM/bSAM CLI checks passed"
