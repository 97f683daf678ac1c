#!/usr/bin/env bash
# `blr laplace --prior-precision-method gridsearch`: the prior precision chosen by the validation
# NLL of the predictive (laplace-torch's gridsearch). The JSON lists the log-spaced grid with its
# NLLs; the chosen δ is their argmin; the run's own validation predictive (evaluated after the
# search) has exactly that NLL, and so does a run given that δ; the Monte Carlo predictive compares
# the grid on the same draws (the chosen δ's NLL is the evaluation's too). Misuse is one sentence:
# a run without a validation split, a given δ with the method, a malformed or empty grid, a grid
# without the method.
# Usage: torch_laplace_gridsearch.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_laplace_gridsearch.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

expect_fail grid-and-delta "exclude each other" laplace --checkpoint x.ckpt --prior-precision 3 \
  --prior-precision-method gridsearch
expect_fail grid-malformed "MIN,MAX,POINTS" laplace --checkpoint x.ckpt \
  --prior-precision-method gridsearch --prior-precision-grid 1e-2,1e2
expect_fail grid-words "MIN,MAX,POINTS" laplace --checkpoint x.ckpt \
  --prior-precision-method gridsearch --prior-precision-grid 1e-2,many,5
expect_fail grid-reversed "0 < min ≤ max" laplace --checkpoint x.ckpt \
  --prior-precision-method gridsearch --prior-precision-grid 10,1,5
expect_fail grid-no-method "needs --prior-precision-method gridsearch" laplace --checkpoint x.ckpt \
  --prior-precision-grid 1,10,3

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi
common=(--threads 1 --quiet)
"$blr" train --optimizer adamw --train-limit 1500 --test-limit 300 --validation 0.2 \
  --batch-size 100 --hidden 32 --epochs 1 --test-samples 3 --out "$work/run" "${common[@]}" \
  >/dev/null 2>"$work/train.err" || { fail "train with validation: exit $?"; cat "$work/train.err" >&2; }
"$blr" train --optimizer adamw --train-limit 500 --test-limit 100 --batch-size 100 --hidden 16 \
  --epochs 1 --out "$work/noval" "${common[@]}" >/dev/null 2>&1 || fail "train without validation"
expect_fail grid-no-validation "has none; train with --validation" laplace \
  --checkpoint "$work/noval/adamw.ckpt" --prior-precision-method gridsearch "${common[@]}"
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --predictive probit \
  --prior-precision-method gridsearch --prior-precision-grid 1e-2,1e2,5 --json "$work/grid.json" \
  --threads 1 >/dev/null 2>"$work/grid.err" || { fail "gridsearch probit: exit $?"; cat "$work/grid.err" >&2; }
grep -q "the lowest validation NLL" "$work/grid.err" || fail "gridsearch: stderr does not say how δ was chosen"
# A δ at the grid's end is warned about (the optimum may lie beyond); one inside is not.
edge=$(python3 -c "import json; print(json.load(open('$work/grid.json'))['laplace']['prior_precision_at_grid_edge'])")
if [ "$edge" = True ]; then
  grep -q "widen --prior-precision-grid" "$work/grid.err" || fail "gridsearch: a δ at the grid's end is not warned about"
else
  ! grep -q "widen --prior-precision-grid" "$work/grid.err" || fail "gridsearch: a warning for a δ inside the grid"
fi
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --predictive probit --prior-precision-method gridsearch \
  --prior-precision-grid 1e-4,1e-3,2 --threads 1 --quiet >/dev/null 2>"$work/edge.err" || fail "gridsearch low grid: exit $?"
grep -q "lowest at the .* prior precision of the grid" "$work/edge.err" || fail "gridsearch: a δ at the end of a low grid is not warned about"
best=$(python3 -c "import json; print(repr(json.load(open('$work/grid.json'))['laplace']['prior_precision']))")
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --predictive probit --prior-precision "$best" \
  --json "$work/given.json" "${common[@]}" >/dev/null 2>&1 || fail "laplace with the chosen δ: exit $?"
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --prior-precision-method gridsearch \
  --prior-precision-grid 1e-1,1e3,3 --json "$work/mc.json" "${common[@]}" >/dev/null 2>"$work/mc.err" ||
  { fail "gridsearch mc: exit $?"; cat "$work/mc.err" >&2; }
python3 - "$work" <<'PY' || fail "gridsearch: JSON checks failed (see above)"
import json, math, sys
w = sys.argv[1]
for name, expected_grid in (("grid", [1e-2, 1e-1, 1.0, 10.0, 100.0]), ("mc", [1e-1, 1e1, 1e3])):
    doc = json.load(open(f"{w}/{name}.json"))
    info = doc["laplace"]
    grid = info["prior_precision_grid"]
    assert info["prior_precision_method"] == "gridsearch" and info["prior_precision_chosen"]
    assert len(grid) == len(expected_grid)
    for g, e in zip(grid, expected_grid):
        assert abs(g["prior_precision"] / e - 1) < 1e-12, (g, e)
        assert math.isfinite(g["validation_nll"])
    nlls = [g["validation_nll"] for g in grid]
    k = nlls.index(min(nlls))
    assert info["prior_precision"] == grid[k]["prior_precision"] and info["validation_nll"] == nlls[k]
    assert max(nlls) - min(nlls) > 1e-6, "the grid's NLLs do not differ: nothing was chosen"
    # The run's validation predictive is evaluated at the chosen δ, after the search: the same NLL
    # (the probit is deterministic; the Monte Carlo predictive restarts its draws at each δ).
    val = doc["optimizers"]["laplace"]["validation"]["predictive"]
    print(f"{name}: grid NLLs {[round(v, 4) for v in nlls]}, chosen δ {info['prior_precision']:.4g}, "
          f"validation NLL {val['nll']:.6f}", file=sys.stderr)
    assert abs(val["nll"] - nlls[k]) < 1e-9 * max(1.0, nlls[k]), (val["nll"], nlls[k])
given = json.load(open(f"{w}/given.json"))
g = json.load(open(f"{w}/grid.json"))
assert given["laplace"]["prior_precision_method"] == "given"
for key in ("accuracy", "nll", "ece"):
    assert given["optimizers"]["laplace"]["test"]["predictive"][key] == \
        g["optimizers"]["laplace"]["test"]["predictive"][key], key
PY
finish
echo "all blr laplace gridsearch CLI checks passed"
