#!/usr/bin/env bash
# `blr infer --out DIR` (issue 31, item 4; apps/blr/infer_plots.hpp): every model with a picture
# writes it with its data and script, and the data are the run's own numbers — the forest plot's
# rows are the JSON's intervals without the intercept, the Kalman series has one row per year of
# the Nile with the JSON's smoothed band, the GP grid spans the data, the mixture's means are the
# JSON's. A model without a picture says so; --out that is a file is refused. With gnuplot
# installed each image is a PNG (whoever changes a picture looks at it: docs/inference.md).
# Usage: infer_plots.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_plots.sh <path-to-blr> <source-dir>}
data=${2:?}/data
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

run_infer glm logistic --train "$data/pima_train.csv" --label type --positive Yes --standardize \
  --out "$work/glm"
run_infer kalman kalman --data "$data/nile.csv" --column volume --fit --out "$work/kalman"
run_infer gpr gpr --train "$data/faithful.csv" --label waiting --kernel rbf --lengthscale 1.32816 \
  --variance 152.066 --noise-variance 31.5948 --out "$work/gpr"
run_infer gpc gpc --train "$data/synth_train.csv" --label yc --method laplace --kernel rbf \
  --lengthscale 0.5 --variance 4 --out "$work/gpc"
run_infer gmm gmm --data "$data/faithful.csv" --components 2 --out "$work/gmm"
run_infer gmm1 gmm --data "$data/faithful.csv" --features waiting --components 2 --out "$work/gmm1"
run_infer conjugate conjugate --data "$data/nile.csv" --column volume --likelihood normal \
  --prior 1000,1,1,1 --out "$work/conjugate"
grep -q "has no picture" "$work/conjugate.err" || fail "conjugate: no note that it has no picture"

/usr/bin/python3 - "$work" <<'PY' 2>"$work/py.err" || fail "plot data: $(tail -1 "$work/py.err")"
import json, math, sys
w = sys.argv[1]


def rows(path):
    return [line.split() for line in open(path) if line.strip() and not line.startswith("#")]

g = json.load(open(f"{w}/glm.json"))
forest = rows(f"{w}/glm/plot-data/coefficients.dat")
names = [n for n in g["features"] if n != "(intercept)"]
assert [r[1].strip('"') for r in forest] == names, forest
for r, name in zip(forest, names):
    i = g["features"].index(name)
    for v, key in zip(r[2:5], ("mean", "lower", "upper")):   # 10 significant digits written
        assert abs(float(v) - g[key][i]) <= 1e-9 * abs(g[key][i]), (r, name, key)
k = json.load(open(f"{w}/kalman.json"))
series = rows(f"{w}/kalman/plot-data/series.dat")
assert len(series) == len(k["smoothed_mean"]) == 100, len(series)
for r, lo, hi in zip(series, k["smoothed_lower"], k["smoothed_upper"]):
    assert abs(float(r[4]) - lo) <= 1e-6 * abs(lo) and abs(float(r[5]) - hi) <= 1e-6 * abs(hi)
grid = rows(f"{w}/gpr/plot-data/gp_grid.dat")
xs = [float(r[0]) for r in grid]
assert len(grid) == 200 and xs[0] < 1.6 and xs[-1] > 5.1, (xs[0], xs[-1])   # eruptions 1.6–5.1
for r in grid:  # latent band inside the predictive band
    assert float(r[4]) < float(r[2]) < float(r[3]) < float(r[5]), r
surface = rows(f"{w}/gpc/plot-data/gp_surface.dat")
assert len(surface) == 80 * 80 and all(0 < float(r[2]) < 1 for r in surface)
m = json.load(open(f"{w}/gmm.json"))
means = rows(f"{w}/gmm/plot-data/mixture_means.dat")
for r, mean in zip(means, m["means"]):
    assert abs(float(r[0]) - mean[0]) <= 1e-8 * abs(mean[0]) and abs(float(r[1]) - mean[1]) <= 1e-8 * abs(mean[1])
density = rows(f"{w}/gmm1/plot-data/mixture_density.dat")
step = float(density[1][0]) - float(density[0][0])
area = sum(float(r[1]) for r in density) * step
assert 0.97 < area < 1.01, area   # the mixture density integrates to 1 over the grid
PY

if command -v gnuplot >/dev/null; then
  for image in glm/coefficients kalman/series gpr/gp gpc/gp gmm/mixture gmm1/mixture; do
    f="$work/$image.png"
    [ -s "$f" ] && [ "$(head -c 4 "$f" | tail -c 3)" = "PNG" ] || fail "$image.png: not a PNG"
  done
fi
touch "$work/a_file"
expect_fail out-file "--out" infer kalman --data "$data/nile.csv" --column volume --fit --out "$work/a_file"
finish
echo "all blr infer --out checks passed"
