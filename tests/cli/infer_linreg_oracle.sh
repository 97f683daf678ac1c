#!/usr/bin/env bash
# `blr infer linreg` estimates the noise by default (issue 31, deliverable 3): its exact
# Normal–Gamma posterior under Jeffreys' p(τ) ∝ 1/τ against ordinary least squares computed here
# by NumPy (numpy.linalg.lstsq, an SVD: none of blr's code), and the intercept's weak prior.
#
# With prior precisions δ → 0 the posterior of each coefficient is a Student t with ν = N degrees
# of freedom, location → the OLS estimate, and variance ν/(ν − 2)·(b_N/a_N)[Λ_N⁻¹]_jj →
# RSS/(N − 2)·[(XᵀX)⁻¹]_jj, i.e. OLS's squared standard error times (N − p)/(N − 2). The
# tolerance is derived from the data, not chosen: for Λ_N = A + D (A = XᵀX, D = diag(δ)),
#   ‖Λ_N⁻¹ − A⁻¹‖ ≤ ‖A⁻¹‖²‖D‖ / (1 − ‖A⁻¹‖‖D‖)                       (Neumann series)
# bounds the change of [Λ_N⁻¹]_jj; the penalised residual 2b_N = RSS(m_N) + m_NᵀDm_N differs
# from RSS by at most ‖D‖‖w‖² + ‖A⁻¹‖‖D‖²‖w‖² (m_N − w = −Λ_N⁻¹Dw); a square root halves the
# relative change; and both sides' rounding is at most 100·cond(A)·ε. The means move by
# ‖Λ_N⁻¹Dw‖ ≤ ‖Λ_N⁻¹‖‖D‖‖w‖ plus the same rounding.
# Usage: infer_linreg_oracle.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_linreg_oracle.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_linreg_oracle.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(infer)
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 cannot import numpy (Debian's python3-numpy); the OLS oracle did not run." >&2
  exit 0
fi

# ols NAME FEATURES DELTA: the run NAME against OLS of bmi on FEATURES (unstandardised) with
# every prior precision DELTA.
ols() {
  /usr/bin/python3 - "$work/$1.json" "$data/pima_train.csv" "$2" "$3" <<'PY' || fail "$1: the posterior is not OLS's limit"
import csv, json, sys
import numpy as np
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
feats = sys.argv[3].split(",")
delta = float(sys.argv[4])
X = np.array([[1.0] + [float(r[f]) for f in feats] for r in rows])
y = np.array([float(r["bmi"]) for r in rows])
n, p = X.shape
w, rss, rank, sv = np.linalg.lstsq(X, y, rcond=None)
rss = float(((y - X @ w) ** 2).sum())
A = X.T @ X
Ainv = np.linalg.inv(A)
se = np.sqrt(rss / (n - p) * np.diag(Ainv))
na = np.linalg.norm(Ainv, 2)
cond = sv[0] ** 2 / sv[-1] ** 2
eps = np.finfo(float).eps
shift = na ** 2 * delta / (1 - na * delta)               # ‖Λ_N⁻¹ − A⁻¹‖
rel_var = shift / np.diag(Ainv)                           # per coefficient
rel_rss = (delta * w @ w + na * delta ** 2 * w @ w) / rss
rounding = 100 * cond * eps
tol_sd = 0.5 * (rel_var + rel_rss) + rounding
tol_mean = na * delta * np.linalg.norm(w) + rounding * np.abs(w).max()
expected_sd = se * np.sqrt((n - p) / (n - 2))
sd = np.array(d["sd"])
mean = np.array(d["mean"])
assert d["family"] == "normal-gamma" and d["dof"] == n, (d["family"], d["dof"])
assert np.all(np.abs(sd / expected_sd - 1) <= tol_sd), (sd / expected_sd - 1, tol_sd)
assert np.all(np.abs(mean - w) <= tol_mean), (mean - w, tol_mean)
# E[σ²] = b_N/(a_N − 1) → RSS/(N − 2); E[τ] = a_N/b_N → N/RSS
tau = d["noise"]["precision_mean"]
assert abs(tau * rss / n - 1) <= rel_rss + rounding, (tau, n / rss)
print(f"{sys.argv[1]}: max |sd/OLS-limit − 1| = {np.abs(sd / expected_sd - 1).max():.2e} "
      f"(tolerance {tol_sd.min():.2e}); OLS se ratio sd/se = {np.round(sd / se, 6).tolist()}",
      file=sys.stderr)
PY
}

feats=skin,glu,bp
run_infer flat linreg --train "$data/pima_train.csv" --label bmi --features $feats \
  --prior-precision 1e-9 --intercept-prior-precision 1e-9
ols flat $feats 1e-9
feats=npreg,glu,bp,skin,ped,age
run_infer flat6 linreg --train "$data/pima_train.csv" --label bmi --features $feats \
  --prior-precision 1e-9 --intercept-prior-precision 1e-9
ols flat6 $feats 1e-9

# The default (δ = 1 on the slopes, a weak 1e-6 on the intercept, the noise estimated) states
# every assumption it made, in the JSON and on stdout.
run_infer default linreg --train "$data/pima_train.csv" --label bmi --features skin,glu,bp
python3 - "$work/default.json" <<'PY' || fail "default: the JSON does not list its assumptions"
import json, sys
d = json.load(open(sys.argv[1]))
a = " | ".join(d["assumptions"])
for word in ["noise", "Jeffreys", "--noise-precision", "--prior-precision", "intercept",
             "--intercept-prior-precision"]:
    assert word in a, (word, a)
assert d["intercept_prior_precision"] == 1e-6 and d["prior_precision"] == 1.0, d
PY
[ "$(grep -c '^assumed: ' "$work/default.out")" -ge 3 ] || fail "default: stdout lacks the 'assumed:' lines"
# Given explicitly, nothing is assumed about them.
run_infer explicit linreg --train "$data/pima_train.csv" --label bmi --features skin,glu,bp \
  --noise-precision 0.05 --prior-precision 1 --intercept-prior-precision 1e-6
python3 - "$work/explicit.json" <<'PY' || fail "explicit: assumptions listed for options that were given"
import json, sys
d = json.load(open(sys.argv[1]))
assert d.get("assumptions", []) == [], d.get("assumptions")
assert d["family"] == "gaussian-full" and d["noise_precision"] == 0.05, d
PY

# laplace (and cvi) without --noise-precision hold β = E[τ | y] of the same Normal–Gamma posterior:
# the Gaussian conditional on it, N(m_N, S), so the same mean (Newton stops at max|∇| < 1e-10: the
# mean is within ‖S‖·1e-10 ≤ tr(S)·1e-10) and sds √(S_jj) = the t's sds times √((ν − 2)/ν)
# (1e-9: both are Λ_N⁻¹ up to rounding, cond(Λ_N)·ε ≈ 1e-11 on these unstandardised columns).
run_infer plugin linreg --train "$data/pima_train.csv" --label bmi --features skin,glu,bp --method laplace
python3 - "$work/default.json" "$work/plugin.json" <<'PY' || fail "plugin: laplace is not the Gaussian conditional on E[τ | y]"
import json, math, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
nu = a["dof"]
tr = sum(b["covariance"][i][i] for i in range(len(b["mean"])))
assert b["noise_estimate"] == "plug-in" and b["noise_precision"] == a["noise"]["precision_mean"], b
assert all(abs(x - y) <= tr * 1e-10 + 1e-12 * abs(x) for x, y in zip(a["mean"], b["mean"])), (a["mean"], b["mean"])
assert all(abs(s / t * math.sqrt((nu - 2) / nu) - 1) < 1e-9 for s, t in zip(a["sd"], b["sd"])), (a["sd"], b["sd"])
assert any("held fixed by laplace" in s for s in b["assumptions"]), b["assumptions"]
PY

# The intercept's weak prior: logistic with flat slopes reaches the maximum-likelihood intercept
# that a δ = 1 prior on the intercept pulls towards 0.
run_infer weak logistic --train "$data/pima_train.csv" --label type --positive Yes --features glu,bmi
run_infer strong logistic --train "$data/pima_train.csv" --label type --positive Yes --features glu,bmi \
  --intercept-prior-precision 1
python3 - "$work/weak.json" "$work/strong.json" <<'PY' || fail "logistic: the weak intercept prior does not free the intercept"
import json, sys
weak, strong = (json.load(open(f)) for f in sys.argv[1:3])
# unstandardised glu (~120) and bmi (~33): the MLE's intercept is far from 0 (about −8)
assert weak["mean"][0] < strong["mean"][0] - 1, (weak["mean"][0], strong["mean"][0])
assert weak["intercept_prior_precision"] == 1e-6 and strong["intercept_prior_precision"] == 1
PY

expect_fail no-intercept "Option '--intercept-prior-precision' needs an intercept" \
  linreg --train "$data/pima_train.csv" --label bmi --no-intercept --intercept-prior-precision 1
expect_fail bad-intercept "--intercept-prior-precision" \
  linreg --train "$data/pima_train.csv" --label bmi --intercept-prior-precision 0
expect_fail bad-noise-prior "--noise-prior" \
  linreg --train "$data/pima_train.csv" --label bmi --noise-prior 1,0
expect_fail noise-prior-known "Options '--noise-prior' and '--noise-precision' exclude each other" \
  linreg --train "$data/pima_train.csv" --label bmi --noise-prior 1,1 --noise-precision 2
expect_fail noise-logistic "Option '--noise-precision' applies only to linreg" \
  logistic --train "$data/pima_train.csv" --label type --positive Yes --noise-precision 2
finish
