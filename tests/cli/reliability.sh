#!/usr/bin/env bash
# Findings of the reliability issue, each refused in one sentence with a non-zero exit before any
# work or output (docs/reliability.md): option ranges (--seed, --tolerance, --max-iterations,
# --threads), results that are not finite (no table is printed), VMP on duplicated points,
# unwritable outputs found before work, the exit status of errors (2, never 3), a model too large
# for the machine refused at once, and --threads above the cores clamped with a warning.
# Usage: reliability.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: reliability.sh <path-to-blr> <source-dir>}
src=${2:?usage: reliability.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
pima=(infer logistic --train "$src/data/pima_train.csv" --positive Yes)

# expect_status NAME STATUS TEXT ARGS...: exit status STATUS, TEXT on stderr, nothing on stdout.
expect_status() {
  local name=$1 status=$2 text=$3
  shift 3
  "$blr" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq "$status" ] || fail "$name: exit status $rc, expected $status"
  grep -qiF -- "$text" "$work/err" || { fail "$name: stderr lacks '$text':"; cat "$work/err" >&2; }
  [ ! -s "$work/out" ] || { fail "$name: something was printed on stdout:"; head -3 "$work/out" >&2; }
  [ "$(grep -c . "$work/err")" -le 2 ] || { fail "$name: more than two lines on stderr"; cat "$work/err" >&2; }
}

# ---- option ranges --------------------------------------------------------------------------------
expect_fail seed-negative "--seed: it must be at least 0; got -1" "${pima[@]}" --seed -1
expect_fail seed-text "Option '--seed' takes an integer; got '1.5'" "${pima[@]}" --seed 1.5
expect_fail tolerance-negative "--tolerance: it must be a positive finite number; got -1" "${pima[@]}" --tolerance -1
expect_fail tolerance-nan "positive finite number; got nan" "${pima[@]}" --tolerance nan
expect_fail tolerance-zero "positive finite number; got 0" "${pima[@]}" --tolerance 0
expect_fail iterations-zero "--max-iterations: it must be at least 1; got 0" "${pima[@]}" --max-iterations 0
expect_fail iterations-negative "it must be at least 1; got -5" "${pima[@]}" --max-iterations -5
"$blr" "${pima[@]}" --tolerance 1e-10 --max-iterations 50 --seed 3 >/dev/null 2>&1 ||
  fail "valid --tolerance/--max-iterations/--seed refused"

# ---- results that are not finite: an error naming the entry, exit 2, no table -----------------
# (Laplace: the Newton step whose precision overflows is named, DESIGN §4 principle 5.)
expect_status prior-1e308 2 "Step 1 produced a non-finite value in 'precision'" "${pima[@]}" --prior-precision 1e308
expect_status conjugate-1e308 2 "produced a result that is not finite" \
  infer conjugate --likelihood poisson --prior 1e308,1e308 --data "$src/data/nile.csv" --column volume
printf 'year,volume\n' >"$work/huge.csv"
for i in $(seq 1 20); do printf '%d,%de300\n' "$i" $((i % 3 + 1)) >>"$work/huge.csv"; done
expect_status kalman-huge 2 "The Kalman filter's log-likelihood is not finite: the observations or the model's entries are too large for double precision; rescale them" \
  infer kalman --data "$work/huge.csv" --column volume --obs-var 1 --state-var 1
# V = W = 1e308: the innovation variance of step 2 (P + V) overflows, so the log-likelihood is -inf
# (the states themselves stay finite: P' = P/d does not overflow).
expect_status kalman-huge-variances 2 "The Kalman filter's log-likelihood is not finite: the observations or the model's entries are too large for double precision; rescale them" \
  infer kalman --data "$work/huge.csv" --column volume --obs-var 1e308 --state-var 1e308
printf 'x,y\n' >"$work/dup.csv"
for i in $(seq 1 30); do printf '1.0,2.0\n' >>"$work/dup.csv"; done
expect_status vmp-duplicates 2 "data covariance is singular" infer gmm --method vmp --data "$work/dup.csv" --components 2
expect_status svi-duplicates 2 "data covariance is singular" infer gmm --method svi --data "$work/dup.csv" --components 2

# ---- outputs checked before work ----------------------------------------------------------------
expect_status json-missing-dir 2 "the directory '$work/no/such' of '$work/no/such/r.json' does not exist" \
  "${pima[@]}" --json "$work/no/such/r.json"
mkdir -p "$work/adir"
expect_status json-is-dir 2 "which is a directory, not a file" "${pima[@]}" --json "$work/adir"
printf 'x' >"$work/afile"
expect_status table1-json-under-file 2 "does not exist" table1 --json "$work/afile/t.json"

# ---- the LibTorch commands ------------------------------------------------------------------------
if "$blr" --help 2>/dev/null | grep -q '^ *train '; then
  expect_status hidden-huge 2 "needing about 24 TB" train --hidden 1000000,1000000 --epochs 1
  expect_status out-under-file 2 "cannot be created because '$work/afile' is not a directory" \
    train --epochs 1 --out "$work/afile/run"
  expect_status out-is-file 2 "which is a file, not a directory" train --epochs 1 --out "$work/afile"
  expect_fail threads-negative "--threads: it must be at least 0" train --threads -2
  # LibTorch's own runtime_error (a learning rate beyond float's range): exit 2, not "a bug".
  expect_status lr-beyond-float 2 "cannot be converted to type float without overflow" \
    train --optimizer sgd --sgd-lr 1e39 --epochs 1 --train-limit 64 --test-limit 64 --quiet
  cores=$(nproc)
  "$blr" bench step --params 1000 --repeats 1 --threads $((cores + 3)) >/dev/null 2>"$work/err" ||
    { fail "bench step --threads: exit $?"; cat "$work/err" >&2; }
  grep -q "warning: --threads $((cores + 3)) exceeds the $cores cores of this machine; using $cores" \
    "$work/err" || { fail "no warning for --threads above the cores"; cat "$work/err" >&2; }
fi
finish
