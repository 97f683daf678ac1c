#!/usr/bin/env bash
# Bad input to `blr infer`: each case must exit non-zero with a clear message on stderr naming
# the problem (file, line and column for CSV faults; the option for impossible options).
# Usage: infer_errors.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_errors.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_errors.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(infer)

printf 'x,y,label\n1,2,Yes\n3,4\n5,6,No\n' >"$work/malformed.csv"
printf 'x,y,label\n1,2,Yes\n3,abc,No\n5,6,No\n' >"$work/nonnumeric.csv"
printf 'x,y,label\n1,2,Yes\n3,NaN,No\n5,6,No\n' >"$work/nan.csv"
printf 'x,y,label\n1,2,Yes\n3,,No\n5,6,No\n' >"$work/empty.csv"
printf 'x,y,label\n1,2,Yes\n3,4,Maybe\n5,6,No\n' >"$work/outside.csv"
printf 'x,y,label\n1,2,Yes\n3,4,Maybe\n5,6,No\n7,8,No\n' >"$work/three.csv"
printf 'x,y,label\n1,2,Yes\n3,4,No\n5,6,No\n7,1,Yes\n' >"$work/good.csv"
printf 'x,count\n1,2\n3,-1\n' >"$work/negative.csv"
printf 'x,y,label\n1,2,"Yes\n' >"$work/quote.csv"

good=(--train "$work/good.csv" --label label --positive Yes)
expect_fail malformed-row "malformed.csv', line 3: malformed row" \
  logistic --train "$work/malformed.csv" --label label --positive Yes
expect_fail unclosed-quote "never closed" logistic --train "$work/quote.csv" --label label --positive Yes
expect_fail missing-column "has no column 'nope'" logistic "${good[@]}" --features x,nope
expect_fail missing-label "has no column 'kind'" logistic --train "$work/good.csv" --label kind
expect_fail non-numeric "line 3, column 'y': 'abc' is not a number" \
  logistic --train "$work/nonnumeric.csv" --label label --positive Yes
expect_fail nan-value "line 3, column 'y': the value 'NaN' is not a finite number" \
  logistic --train "$work/nan.csv" --label label --positive Yes
expect_fail empty-value "line 3, column 'y': the value is missing; give --missing drop" \
  logistic --train "$work/empty.csv" --label label --positive Yes
expect_fail label-outside-classes "line 3, column 'label': label 'Maybe' is outside the declared classes" \
  logistic "${good[@]}" --test "$work/outside.csv"
expect_fail three-classes "exactly two classes" logistic --train "$work/three.csv" --label label --positive Yes
expect_fail positive-not-a-class "positive class 'Sure'" logistic --train "$work/good.csv" --label label --positive Sure
expect_fail positive-needed "name the positive one with --positive" logistic --train "$work/good.csv" --label label
expect_fail negative-count "non-negative integer" poisson --train "$work/negative.csv" --label count
expect_fail missing-file "cannot be opened" logistic --train "$work/no-such.csv" --label label
expect_fail method-model "Method 'em' does not apply to model 'logistic'" logistic "${good[@]}" --method em
expect_fail family-without-cvi "applies only to --method cvi" logistic "${good[@]}" --family gaussian-diag
expect_fail bad-family "gaussian-full, gaussian-diag or mixture:K" logistic "${good[@]}" --method cvi --family student
expect_fail zero-mixture "mixture:2" logistic "${good[@]}" --method cvi --family mixture:0
expect_fail negative-prior "prior-precision" logistic "${good[@]}" --prior-precision -1
expect_fail bad-rho "rho" logistic "${good[@]}" --rho 2
expect_fail unknown-model "model" bayesnet --train "$work/good.csv"
expect_fail unknown-method "method" logistic "${good[@]}" --method gibbs
expect_fail zero-components "components" gmm --data "$data/faithful.csv" --components 0
expect_fail too-many-components "exceeds the number of data rows" gmm --data "$data/faithful.csv" --components 1000
expect_fail vmp-diag "covariance full" gmm --data "$data/faithful.csv" --method vmp --covariance diag
expect_fail bad-covariance "Option '--covariance' takes a choice (one of full, diag); got spherical" gmm --data "$data/faithful.csv" --covariance spherical
expect_fail kalman-no-variances "--obs-var" kalman --data "$data/nile.csv" --column volume
expect_fail kalman-negative-var "obs-var" kalman --data "$data/nile.csv" --column volume --obs-var -5 --state-var 1 --fit
expect_fail kalman-bad-model "local-level or local-linear-trend" kalman --data "$data/nile.csv" --model arima --fit
expect_fail kalman-no-data "--data FILE" kalman --column volume --fit
expect_fail gpc-diag "gaussian-full" gpc --train "$data/synth_train.csv" --label yc --method cvi --family gaussian-diag
expect_fail gpc-kernel "rbf" gpc --train "$data/synth_train.csv" --label yc --kernel matern
expect_fail gpc-lengthscale "lengthscale" gpc --train "$data/synth_train.csv" --label yc --lengthscale 0
expect_fail conjugate-no-likelihood "--likelihood" conjugate --data "$data/nile.csv" --column volume
expect_fail conjugate-prior-length "needs 4 numbers" conjugate --data "$data/nile.csv" --column volume \
  --likelihood normal --prior 1,2
expect_fail conjugate-bad-prior "not a number" conjugate --data "$data/nile.csv" --column volume \
  --likelihood normal --prior 1,x,1,1
expect_fail conjugate-vmp-beta "Method 'vmp' does not apply" conjugate --data "$data/pima_train.csv" \
  --column type --likelihood bernoulli --positive Yes --method vmp
expect_fail unwritable-json "does not exist" gmm --data "$data/faithful.csv" \
  --json "$work/no-such-dir/out.json"

expect_fail cvi-start "Option '--cvi-start' must be prior or laplace" logistic --train "$data/pima_train.csv" \
  --label type --positive Yes --method cvi --cvi-start warm
finish
echo "all blr infer error cases passed"
