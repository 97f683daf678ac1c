#!/usr/bin/env bash
# End-to-end tests of `blr train`, `blr eval` and `blr compare` on a tiny Fashion-MNIST subset:
# exit codes for bad input, JSON keys, checkpoints (write, resume, eval, corrupted, truncated).
# Usage: torch_train.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_train.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch


# A tiny run: 256 training and 300 test images, one hidden layer of 32 (add --epochs, --hidden).
base=(--train-limit 256 --test-limit 300 --batch-size 64 --threads 1 --quiet)
tiny=("${base[@]}" --hidden 32 --epochs 1)

# ---- bad input (no data needed: rejected before loading) -------------------------------------
expect_fail unknown-optimizer "Unknown optimizer 'nope'" train --optimizer nope "${tiny[@]}"
expect_fail bad-option-value "takes a number" \
  train --optimizer ivon --ivon-lr abc "${tiny[@]}"
expect_fail negative-lr "lr" train --optimizer adamw --adamw-lr -1 "${tiny[@]}"
expect_fail option-of-other-optimizer "adamw" train --optimizer ivon --adamw-lr 0.1 "${tiny[@]}"
expect_fail unknown-flag "--ivon-bogus" train --optimizer ivon --ivon-bogus 1 "${tiny[@]}"
expect_fail bad-hidden "Hidden widths" train --optimizer sgd --hidden 10,x --epochs 1 "${base[@]}"
expect_fail bad-schedule "Unknown schedule" train --optimizer sgd --schedule linear "${tiny[@]}"
expect_fail bad-model "Unknown model" train --optimizer sgd --model resnet "${tiny[@]}"
expect_fail zero-epochs "epochs" train --optimizer sgd --epochs 0 --hidden 32 "${base[@]}"
expect_fail checkpoint-without-out "--out" train --optimizer sgd --checkpoint-every 1 "${tiny[@]}"
expect_fail missing-data "apt-get install dataset-fashion-mnist" \
  train --optimizer sgd --data-dir "$work/no-such-dir" "${tiny[@]}"
expect_fail missing-checkpoint "no-such.ckpt" eval --checkpoint "$work/no-such.ckpt"
expect_fail resume-missing "no-such.ckpt" train --resume "$work/no-such.ckpt" --quiet
printf 'BLRCKPT\nrubbish' >"$work/rubbish.ckpt"
expect_fail short-checkpoint "truncated" eval --checkpoint "$work/rubbish.ckpt"
expect_fail compare-duplicate "twice" compare --optimizers sgd,sgd "${tiny[@]}"
expect_fail compare-foreign-option "not in --optimizers" \
  compare --optimizers sgd,adamw --ivon-lr 0.1 "${tiny[@]}"
expect_fail compare-unknown "Unknown optimizer" compare --optimizers sgd,bogus "${tiny[@]}"

# ---- runs on real data -------------------------------------------------------------------------
data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist); only the" \
       "bad-input checks ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi

# train with JSON, checkpoints and plots
"$blr" train --optimizer ivon --ivon-lr 0.1 --ivon-hess-init 0.5 --test-samples 4 \
  --schedule cosine --epochs 2 --hidden 32 --checkpoint-every 1 --out "$work/run" \
  --json "$work/train.json" "${base[@]}" >"$work/out" 2>"$work/err" ||
  { fail "train: exit status $?"; cat "$work/err" >&2; }
grep -q "predictive (K=4)" "$work/out" || fail "train: table lacks the predictive row"
for key in '"optimizers"' '"ivon"' '"mean"' '"predictive"' '"accuracy"' '"nll"' '"ece"' \
    '"brier"' '"epoch_seconds"' '"step_ms"' '"auroc_predictive"'; do
  grep -q "$key" "$work/train.json" || fail "train JSON lacks $key"
done
[ -f "$work/run/ivon.ckpt" ] || fail "train: no final checkpoint"
[ -f "$work/run/checkpoints/ivon-epoch-1.ckpt" ] || fail "train: no epoch-1 checkpoint"
if command -v gnuplot >/dev/null; then
  [ -s "$work/run/curves.png" ] || fail "train: no curves.png"
  [ -s "$work/run/reliability.png" ] || fail "train: no reliability.png"
fi

# resume from epoch 1 to the end: same final test NLL at the mean as the uninterrupted run
"$blr" train --resume "$work/run/checkpoints/ivon-epoch-1.ckpt" --threads 1 --quiet \
  --test-samples 4 --json "$work/resumed.json" >"$work/out" 2>"$work/err" ||
  { fail "resume: exit status $?"; cat "$work/err" >&2; }
# the "nll" line inside "test": {"mean": {...}} (keys are sorted; "mean" occurs only there)
nll() { sed -n '/"mean": {/,/}/p' "$1" | grep '"nll"' | head -1; }
[ "$(nll "$work/train.json")" = "$(nll "$work/resumed.json")" ] ||
  fail "resume: test NLL differs: $(nll "$work/train.json") vs $(nll "$work/resumed.json")"
expect_fail resume-with-config "drop --seed" train --resume "$work/run/ivon.ckpt" --seed 5

# eval of the final checkpoint
"$blr" eval --checkpoint "$work/run/ivon.ckpt" --test-samples 3 --threads 1 --quiet \
  --json "$work/eval.json" >"$work/out" 2>"$work/err" || { fail "eval: exit status $?"; cat "$work/err" >&2; }
grep -q '"samples": 3' "$work/eval.json" || fail "eval JSON lacks samples 3"

# corrupted and truncated checkpoints
cp "$work/run/ivon.ckpt" "$work/corrupt.ckpt"
size=$(stat -c %s "$work/corrupt.ckpt")
printf '\xff\xfe\xfd\xfc' | dd of="$work/corrupt.ckpt" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect_fail corrupted-checkpoint "checksum" eval --checkpoint "$work/corrupt.ckpt"
head -c $((size - 50)) "$work/run/ivon.ckpt" >"$work/truncated.ckpt"
expect_fail truncated-checkpoint "truncated" eval --checkpoint "$work/truncated.ckpt"
expect_fail resume-corrupted "checksum" train --resume "$work/corrupt.ckpt"

# LeNet-5 with VOGN (per-example squared gradients of Conv2d and Linear layers)
"$blr" train --model lenet --optimizer vogn --vogn-lr 1e-3 --test-samples 2 --epochs 1 \
  --json "$work/lenet.json" "${base[@]}" >"$work/out" 2>"$work/err" ||
  { fail "lenet/vogn: exit status $?"; cat "$work/err" >&2; }
grep -q '"lenet5' "$work/lenet.json" || fail "lenet/vogn: JSON lacks the model"

# compare: one table, JSON keys per optimizer
"$blr" compare --optimizers sgd,adamw --sgd-lr 0.05 --sgd-momentum 0.9 --adamw-lr 1e-3 \
  --json "$work/compare.json" "${tiny[@]}" >"$work/out" 2>"$work/err" ||
  { fail "compare: exit status $?"; cat "$work/err" >&2; }
grep -q '^sgd ' "$work/out" && grep -q '^adamw ' "$work/out" || fail "compare: table rows missing"
for key in '"sgd"' '"adamw"' '"test"' '"mean"' '"predictive"' '"brier"' '"epoch_seconds"'; do
  grep -q "$key" "$work/compare.json" || fail "compare JSON lacks $key"
done

# bench step: both isolation modes, JSON keys, bad input
for mode in process shared; do
  "$blr" bench step --params 1000 --repeats 3 --threads 1 --isolation $mode \
    --json "$work/step-$mode.json" >"$work/out" 2>"$work/err" ||
    { fail "bench step ($mode): exit status $?"; cat "$work/err" >&2; }
  for key in '"ivon"' '"vogn"' '"ogn"' '"vadam"' '"adamw"' '"sgd"' '"median_ms"' "\"isolation\": \"$mode\""; do
    grep -q "$key" "$work/step-$mode.json" || fail "bench step ($mode) JSON lacks $key"
  done
done
expect_fail bench-step-params "--params must be a whole number" bench step --params 0.5
expect_fail bench-step-threads "--threads: it must be at least 0; got -1" bench step --params 1000 --threads -1

# bench epoch / predict: a tiny task, the table, JSON keys and bad input
"$blr" bench epoch --optimizers ivon,vogn,adamw --train-limit 256 --batch-size 64 --hidden 32 \
  --rounds 2 --threads 1 --json "$work/epoch.json" >"$work/out" 2>"$work/err" ||
  { fail "bench epoch: exit status $?"; cat "$work/err" >&2; }
grep -q '^vogn ' "$work/out" || fail "bench epoch: table row missing"
for key in '"ivon"' '"vogn"' '"adamw"' '"median_epoch_seconds"' '"ratio_to_adamw"' '"steps_per_epoch"'; do
  grep -q "$key" "$work/epoch.json" || fail "bench epoch JSON lacks $key"
done
grep -q '"steps_per_epoch": 4' "$work/epoch.json" || fail "bench epoch: 256/64 should be 4 steps"
"$blr" bench predict --samples 3 --test-limit 200 --hidden 32 --repeats 1 --threads 1 \
  --json "$work/predict.json" >"$work/out" 2>"$work/err" ||
  { fail "bench predict: exit status $?"; cat "$work/err" >&2; }
for key in '"samples": 3' '"examples": 200' '"per_sample_ratio"'; do
  grep -q "$key" "$work/predict.json" || fail "bench predict JSON lacks $key"
done
expect_fail bench-epoch-no-adamw "must include adamw" bench epoch --optimizers ivon,sgd --train-limit 256
expect_fail bench-epoch-rounds "--rounds must be at least 1" bench epoch --rounds 0 --train-limit 256
expect_fail bench-epoch-twice "appears twice" bench epoch --optimizers adamw,adamw --train-limit 256
expect_fail bench-epoch-foreign-option "not in --optimizers" \
  bench epoch --optimizers ivon,adamw --sgd-lr 0.1 --train-limit 256
expect_fail bench-predict-point-estimate "needs an optimizer with a posterior" \
  bench predict --optimizer adamw --test-limit 200 --hidden 32
expect_fail bench-predict-samples "at least 1" bench predict --samples 0 --test-limit 200 --hidden 32

finish
echo "all torch CLI checks passed"
