#!/usr/bin/env bash
# Iterative fits of `blr infer` that do not converge are refused (issue 34, D3): exit 2, one
# sentence naming the cap and the option to change, no table of results on stdout, no --json file
# and no predictions; a fixed count (EM's --fixed-iterations) is not refused. And Poisson counts
# of about 150 and 22 000 reach the Laplace mode by the default damped Newton steps from w = 0
# (before: 100 undamped steps ended at an intercept of 56, reported with exit 0).
# Usage: infer_convergence.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_convergence.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_convergence.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

# Counts round(exp(b0 + 0.3 x1 - 0.2 x2)) on a fixed design (no random draws).
for b0 in 5 10; do
  python3 - "$work/pois$b0.csv" "$b0" <<'PY'
import math, sys
with open(sys.argv[1], "w") as f:
    f.write("x1,x2,c\n")
    for i in range(300):
        x1, x2 = math.sin(0.37 * i), math.cos(1.1 * i + 0.5)
        f.write(f"{x1!r},{x2!r},{round(math.exp(float(sys.argv[2]) + 0.3 * x1 - 0.2 * x2))}\n")
PY
done

# ---- D3: large counts converge by default ------------------------------------------------------
for b0 in 5 10; do
  run_infer "pois$b0" poisson --train "$work/pois$b0.csv" --label c
  python3 - "$work/pois$b0.json" "$b0" <<'PY' || fail "pois$b0: not at the mode"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["converged"] is True and d["iterations"] <= 25, (d["converged"], d["iterations"])
b0 = float(sys.argv[2])
# The mode of counts rounded from exp(b0 + 0.3 x1 - 0.2 x2): within 0.01 of the generating values.
for got, want in zip(d["mean"], (b0, 0.3, -0.2)):
    assert abs(got - want) < 0.01, (d["mean"], b0)
PY
done

# ---- unconverged fits are refused ---------------------------------------------------------------
# refused NAME OPTION-TEXT ARGS...: `blr infer ARGS --json J` exits 2, stderr is one line holding
# OPTION-TEXT and "without converging", stdout has no table, and J (and any --predict-out) is absent.
refused() {
  local name=$1 text=$2
  shift 2
  rm -f "$work/$name.json" "$work/$name.pred.csv"
  "$blr" infer "$@" --json "$work/$name.json" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit status $rc, expected 2"
  grep -qF -- "without converging" "$work/$name.err" || { fail "$name: stderr lacks the refusal:"; cat "$work/$name.err" >&2; }
  grep -qF -- "$text" "$work/$name.err" || { fail "$name: stderr lacks '$text':"; cat "$work/$name.err" >&2; }
  [ "$(wc -l <"$work/$name.err")" -eq 1 ] || { fail "$name: stderr is not one line:"; cat "$work/$name.err" >&2; }
  grep -qiE "posterior|^component|filtered|latent f" "$work/$name.out" &&
    { fail "$name: results were printed:"; cat "$work/$name.out" >&2; }
  [ -e "$work/$name.json" ] && fail "$name: the JSON file was written"
  [ -e "$work/$name.pred.csv" ] && fail "$name: the predictions were written"
}

pima=(--train "$data/pima_train.csv" --label type --positive Yes)
refused pois-capped "--max-iterations" poisson --train "$work/pois5.csv" --label c --max-iterations 2 \
  --predict "$work/pois5.csv" --predict-out "$work/pois-capped.pred.csv"
refused logistic-laplace "--max-iterations" logistic "${pima[@]}" --max-iterations 1
refused logistic-cvi "--max-iterations" logistic "${pima[@]}" --method cvi --max-iterations 2
refused linreg-evidence "--max-iterations" linreg --train "$data/pima_train.csv" --label bmi \
  --features skin,glu,bp --optimize-evidence --max-iterations 1
refused gpc-laplace "--max-iterations" gpc --train "$data/synth_train.csv" --label yc --method laplace \
  --max-iterations 1
refused gpc-cvi "--max-iterations" gpc --train "$data/synth_train.csv" --label yc --max-iterations 2
refused gmm-em "--max-iterations" gmm --data "$data/faithful.csv" --components 3 --seed 4 --max-iterations 2
refused gmm-vmp "--max-iterations" gmm --data "$data/faithful.csv" --components 4 --method vmp \
  --max-iterations 2
refused kalman-fit "--max-evaluations" kalman --data "$data/nile.csv" --column volume --fit --max-evaluations 5
# A fixed count is the stopping rule, not a cap.
run_infer em-fixed gmm --data "$data/faithful.csv" --components 3 --seed 4 --fixed-iterations 2
grep -q "2 iterations (fixed)" "$work/em-fixed.out" || fail "em-fixed: the fixed run was not reported"

finish
echo "all convergence checks passed"
