#!/usr/bin/env bash
# Credible intervals and posterior correlations of `blr infer` (issue 14, item 4): every
# coefficient has `lower`/`upper` at `--level` (default 0.95) in the JSON and the table, checked
# against formulas recomputed here from the JSON's own mean, sd and posterior parameters:
# Gaussian m ± z·sd (z from Python's NormalDist, Wichura's AS241, ~1e-16 relative), Beta and Gamma
# in closed form where they have one (Beta(1, b): 1 − (1 − p)^{1/b}; Gamma(1, rate): −log(1 − p)/rate).
# Tolerance 1e-12 relative: a handful of roundings on each side (~1e-15) with a wide margin.
# Usage: infer_intervals.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_intervals.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_intervals.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(infer)

# check NAME PYTHON: runs the Python snippet with d = the JSON of NAME; an AssertionError fails.
check() {
  python3 - "$work/$1.json" "$2" <<'PY' || fail "$1: $2"
import json, math, sys
from statistics import NormalDist
d = json.load(open(sys.argv[1]))
def z(level): return NormalDist().inv_cdf((1 + level) / 2)
def close(a, b, rel=1e-12): return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
def gaussian_ok(d):
    zz = z(d["level"])
    for m, s, lo, hi in zip(d["mean"], d["sd"], d["lower"], d["upper"]):
        assert close(lo, m - zz * s) and close(hi, m + zz * s), (m, s, lo, hi)
    return True
def correlation_ok(d):
    c, r = d["covariance"], d["correlation"]
    for i in range(len(c)):
        for j in range(len(c)):
            assert close(r[i][j], c[i][j] / math.sqrt(c[i][i] * c[j][j])), (i, j)
    return True
exec(sys.argv[2])
PY
}

pima=(--train "$data/pima_train.csv" --standardize)

# ---- Gaussian posteriors: linreg exact, logistic Laplace and CVI (full, diagonal) -------------
run_infer linreg linreg "${pima[@]}" --label bmi --features skin,glu,bp --optimize-evidence
check linreg 'assert d["level"] == 0.95 and gaussian_ok(d) and correlation_ok(d)'
grep -q "2.5%.*97.5%" "$work/linreg.out" || fail "linreg: the table lacks the 2.5% and 97.5% columns"
run_infer laplace logistic "${pima[@]}" --label type --positive Yes
check laplace 'assert gaussian_ok(d) and correlation_ok(d) and len(d["lower"]) == len(d["features"]) == 8'
run_infer laplace90 logistic "${pima[@]}" --label type --positive Yes --level 0.9
check laplace90 'assert d["level"] == 0.9 and gaussian_ok(d)'
grep -q "5%.*95%" "$work/laplace90.out" || fail "laplace90: the table lacks the 5% and 95% columns"
run_infer diag logistic "${pima[@]}" --label type --positive Yes --method cvi --family gaussian-diag
# mean field: the correlation is the identity
check diag 'assert gaussian_ok(d) and all(d["correlation"][i][j] == (1.0 if i == j else 0.0) for i in range(8) for j in range(8))'

# ---- a mixture posterior: exact quantiles of each coefficient's mixture marginal -------------
run_infer mix logistic "${pima[@]}" --label type --positive Yes --method cvi --family mixture:2 --iterations 100 --seed 1
check mix '
w, ms, cs = d["weights"], d["means"], d["covariances"]
for j, (lo, hi) in enumerate(zip(d["lower"], d["upper"])):
    F = lambda x: sum(wk * NormalDist(m[j], math.sqrt(c[j][j])).cdf(x) for wk, m, c in zip(w, ms, cs))
    assert abs(F(lo) - 0.025) < 1e-9 and abs(F(hi) - 0.975) < 1e-9, (j, F(lo), F(hi))
assert correlation_ok(d)'

# ---- conjugate: exact Beta, Gamma, Student t and Dirichlet quantiles --------------------------
printf 'y\n0\n0\n0\n0\n0\n0\n0\n0\n0\n' >"$work/zeros.csv"
run_infer beta conjugate --data "$work/zeros.csv" --column y --likelihood bernoulli --prior 1,1
# Beta(1, 10): F(x) = 1 − (1 − x)^10
check beta 'assert close(d["lower"][0], 1 - 0.975 ** 0.1) and close(d["upper"][0], 1 - 0.025 ** 0.1), d'
run_infer gamma conjugate --data "$work/zeros.csv" --column y --likelihood poisson --prior 1,2
# Gamma(1, rate 11): exponential
check gamma 'assert close(d["lower"][0], -math.log(0.975) / 11) and close(d["upper"][0], -math.log(0.025) / 11), d'
run_infer beta-pima conjugate --data "$data/pima_train.csv" --column type --likelihood bernoulli --positive Yes --prior 2,2
check beta-pima 'assert d["lower"][0] < d["mean"][0] < d["upper"][0] and 0.27 < d["lower"][0] < 0.29 and 0.40 < d["upper"][0] < 0.42, d'
run_infer ng conjugate --data "$data/nile.csv" --column volume --likelihood normal --prior 900,0.001,1,10000
# μ: Student t around the posterior μ (symmetric); τ: Gamma (right-skewed: mean − lower < upper − mean)
check ng '
p = d["posterior"]
assert close(d["upper"][0] - p["mu"], p["mu"] - d["lower"][0])
half = d["upper"][0] - p["mu"]
scale = math.sqrt(p["beta"] / (p["alpha"] * p["kappa"]))
assert 1.96 * scale < half < 2.0 * scale, (half, scale)   # t with 2α = 102 dof: 1.9835
assert d["mean"][1] - d["lower"][1] < d["upper"][1] - d["mean"][1]
assert d["correlation"] == [[1.0, 0.0], [0.0, 1.0]]'
run_infer dirichlet conjugate --data "$data/pima_train.csv" --column type --likelihood categorical
check dirichlet '
a = d["posterior"]["alpha"]; a0 = sum(a)
assert close(d["correlation"][0][1], -math.sqrt(a[0] * a[1] / ((a0 - a[0]) * (a0 - a[1]))))
assert all(l < m < u for l, m, u in zip(d["lower"], d["mean"], d["upper"]))'

# ---- Kalman: each state's interval -----------------------------------------------------------
run_infer kalman kalman --data "$data/nile.csv" --column volume --obs-var 15099 --state-var 1469.1
check kalman '
zz = z(0.95)
for m, v, lo, hi in zip(d["smoothed_mean"], d["smoothed_var"], d["smoothed_lower"], d["smoothed_upper"]):
    assert close(lo, m - zz * math.sqrt(v)) and close(hi, m + zz * math.sqrt(v))
for m, v, lo in zip(d["filtered_mean"], d["filtered_var"], d["filtered_lower"]):
    assert close(lo, m - zz * math.sqrt(v))'

# ---- GP latent values -------------------------------------------------------------------------
run_infer gpr gpr --train "$data/faithful.csv" --label waiting --lengthscale 1.3 --variance 150 --noise-variance 32
check gpr 'assert gaussian_ok(d)'

# ---- bad levels ---------------------------------------------------------------------------------
for level in 0 1 95 -0.5 nan; do
  expect_fail "level-$level" "Option '--level' must lie strictly between 0 and 1" \
    logistic "${pima[@]}" --label type --positive Yes --level "$level"
done
# Issue 34, D19: a level inside (0, 1) whose upper tail rounds to 1 (Boost's "Overflow Error")
expect_fail level-near-1 "is so close to 1 that the upper tail" \
  logistic "${pima[@]}" --label type --positive Yes --level 0.9999999999999999

finish
echo "all blr infer interval checks passed"
