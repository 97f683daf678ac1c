#!/usr/bin/env bash
# `blr infer ... --predict FILE --predict-out OUT` (issue 14, item 4): one CSV row per input row,
# recomputed here from the JSON posterior and the *training* standardisation statistics (computed
# here from the training file), so a prediction file standardised with its own statistics, or a
# wrong predictive formula, fails. Tolerance 1e-10 relative: the design, x*ᵀm and x*ᵀΣx* are a few
# dozen roundings (~1e-14) on each side, with margin for the different summation orders.
# Usage: infer_predict.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_predict.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_predict.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(infer)

# check NAME PYTHON: d = JSON of NAME, rows = its prediction CSV (list of dicts), train = the
# training CSV (dicts), design(rows, features) = standardised design with intercept.
check() {
  python3 - "$work/$1.json" "$work/$1.csv" "$data/pima_train.csv" "$2" <<'PY' || fail "$1: $2"
import csv, json, math, sys
from statistics import NormalDist
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
train = list(csv.DictReader(open(sys.argv[3])))
z = NormalDist().inv_cdf(0.975)
def close(a, b, rel=1e-10): return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
def design(table, features):
    out = []
    stats = {}
    for f in features:
        v = [float(r[f]) for r in train]
        m = sum(v) / len(v)
        stats[f] = (m, math.sqrt(sum((x - m) ** 2 for x in v) / len(v)))
    for r in table:
        out.append([1.0] + [(float(r[f]) - stats[f][0]) / stats[f][1] for f in features])
    return out
def latent(x):
    m = sum(a * b for a, b in zip(x, d["mean"]))
    c = d["covariance"]
    v = sum(x[i] * c[i][j] * x[j] for i in range(len(x)) for j in range(len(x)))
    return m, v
sig = lambda a: 1 / (1 + math.exp(-a))
exec(sys.argv[4])
PY
}

# The test file without its label columns: a file "without labels".
cut -d, -f1-4,6-7 "$data/pima_test.csv" >"$work/nolabel.csv"   # drops bmi (5) and type (8)
feat=skin,glu,bp

# ---- linreg: y* = x*ᵀw + ε: mean, sd = √(x*ᵀΣx* + 1/β), mean ± z·sd --------------------------
run_infer linreg linreg --train "$data/pima_train.csv" --standardize --label bmi --features $feat \
  --noise-precision 0.05 --predict "$work/nolabel.csv" --predict-out "$work/linreg.csv"
check linreg '
assert len(rows) == 332 and rows[0]["line"] == "2" and rows[-1]["line"] == "333"
assert list(rows[0].keys()) == ["line", "mean", "sd", "lower", "upper"]
for r, x in zip(rows, design(list(csv.DictReader(open(sys.argv[2].replace("linreg.csv", "nolabel.csv")))), "skin glu bp".split())):
    m, v = latent(x)
    sd = math.sqrt(v + 1 / d["noise_precision"])
    assert close(float(r["mean"]), m) and close(float(r["sd"]), sd), (r, m, sd)
    assert close(float(r["lower"]), m - z * sd) and close(float(r["upper"]), m + z * sd)
assert d["predict"]["rows"] == 332'
grep -q "predictions: 332 rows" "$work/linreg.out" || fail "linreg: no predictions line on stdout"

# ---- logistic: probit probability σ(μ/√(1 + πv/8)); interval σ(μ ± z√v) ------------------------
run_infer logistic logistic --train "$data/pima_train.csv" --standardize --label type --positive Yes \
  --features $feat --predictive probit --predict "$work/nolabel.csv" --predict-out "$work/logistic.csv"
check logistic '
assert list(rows[0].keys()) == ["line", "probability", "lower", "upper", "predicted"]
for r, x in zip(rows, design(list(csv.DictReader(open(sys.argv[2].replace("logistic.csv", "nolabel.csv")))), "skin glu bp".split())):
    m, v = latent(x)
    assert close(float(r["probability"]), sig(m / math.sqrt(1 + math.pi * v / 8))), r
    assert close(float(r["lower"]), sig(m - z * math.sqrt(v))) and close(float(r["upper"]), sig(m + z * math.sqrt(v)))
    assert r["predicted"] == ("Yes" if float(r["probability"]) > 0.5 else "No")
assert d["predict"]["positive_class"] == "Yes" and d["predict"]["probability"] == "probit"'
grep -q "the probit approximation" "$work/logistic.out" || fail "logistic: the method of the probability is not named"
# The default (quadrature) gives the same classes as --test's accuracy: predicted vs the labels.
run_infer logistic-q logistic --train "$data/pima_train.csv" --standardize --label type --positive Yes \
  --test "$data/pima_test.csv" --predict "$data/pima_test.csv" --predict-out "$work/logistic-q.csv"
check logistic-q '
labels = [r["type"] for r in csv.DictReader(open(sys.argv[3].replace("pima_train", "pima_test")))]
acc = sum(r["predicted"] == y for r, y in zip(rows, labels)) / len(labels)
assert acc == d["test"]["accuracy"], (acc, d["test"]["accuracy"])'
grep -q "Gauss–Hermite quadrature" "$work/logistic-q.out" || fail "logistic-q: the method of the probability is not named"

# ---- poisson: rate e^{a*}: mean e^{μ+v/2}, sd mean·√(e^v − 1), interval e^{μ ± z√v} -------------
run_infer poisson poisson --train "$data/pima_train.csv" --standardize --label npreg --features $feat \
  --predict "$work/nolabel.csv" --predict-out "$work/poisson.csv"
check poisson '
assert list(rows[0].keys()) == ["line", "rate_mean", "rate_sd", "lower", "upper"]
for r, x in zip(rows, design(list(csv.DictReader(open(sys.argv[2].replace("poisson.csv", "nolabel.csv")))), "skin glu bp".split())):
    m, v = latent(x)
    mean = math.exp(m + v / 2)
    assert close(float(r["rate_mean"]), mean) and close(float(r["rate_sd"]), mean * math.sqrt(math.expm1(v)))
    assert close(float(r["lower"]), math.exp(m - z * math.sqrt(v))) and close(float(r["upper"]), math.exp(m + z * math.sqrt(v)))'

# ---- a mixture posterior: probabilities in (0, 1), lower < upper ---------------------------------
run_infer mix logistic --train "$data/pima_train.csv" --standardize --label type --positive Yes --features $feat \
  --method cvi --family mixture:2 --iterations 100 --seed 1 --predict "$work/nolabel.csv" --predict-out "$work/mix.csv"
check mix 'assert len(rows) == 332 and all(0 < float(r["lower"]) < float(r["upper"]) < 1 and 0 < float(r["probability"]) < 1 for r in rows)'

# ---- GP regression: at the training inputs the predictive mean is the latent mean and its
# variance the latent variance plus the noise variance (two code paths: K(X, X) and K(X, X*)).
cut -d, -f1 "$data/faithful.csv" >"$work/eruptions.csv"
run_infer gpr gpr --train "$data/faithful.csv" --label waiting --lengthscale 1.3 --variance 150 \
  --noise-variance 32 --predict "$work/eruptions.csv" --predict-out "$work/gpr.csv"
check gpr '
assert len(rows) == 272
for r, m, s in zip(rows, d["mean"], d["sd"]):
    assert close(float(r["mean"]), m, 1e-9) and close(float(r["sd"]), math.sqrt(s * s + 32), 1e-9), (r, m, s)'

# ---- GP classification: the predicted classes reproduce --test's accuracy ----------------------
cut -d, -f1-2 "$data/synth_test.csv" >"$work/synth_x.csv"
run_infer gpc gpc --train "$data/synth_train.csv" --test "$data/synth_test.csv" --label yc --lengthscale 0.5 \
  --variance 4 --predict "$work/synth_x.csv" --predict-out "$work/gpc.csv"
python3 - "$work/gpc.json" "$work/gpc.csv" "$data/synth_test.csv" <<'PY' || fail "gpc: predicted classes do not reproduce the test accuracy"
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
labels = [r["yc"] for r in csv.DictReader(open(sys.argv[3]))]
acc = sum(r["predicted"] == y for r, y in zip(rows, labels)) / len(labels)
assert len(rows) == 1000 and acc == d["test"]["accuracy"], acc
assert all(float(r["lower"]) <= float(r["upper"]) for r in rows)
PY

# ---- bad input ------------------------------------------------------------------------------------
lin=(linreg --train "$data/pima_train.csv" --standardize --label bmi --features $feat)
expect_fail no-out "Option '--predict' needs '--predict-out FILE'" "${lin[@]}" --predict "$work/nolabel.csv"
expect_fail no-predict "Option '--predict-out' needs '--predict FILE'" "${lin[@]}" --predict-out "$work/p.csv"
expect_fail out-stdout "needs a file name" "${lin[@]}" --predict "$work/nolabel.csv" --predict-out -
expect_fail out-dir "does not exist" "${lin[@]}" --predict "$work/nolabel.csv" --predict-out "$work/no/such/p.csv"
expect_fail predict-kalman "Option '--predict' applies to linreg" kalman --data "$data/nile.csv" --fit \
  --predict "$work/nolabel.csv" --predict-out "$work/p.csv"
cut -d, -f1-2 "$data/pima_test.csv" >"$work/noglu_bp.csv"
expect_fail missing-feature "has no column 'skin'" "${lin[@]}" --predict "$work/noglu_bp.csv" --predict-out "$work/p.csv"
printf 'skin,glu,bp\n30,100,70\n30,lots,70\n' >"$work/text.csv"
expect_fail text-cell "line 3, column 'glu': 'lots' is not a number" "${lin[@]}" --predict "$work/text.csv" --predict-out "$work/p.csv"
printf 'skin,glu,bp\n30,0x1p6,70\n' >"$work/hex.csv"
expect_fail hex-cell "'0x1p6' is not a number" "${lin[@]}" --predict "$work/hex.csv" --predict-out "$work/p.csv"
printf 'skin,glu,bp\n30,,70\n' >"$work/gap.csv"
expect_fail gap-cell "line 2, column 'glu': the value is missing" "${lin[@]}" --predict "$work/gap.csv" --predict-out "$work/p.csv"
expect_fail no-predict-file "cannot be opened" "${lin[@]}" --predict "$work/none.csv" --predict-out "$work/p.csv"
# A prediction that is not finite: an error naming the line, non-zero exit, no table, no file.
printf 'skin,glu,bp\n30,100,70\n30,1e300,70\n' >"$work/huge.csv"
rm -f "$work/p.csv"
expect_fail huge-rate "The prediction for line 3 of" poisson --train "$data/pima_train.csv" --label npreg \
  --features $feat --predict "$work/huge.csv" --predict-out "$work/p.csv"
[ -e "$work/p.csv" ] && fail "huge-rate: the prediction file was written"
grep -q "parameter" "$work/out" && fail "huge-rate: a table was printed"

finish
echo "all blr infer --predict checks passed"
