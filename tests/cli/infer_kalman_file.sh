#!/usr/bin/env bash
# `blr infer kalman --model-file F` (issue 14, item 4): a general linear-Gaussian model A, C, Q, R
# from JSON. On the Nile data the file form of the local-level and the local-linear-trend models
# must give the numbers of the built-in models. Tolerance 0, derived: both paths build the same
# StateSpaceModel from the same doubles (JSON and CLI11 both round the same decimal strings
# correctly) and run the same filter and smoother, so every operation is the same; a difference
# would be a bug. Then a 2-output model, and every kind of bad model file.
# Usage: infer_kalman_file.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_kalman_file.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_kalman_file.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(infer)

same() {
  local a=$1 b=$2
  shift 2
  python3 - "$work/$a.json" "$work/$b.json" "$@" <<'PY' || fail "$a vs $b differ"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for key in sys.argv[3:]:
    assert a[key] == b[key], (key, [(i, x, y) for i, (x, y) in enumerate(zip(a[key], b[key])) if x != y][:3])
PY
}
model() { printf '%s\n' "$2" >"$work/$1.json.model"; }

# ---- local level: y₁ = 1120 is the built-in initial mean ------------------------------------------
model level '{"A": [[1]], "C": [[1]], "Q": [[1469.1]], "R": [[15099]], "init_mean": [1120], "init_cov": [[1e7]], "states": ["level"]}'
run_infer level-file kalman --data "$data/nile.csv" --column volume --model-file "$work/level.json.model"
run_infer level-cli kalman --data "$data/nile.csv" --column volume --obs-var 15099 --state-var 1469.1
same level-file level-cli log_likelihood filtered_mean filtered_var smoothed_mean smoothed_var \
  smoothed_lower smoothed_upper smoothed_states smoothed_states_sd
grep -q "model file '$work/level.json.model' (1 state, 1 output)" "$work/level-file.out" ||
  fail "level-file: the title does not name the model file"

# ---- local linear trend: two states -------------------------------------------------------------
model trend '{"A": [[1, 1], [0, 1]], "C": [[1, 0]], "Q": [[1500, 0], [0, 1]], "R": [[15000]],
  "init_mean": [1120, 0], "init_cov": [[1e7, 0], [0, 1e7]], "states": ["level", "slope"]}'
run_infer trend-file kalman --data "$data/nile.csv" --column volume --model-file "$work/trend.json.model"
run_infer trend-cli kalman --data "$data/nile.csv" --column volume --model local-linear-trend \
  --obs-var 15000 --state-var 1500 --slope-var 1
same trend-file trend-cli log_likelihood filtered_mean filtered_var smoothed_mean smoothed_var \
  smoothed_states smoothed_states_sd states
python3 - "$work/trend-file.json" <<'PY' || fail "trend-file: smoothed states are not 100 × 2"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["smoothed_states"]) == 100 and all(len(r) == 2 for r in d["smoothed_states"])
assert [r[1] for r in d["smoothed_states"]] == json.load(open(sys.argv[1].replace("trend-file", "trend-cli")))["smoothed_slope"]
PY

# ---- two outputs: the volume measured twice (R diagonal) equals one output with variance R/2 ----
awk -F, 'BEGIN { OFS = "," } NR == 1 { print "year", "a", "b"; next } { print $1, $2, $2 }' \
  "$data/nile.csv" >"$work/twice.csv"
model twice '{"A": [[1]], "C": [[1], [1]], "Q": [[1469.1]], "R": [[30198, 0], [0, 30198]], "init_mean": [1120], "init_cov": [[1e7]]}'
run_infer twice kalman --data "$work/twice.csv" --column a,b --model-file "$work/twice.json.model"
# Smoothed states agree with the one-output model to rounding (different but equivalent algebra:
# 1e-9 relative, the condition of the 2×2 update times ε with margin); the log-likelihoods differ
# by the density of y_a − y_b = 0, so only the states are compared.
python3 - "$work/twice.json" "$work/level-cli.json" <<'PY' || fail "twice: the 2-output model is not the 1-output model with R/2"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for key in ("filtered_mean", "smoothed_mean", "smoothed_var"):
    for x, y in zip(a[key], b[key]):
        assert abs(x - y) <= 1e-9 * abs(y), (key, x, y)
assert a["states"] == ["x1"]
PY

# ---- bad model files ---------------------------------------------------------------------------
good=(kalman --data "$data/nile.csv" --column volume)
bad() {  # bad NAME TEXT JSON
  model "$1" "$3"
  expect_fail "$1" "$2" "${good[@]}" --model-file "$work/$1.json.model"
}
bad not-json "cannot be read as JSON" '{"A": [[1]],'
bad not-object "must hold a JSON object" '[1, 2]'
bad unknown-key "unknown key 'Qq'" '{"A": [[1]], "C": [[1]], "Qq": [[1]], "R": [[1]], "init_mean": [0], "init_cov": [[1]]}'
bad missing-key "lacks the key 'Q'" '{"A": [[1]], "C": [[1]], "R": [[1]], "init_mean": [0], "init_cov": [[1]]}'
bad ragged "'A' has rows of different lengths" '{"A": [[1, 0], [1]], "C": [[1, 0]], "Q": [[1, 0], [0, 1]], "R": [[1]], "init_mean": [0, 0], "init_cov": [[1, 0], [0, 1]]}'
bad not-rows "'Q' must be a non-empty array of rows" '{"A": [[1]], "C": [[1]], "Q": 5, "R": [[1]], "init_mean": [0], "init_cov": [[1]]}'
bad text-entry "'R' has an entry that is not a number at row 1, column 1" '{"A": [[1]], "C": [[1]], "Q": [[1]], "R": [["big"]], "init_mean": [0], "init_cov": [[1]]}'
bad c-shape "The observation matrix C must have 2 columns" '{"A": [[1, 1], [0, 1]], "C": [[1]], "Q": [[1, 0], [0, 1]], "R": [[1]], "init_mean": [0, 0], "init_cov": [[1, 0], [0, 1]]}'
bad a-square "The transition matrix A must be square" '{"A": [[1, 1]], "C": [[1, 0]], "Q": [[1]], "R": [[1]], "init_mean": [0], "init_cov": [[1]]}'
bad mean-length "The initial mean must have 2 entries" '{"A": [[1, 1], [0, 1]], "C": [[1, 0]], "Q": [[1, 0], [0, 1]], "R": [[1]], "init_mean": [0], "init_cov": [[1, 0], [0, 1]]}'
bad q-indefinite "The state noise Q must be symmetric positive semi-definite" '{"A": [[1, 1], [0, 1]], "C": [[1, 0]], "Q": [[1, 2], [2, 1]], "R": [[1]], "init_mean": [0, 0], "init_cov": [[1, 0], [0, 1]]}'
bad q-asymmetric "The state noise Q must be symmetric positive semi-definite" '{"A": [[1, 1], [0, 1]], "C": [[1, 0]], "Q": [[1, 0.5], [0, 1]], "R": [[1]], "init_mean": [0, 0], "init_cov": [[1, 0], [0, 1]]}'
bad r-zero "The observation noise R must be symmetric positive definite" '{"A": [[1]], "C": [[1]], "Q": [[1]], "R": [[0]], "init_mean": [0], "init_cov": [[1]]}'
bad p0-negative "The initial covariance must be symmetric positive definite" '{"A": [[1]], "C": [[1]], "Q": [[1]], "R": [[1]], "init_mean": [0], "init_cov": [[-1]]}'
bad states-count "'states' must be an array of 1 names" '{"A": [[1]], "C": [[1]], "Q": [[1]], "R": [[1]], "init_mean": [0], "init_cov": [[1]], "states": ["a", "b"]}'
bad huge "cannot be read as JSON" '{"A": [[1]], "C": [[1]], "Q": [[1e400]], "R": [[1]], "init_mean": [0], "init_cov": [[1]]}'
expect_fail no-file "cannot be opened" "${good[@]}" --model-file "$work/none.json"
expect_fail column-count "--column must name 2 columns; it names 1" kalman --data "$work/twice.csv" \
  --column a --model-file "$work/twice.json.model"
expect_fail with-fit "do not apply with --model-file" "${good[@]}" --model-file "$work/level.json.model" --fit
expect_fail with-obs-var "do not apply with --model-file" "${good[@]}" --model-file "$work/level.json.model" --obs-var 3
expect_fail not-kalman "Option '--model-file' applies only to model 'kalman'" \
  gmm --data "$data/faithful.csv" --model-file "$work/level.json.model"

finish
echo "all blr infer kalman --model-file checks passed"
