#!/usr/bin/env bash
# The two doors Python had and the CLI lacked (issue 31): `blr infer kalman --forecast H` and
# `blr infer gmm --predict FILE --predict-out OUT`. Each is recomputed here from the command's own
# JSON, by formulas written independently of the library:
#   - a local level's forecast h steps past the data is N(m_T, P_T + h·W + V) (the prediction
#     recursion from the last filtered state), its interval m_T ± z·sd;
#   - a mixture's p_k(x) = w_k N(x | μ_k, Σ_k) / Σ_j w_j N(x | μ_j, Σ_j), its log density the log
#     of that sum, the component the largest p_k (numbered from 1); with --standardize the rows use
#     the training file's means and population sds.
# Tolerance 1e-9 relative: a 2×2 Gaussian density and a sum of three variances are a few roundings
# on each side (~1e-15), with margin for exp/log of values near -700.
# Usage: infer_forecast_predict.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_forecast_predict.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_forecast_predict.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(infer)

nile=(kalman --data "$data/nile.csv" --column volume)
run_infer forecast "${nile[@]}" --obs-var 15099 --state-var 1469 --forecast 20 --level 0.9
run_infer forecast-fit "${nile[@]}" --fit --forecast 3
for name in forecast forecast-fit; do
  python3 - "$work/$name.json" <<'PY' || fail "$name: the forecast is not N(m_T, P_T + hW + V)"
import json, math, sys
from statistics import NormalDist
d = json.load(open(sys.argv[1]))
f = d["forecast"]
z = NormalDist().inv_cdf(0.5 + f["level"] / 2)
m, p = d["filtered_mean"][-1], d["filtered_var"][-1]
def close(a, b): return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
assert f["outputs"] == ["volume"] and len(f["mean"]) == f["steps"], f
for h in range(1, f["steps"] + 1):
    sd = math.sqrt(p + h * d["state_var"] + d["obs_var"])
    row = {k: f[k][h - 1][0] for k in ("mean", "sd", "lower", "upper")}
    assert close(row["mean"], m) and close(row["sd"], sd), (h, row, m, sd)
    assert close(row["lower"], m - z * sd) and close(row["upper"], m + z * sd), (h, row)
PY
done
grep -q "forecast of 'volume' past the data" "$work/forecast.out" || fail "forecast: no table printed"
grep -q '^ *20 ' "$work/forecast.out" || fail "forecast: the table lacks its last step"

faithful=(gmm --data "$data/faithful.csv" --components 2 --seed 1)
head -8 "$data/faithful.csv" >"$work/rows.csv"
run_infer gmm-predict "${faithful[@]}" --predict "$work/rows.csv" --predict-out "$work/p.csv"
run_infer gmm-predict-std "${faithful[@]}" --standardize --predict "$work/rows.csv" \
  --predict-out "$work/p-std.csv"
for name in gmm-predict:p gmm-predict-std:p-std; do
  python3 - "$work/${name%%:*}.json" "$work/${name##*:}.csv" "$work/rows.csv" "$data/faithful.csv" \
    <<'PY' || fail "$name: the predictions differ from the mixture's"
import csv, json, math, sys
d = json.load(open(sys.argv[1]))
out = list(csv.DictReader(open(sys.argv[2])))
rows = list(csv.DictReader(open(sys.argv[3])))
train = list(csv.DictReader(open(sys.argv[4])))
cols = d["columns"]
standardised = "std" in sys.argv[2]
def stats(c):
    v = [float(r[c]) for r in train]
    m = sum(v) / len(v)
    return m, math.sqrt(sum((x - m) ** 2 for x in v) / len(v))
scale = {c: stats(c) if standardised else (0.0, 1.0) for c in cols}
def close(a, b): return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
assert [r["line"] for r in out] == [str(i + 2) for i in range(len(rows))], out
assert list(out[0].keys()) == ["line", "p_1", "p_2", "log_density", "component"], out[0].keys()
for r, o in zip(rows, out):
    x = [(float(r[c]) - scale[c][0]) / scale[c][1] for c in cols]
    joint = []
    for w, mu, s in zip(d["weights"], d["means"], d["covariances"]):
        det = s[0][0] * s[1][1] - s[0][1] * s[1][0]
        e = [x[0] - mu[0], x[1] - mu[1]]
        q = (s[1][1] * e[0] ** 2 - 2 * s[0][1] * e[0] * e[1] + s[0][0] * e[1] ** 2) / det
        joint.append(math.log(w) - math.log(2 * math.pi) - 0.5 * math.log(det) - 0.5 * q)
    top = max(joint)
    log_density = top + math.log(sum(math.exp(j - top) for j in joint))
    assert close(float(o["log_density"]), log_density), (o, log_density)
    for k, j in enumerate(joint):
        assert abs(float(o[f"p_{k + 1}"]) - math.exp(j - log_density)) <= 1e-9, (o, k)
    assert o["component"] == str(joint.index(top) + 1), o
assert d["predict"]["rows"] == len(rows), d["predict"]
PY
done

expect_fail forecast-zero "between 1 and" "${nile[@]}" --obs-var 1 --state-var 1 --forecast 0
expect_fail forecast-gmm "Option '--forecast' applies only to model 'kalman'" "${faithful[@]}" \
  --forecast 3
expect_fail predict-kalman "Option '--predict' applies to linreg, logistic, poisson, gpc, gpr and gmm" \
  "${nile[@]}" --obs-var 1 --state-var 1 --predict "$work/rows.csv" --predict-out "$work/k.csv"
printf 'eruptions\n3.6\n' >"$work/one-column.csv"
expect_fail predict-gmm-column "waiting" "${faithful[@]}" --predict "$work/one-column.csv" \
  --predict-out "$work/x.csv"
finish
