#!/usr/bin/env bash
# The calibration baselines on the command line: --temperature-scaling on train and eval (T fitted
# on the validation split, accuracy unchanged, refused without a validation split) and
# `blr ensemble` (M members from consecutive seeds, the averaged predictive scored, JSON).
# Usage: torch_calibration.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_calibration.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1
data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed." >&2
  exit 0
fi
check() {
  python3 -c "import json,sys; d=json.load(sys.stdin); assert $2, d" <"$work/$1.json" 2>"$work/py.err" ||
    { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}
tiny=(--train-limit 600 --test-limit 300 --batch-size 64 --threads 1 --hidden 16 --epochs 2 --quiet)

expect_fail no-validation "--temperature-scaling fits its temperature on the validation split" \
  train --temperature-scaling "${tiny[@]}"
expect_fail members "Option '--members' must lie in [1, 100]" ensemble --members 0 "${tiny[@]}"

"$blr" train --optimizer ivon --validation 0.2 --temperature-scaling --test-samples 4 "${tiny[@]}" \
  --out "$work/run" --json "$work/train.json" >"$work/train.out" 2>"$work/train.err" ||
  { fail "train --temperature-scaling: exit status $?"; cat "$work/train.err" >&2; }
check train 'all(d["optimizers"]["ivon"]["test"]["temperature_scaled"][k]["temperature"] > 0 for k in ("mean", "predictive"))'
check train 'd["optimizers"]["ivon"]["test"]["temperature_scaled"]["mean"]["accuracy"] == d["optimizers"]["ivon"]["test"]["mean"]["accuracy"]'
check train 'd["optimizers"]["ivon"]["test"]["temperature_scaled"]["mean"]["validation_nll_after"] <= d["optimizers"]["ivon"]["test"]["temperature_scaled"]["mean"]["validation_nll_before"]'
grep -q "mean, T=" "$work/train.out" || { fail "train: no temperature-scaled row"; cat "$work/train.out" >&2; }
# eval of the same checkpoint scales alike; a run without a validation split is refused
"$blr" eval --checkpoint "$work/run/ivon.ckpt" --temperature-scaling --threads 1 --quiet \
  --json "$work/eval.json" >/dev/null 2>"$work/eval.err" || { fail "eval --temperature-scaling: exit $?"; cat "$work/eval.err" >&2; }
check eval '"temperature_scaled" in d["optimizers"]["ivon"]["test"]'
"$blr" train --optimizer adamw "${tiny[@]}" --out "$work/plain" >/dev/null 2>&1 || fail "plain train failed"
expect_fail eval-no-validation "the run of" eval --checkpoint "$work/plain/adamw.ckpt" --temperature-scaling

"$blr" ensemble --members 3 --validation 0.2 --temperature-scaling "${tiny[@]}" \
  --json "$work/ensemble.json" >"$work/ensemble.out" 2>"$work/ensemble.err" ||
  { fail "ensemble: exit status $?"; cat "$work/ensemble.err" >&2; }
check ensemble 'd["command"] == "ensemble" and d["optimizer"] == "adamw" and len(d["members"]) == 3'
check ensemble 'd["ensemble"]["members"] == 3 and "temperature" in d["ensemble"]["temperature_scaled"]'
check ensemble 'len({m["parameter_digest"] for m in d["members"]}) == 3'
check ensemble 'd["ensemble"]["temperature_scaled"]["accuracy"] == d["ensemble"]["test"]["accuracy"]'
grep -q "^ensemble (M=3)" "$work/ensemble.out" || { fail "ensemble: no ensemble row"; cat "$work/ensemble.out" >&2; }
# The second table: the ensemble's aECE, cwECE, AURC, OOD-AUPR and FPR95 as in its JSON.
python3 - "$work" <<'PY' 2>"$work/py.err" || { fail "ensemble: second table: $(tail -1 "$work/py.err")"; cat "$work/ensemble.out" >&2; }
import json, sys
w = sys.argv[1]
lines = open(f"{w}/ensemble.out").read().splitlines()
head = next(i for i, l in enumerate(lines) if l.split()[1:6] == ["aECE", "cwECE", "AURC", "OOD-AUPR", "FPR95"])
cells = lines[head + 1].split()[2:]
e = json.load(open(f"{w}/ensemble.json"))["ensemble"]["test"]
assert lines[head + 1].startswith("ensemble (M=3)")
for cell, key in zip(cells, ["adaptive_ece", "classwise_ece", "aurc"]):
    assert float(cell) == round(e[key], 4), (key, cell, e[key])
PY
finish
echo "all calibration-baseline checks passed"
