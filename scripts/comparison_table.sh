#!/usr/bin/env bash
# The comparison table of docs/results.md (issue 10, item 8): every LibTorch optimizer of blr on one
# Fashion-MNIST task, with settings chosen on a validation split and never on the test set.
#
#   probe    For each model, six settings per optimizer (the GRID below), each trained on the first
#            10 000 training images for 3 epochs, 10 % of them held out (--validation 0.1, seed 0);
#            and six more for VOGN and Vadam (GRID2, a second round after the first).
#   confirm  MLP only: each optimizer's two best probe settings, trained with the full budget on
#            54 000 images (10 epochs, 6 000 held out).
#   final    The chosen setting of each optimizer (lowest validation NLL of the prediction the
#            method is used for: the posterior predictive of the Bayesian methods, K = 16; the mean
#            of AdamW, SGD and SAM), re-trained on all 60 000 images for 10 epochs, seeds 0 and 1,
#            scored on the 10 000 test images with K = 32; then the post-hoc Laplace variants fitted
#            on the AdamW solution of the same run, and BayesBiNN vs STE on the binary MLP.
#   table    The markdown tables (scripts/comparison_table.py).
#
# IVON's setting is the one the 17-configuration sweep chose on the same validation split
# (scripts/ivon_sweep.sh; docs/results.md, "Best IVON configuration found"): it is not swept again.
# The LeNet-5 choice rests on the probe alone (no confirm stage), for time.
#
# Usage: scripts/comparison_table.sh [BLR] [OUT] [STAGE...]  (defaults: build/blr, comparison-out,
# all stages). Every run writes OUT/<stage>/<name>.json; an existing file is reused, so an
# interrupted run resumes where it stopped. Two runs go at a time, each on one LibTorch thread
# (PARALLEL=N to change).
set -euo pipefail
BLR=${1:-build/blr}
OUT=${2:-comparison-out}
shift 2 || shift $#
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(probe confirm final table)
PARALLEL=${PARALLEL:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
export OMP_WAIT_POLICY=PASSIVE
if [ ! -x "$BLR" ]; then
  echo "comparison_table: '$BLR' is not an executable; build blr first." >&2
  exit 2
fi
mkdir -p "$OUT"

OPTIMIZERS=(adamw sgd sam vadam vogn kfac bsam mc-dropout adabayes adabayes-fp)
# Six settings per optimizer, '|'-separated; the n-th probe run takes the n-th setting of each.
declare -A GRID=(
  [adamw]="--adamw-lr 1e-3 --adamw-weight-decay 1e-4|--adamw-lr 2e-3 --adamw-weight-decay 1e-4|--adamw-lr 5e-4 --adamw-weight-decay 1e-4|--adamw-lr 1e-3 --adamw-weight-decay 1e-2|--adamw-lr 3e-3 --adamw-weight-decay 1e-4|--adamw-lr 2e-3 --adamw-weight-decay 1e-2"
  [sgd]="--sgd-lr 0.05 --sgd-weight-decay 5e-4|--sgd-lr 0.1 --sgd-weight-decay 5e-4|--sgd-lr 0.02 --sgd-weight-decay 5e-4|--sgd-lr 0.05 --sgd-weight-decay 1e-4|--sgd-lr 0.2 --sgd-weight-decay 5e-4|--sgd-lr 0.1 --sgd-weight-decay 1e-4"
  [sam]="--sam-lr 0.03 --sam-rho 0.05|--sam-lr 0.05 --sam-rho 0.05|--sam-lr 0.1 --sam-rho 0.05|--sam-lr 0.05 --sam-rho 0.1|--sam-lr 0.1 --sam-rho 0.1|--sam-lr 0.05 --sam-rho 0.02"
  [vadam]="--vadam-lr 1e-3 --vadam-prior-precision 100 --vadam-prec-init 100|--vadam-lr 1e-3 --vadam-prior-precision 1e3 --vadam-prec-init 1e3|--vadam-lr 1e-3 --vadam-prior-precision 1e4 --vadam-prec-init 1e4|--vadam-lr 3e-3 --vadam-prior-precision 1e3 --vadam-prec-init 1e3|--vadam-lr 3e-3 --vadam-prior-precision 1e4 --vadam-prec-init 1e4|--vadam-lr 3e-4 --vadam-prior-precision 1e3 --vadam-prec-init 1e3"
  [vogn]="--vogn-lr 1e-3 --vogn-prior-precision 100|--vogn-lr 1e-3 --vogn-prior-precision 1e3|--vogn-lr 1e-3 --vogn-prior-precision 1e4|--vogn-lr 1e-4 --vogn-prior-precision 1e3|--vogn-lr 1e-4 --vogn-prior-precision 1e4|--vogn-lr 1e-3 --vogn-prior-precision 1e3 --vogn-damping 1e-3"
  [kfac]="--kfac-lr 1e-3 --kfac-prior-precision 1|--kfac-lr 1e-3 --kfac-prior-precision 100|--kfac-lr 1e-3 --kfac-prior-precision 1e3|--kfac-lr 3e-3 --kfac-prior-precision 100|--kfac-lr 3e-4 --kfac-prior-precision 1|--kfac-lr 3e-3 --kfac-prior-precision 1"
  [bsam]="--bsam-lr 0.5 --bsam-rho 0.01|--bsam-lr 0.25 --bsam-rho 0.01|--bsam-lr 0.1 --bsam-rho 0.01|--bsam-lr 0.5 --bsam-rho 0.05|--bsam-lr 0.25 --bsam-rho 0.05|--bsam-lr 1.0 --bsam-rho 0.01"
  [mc-dropout]="--mc-dropout-lr 1e-3 --mc-dropout-keep-probability 0.8|--mc-dropout-lr 2e-3 --mc-dropout-keep-probability 0.8|--mc-dropout-lr 5e-4 --mc-dropout-keep-probability 0.8|--mc-dropout-lr 1e-3 --mc-dropout-keep-probability 0.9|--mc-dropout-lr 2e-3 --mc-dropout-keep-probability 0.9|--mc-dropout-lr 1e-3 --mc-dropout-keep-probability 0.5"
  [adabayes]="--adabayes-lr 1e-3 --adabayes-lr-sgd 0.1|--adabayes-lr 3e-3 --adabayes-lr-sgd 0.1|--adabayes-lr 1e-3 --adabayes-lr-sgd 0.3|--adabayes-lr 1e-3 --adabayes-lr-sgd 1|--adabayes-lr 3e-3 --adabayes-lr-sgd 1|--adabayes-lr 1e-3 --adabayes-lr-sgd 0.03"
  [adabayes-fp]="--adabayes-fp-lr 1e-3 --adabayes-fp-lr-sgd 0.1|--adabayes-fp-lr 3e-3 --adabayes-fp-lr-sgd 0.1|--adabayes-fp-lr 1e-3 --adabayes-fp-lr-sgd 0.3|--adabayes-fp-lr 1e-3 --adabayes-fp-lr-sgd 1|--adabayes-fp-lr 3e-3 --adabayes-fp-lr-sgd 1|--adabayes-fp-lr 1e-3 --adabayes-fp-lr-sgd 0.03"
)
# A second round for VOGN and Vadam, whose first round stayed far behind: a tempered posterior
# (ess = 10 or 100 times the training-set size N, "10N" in the flags; the noise and the prior's
# weight decay per example shrink by that factor), as the VOGN papers' data-augmentation factor.
ROUND2=(vogn vadam)
declare -A GRID2=(
  [vogn]="--vogn-lr 1e-3 --vogn-prior-precision 100 --vogn-ess 10N|--vogn-lr 1e-3 --vogn-prior-precision 100 --vogn-ess 100N|--vogn-lr 1e-4 --vogn-prior-precision 100 --vogn-ess 10N|--vogn-lr 1e-3 --vogn-prior-precision 10 --vogn-ess 10N|--vogn-lr 1e-3 --vogn-prior-precision 1e3 --vogn-ess 10N|--vogn-lr 1e-4 --vogn-prior-precision 10 --vogn-ess 100N"
  [vadam]="--vadam-lr 1e-3 --vadam-prior-precision 100 --vadam-prec-init 100 --vadam-ess 10N|--vadam-lr 3e-3 --vadam-prior-precision 100 --vadam-prec-init 100 --vadam-ess 10N|--vadam-lr 1e-3 --vadam-prior-precision 1e3 --vadam-prec-init 1e3 --vadam-ess 10N|--vadam-lr 3e-3 --vadam-prior-precision 1e3 --vadam-prec-init 1e3 --vadam-ess 10N|--vadam-lr 1e-3 --vadam-prior-precision 100 --vadam-prec-init 100 --vadam-ess 100N|--vadam-lr 3e-3 --vadam-prior-precision 10 --vadam-prec-init 10 --vadam-ess 10N"
)
IVON="--ivon-lr 0.5 --ivon-hess-init 0.2 --ivon-weight-decay 1e-4"
read -r -a MODELS <<<"${MODELS:-mlp lenet}"  # MODELS="mlp" for one model
# Budgets (smaller values only for a quick check of the script itself).
PROBE_LIMIT=${PROBE_LIMIT:-10000} PROBE_EPOCHS=${PROBE_EPOCHS:-3} EPOCHS=${EPOCHS:-10}
TRAIN_LIMIT=${TRAIN_LIMIT:-0} VALIDATION_TEST_LIMIT=${VALIDATION_TEST_LIMIT:-1000}
COMMON=(--data fashion-mnist --batch-size 128 --schedule cosine --threads 1 --quiet)

setting() { # setting OPTIMIZER N [ROUND]: the N-th (1-based) grid entry of OPTIMIZER
  local IFS='|'
  local -a entries
  if [ "${3:-1}" = 2 ]; then read -r -a entries <<<"${GRID2[$1]}"; else read -r -a entries <<<"${GRID[$1]}"; fi
  echo "${entries[$(($2 - 1))]}"
}

# sized FLAGS N: the flags with "10N" and "100N" replaced by those multiples of N.
sized() { local f=${1//100N/$((100 * $2))}; echo "${f//10N/$((10 * $2))}"; }

# Runs the queued jobs (lines "JSON<TAB>blr arguments") PARALLEL at a time; a job whose JSON exists
# is skipped, and a failed job stops the script after the others finish.
run_queue() {
  local queue=$1
  grep -v '^$' "$queue" | while IFS=$'\t' read -r json args; do
    [ -s "$json" ] && continue
    printf '%s\t%s\n' "$json" "$args"
  done | tr '\n' '\0' | xargs -0 -r -P "$PARALLEL" -I{} bash -c '
    json=${1%%$'"'"'\t'"'"'*}; args=${1#*$'"'"'\t'"'"'}
    echo "== $(date +%H:%M:%S) start $json" >&2
    # shellcheck disable=SC2086
    if '"$BLR"' $args --json "$json.tmp" >"${json%.json}.log" 2>&1; then
      mv "$json.tmp" "$json"; echo "== $(date +%H:%M:%S) done  $json" >&2
    else echo "== FAILED: $json (see ${json%.json}.log)" >&2; exit 255; fi' _ {}
}

stage_probe() {
  mkdir -p "$OUT/probe"
  local queue="$OUT/probe/queue.tsv"
  : >"$queue"
  for model in "${MODELS[@]}"; do
    for n in 1 2 3 4 5 6; do
      local flags=""
      : >"$OUT/probe/$model-$n.flags"
      for opt in "${OPTIMIZERS[@]}"; do
        flags+=" $(setting "$opt" "$n")"
        printf '%s\t%s\n' "$opt" "$(setting "$opt" "$n")" >>"$OUT/probe/$model-$n.flags"
      done
      printf '%s\t%s\n' "$OUT/probe/$model-$n.json" "compare ${COMMON[*]} --model $model \
--optimizers $(IFS=,; echo "${OPTIMIZERS[*]}") --train-limit $PROBE_LIMIT --validation 0.1 \
--epochs $PROBE_EPOCHS --test-limit $VALIDATION_TEST_LIMIT --test-samples 16 --seed 0$flags" >>"$queue"
      flags=""
      : >"$OUT/probe/$model-r2-$n.flags"
      for opt in "${ROUND2[@]}"; do
        flags+=" $(sized "$(setting "$opt" "$n" 2)" "$((PROBE_LIMIT * 9 / 10))")"
        printf '%s\t%s\n' "$opt" "$(setting "$opt" "$n" 2)" >>"$OUT/probe/$model-r2-$n.flags"
      done
      printf '%s\t%s\n' "$OUT/probe/$model-r2-$n.json" "compare ${COMMON[*]} --model $model \
--optimizers $(IFS=,; echo "${ROUND2[*]}") --train-limit $PROBE_LIMIT --validation 0.1 \
--epochs $PROBE_EPOCHS --test-limit $VALIDATION_TEST_LIMIT --test-samples 16 --seed 0$flags" >>"$queue"
    done
  done
  run_queue "$queue"
}

# rank SOURCE MODEL OPTIMIZER N: the flags of OPTIMIZER's N-th best setting in OUT/SOURCE (by
# validation NLL).
rank() { /usr/bin/env python3 "$HERE/comparison_table.py" rank "$OUT" "$@"; }

stage_confirm() {
  mkdir -p "$OUT/confirm"
  local queue="$OUT/confirm/queue.tsv"
  : >"$queue"
  for n in 1 2; do
    local flags=""
    : >"$OUT/confirm/mlp-$n.flags"
    for opt in "${OPTIMIZERS[@]}"; do
      flags+=" $(sized "$(rank probe mlp "$opt" "$n")" "$(((TRAIN_LIMIT > 0 ? TRAIN_LIMIT : 60000) * 9 / 10))")"
      printf '%s\t%s\n' "$opt" "$(rank probe mlp "$opt" "$n")" >>"$OUT/confirm/mlp-$n.flags"
    done
    printf '%s\t%s\n' "$OUT/confirm/mlp-$n.json" "compare ${COMMON[*]} --model mlp \
--optimizers $(IFS=,; echo "${OPTIMIZERS[*]}") --validation 0.1 --epochs $EPOCHS \
--train-limit $TRAIN_LIMIT --test-limit $VALIDATION_TEST_LIMIT \
--test-samples 16 --seed 0$flags" >>"$queue"
  done
  run_queue "$queue"
}

stage_final() {
  mkdir -p "$OUT/final"
  local queue="$OUT/final/queue.tsv"
  : >"$queue"
  for model in "${MODELS[@]}"; do
    local source=confirm
    [ "$model" = mlp ] || source=probe
    local flags=""
    for opt in "${OPTIMIZERS[@]}"; do
      flags+=" $(sized "$(rank "$source" "$model" "$opt" 1)" "$((TRAIN_LIMIT > 0 ? TRAIN_LIMIT : 60000))")"
    done
    for seed in 0 1; do
      printf '%s\t%s\n' "$OUT/final/$model-seed$seed.json" "compare ${COMMON[*]} --model $model \
--optimizers ivon,$(IFS=,; echo "${OPTIMIZERS[*]}") --epochs $EPOCHS --train-limit $TRAIN_LIMIT --test-samples 32 --seed $seed \
$IVON$flags --out $OUT/final/$model-seed$seed" >>"$queue"
    done
  done
  for seed in 0 1; do  # the binary MLP, learning rates chosen in docs/results.md "Binary MLP"
    printf '%s\t%s\n' "$OUT/final/binary-mlp-seed$seed.json" "compare ${COMMON[*]} \
--model binary-mlp --optimizers bayesbinn,ste --bayesbinn-lr 1e-4 --ste-lr 1e-3 --epochs $EPOCHS \
--train-limit $TRAIN_LIMIT --test-samples 16 --seed $seed" >>"$queue"
  done
  run_queue "$queue"
  : >"$queue"
  for model in "${MODELS[@]}"; do
    for seed in 0 1; do
      local ckpt="$OUT/final/$model-seed$seed/adamw.ckpt"
      for variant in "diag probit" "kron probit" "kron mc"; do
        read -r structure predictive <<<"$variant"
        printf '%s\t%s\n' "$OUT/final/$model-seed$seed-laplace-$structure-$predictive.json" \
          "laplace --checkpoint $ckpt --structure $structure --predictive $predictive \
--test-samples 32 --threads 1 --quiet" >>"$queue"
      done
    done
  done
  run_queue "$queue"
}

stage_table() { /usr/bin/env python3 "$HERE/comparison_table.py" table "$OUT"; }

for stage in "${STAGES[@]}"; do
  case $stage in
    probe | confirm | final | table) "stage_$stage" ;;
    *) echo "comparison_table: unknown stage '$stage' (probe, confirm, final or table)." >&2; exit 2 ;;
  esac
done
