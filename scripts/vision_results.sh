#!/usr/bin/env bash
# Issue 29, item 5: LeNet-5 (or ResNet-20) on all of Fashion-MNIST, the image-small recipe
# (image-resnet for ResNet-20), 10 epochs, a validation split of 10 % (for temperature scaling),
# each method with the seeds given:
#   compare   IVON (K = 32), AdamW, SGD and MC dropout, each with temperature-scaled rows
#   ensemble  a deep ensemble of 5 AdamW members (seeds s..s+4), temperature-scaled too
#   laplace   the post-hoc Laplace (Kronecker, probit) of the AdamW run of `compare` (with TAG,
#             of `compare` run with that TAG), δ by the marginal likelihood
#   laplace-grid  the same with δ by the validation NLL over laplace-torch's grid (gridsearch)
#   mc-dropout  MC dropout alone (K = 32), for runs of `compare` made before MC dropout kept the
#             model's input whole (2026-11-28)
# Usage: scripts/vision_results.sh BLR OUTDIR lenet|resnet20 compare|ensemble|laplace|laplace-grid|mc-dropout [SEED...]
# (default seed 0). Each run writes OUTDIR/<model>-<what>-seed<S>.json; an existing file is kept.
# EPOCHS (default 10), SAMPLES (the predictive's K, default 32) and OPTIMIZERS (compare's list,
# default ivon,adamw,sgd,mc-dropout) shorten the protocol where the machine cannot afford it.
# TAG names a part of `compare` run on its own (OPTIMIZERS=ivon TAG=ivon writes
# <model>-compare-ivon-seed<S>.json, which results_table.py reads with the other compare files),
# so that methods can run side by side on two cores; FLAGS adds options to every training run.
# SUBSET (laplace, laplace-grid: all or last-layer, default all) is the weights the Laplace covers:
# last-layer for a network with batch norm, whose per-example gradients blr refuses.
# PROTOCOL=uncertainty-baselines runs LeNet-5 as google/uncertainty-baselines' deterministic
# baseline was run (baselines/mnist/deterministic.py: 50 000 training images, the rest for
# validation; Adam at 1e-3 without weight decay or schedule; batch 256; 5 000 steps = 25 epochs;
# an ensemble of 10 such runs): 25 epochs, batch 256, a constant rate, AdamW's weight decay 0, a
# validation fraction of 0.16667 (10 000 of the 60 000 images, drawn with the run's seed, where
# the baseline held out the last 10 000), ensembles of 10. The other optimizers keep the recipe's
# settings under the same budget and schedule. Write its runs to an OUTDIR of their own.
# SCHEDULE replaces its constant rate (SCHEDULE=cosine TAG=cosine: the IVON paper's schedule under
# the same budget) and MEMBERS its ensembles' size; FLAGS="--adamw-weight-decay W" replaces its
# AdamW weight decay of 0 (the validation search of stop 43).
set -euo pipefail
blr=${1:?usage: vision_results.sh BLR OUTDIR lenet|resnet20 compare|ensemble|laplace|laplace-grid|mc-dropout [SEED...]}
out=${2:?}
model=${3:?}
what=${4:?}
shift 4
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(0)
mkdir -p "$out"
export OMP_WAIT_POLICY=PASSIVE
recipe=image-small
[ "$model" = resnet20 ] && recipe=image-resnet
epochs=${EPOCHS:-10}
validation=0.1
members=5
protocol=()
adamw_protocol=()  # AdamW's own flags: given only to runs that train AdamW (blr refuses others')
case "${PROTOCOL:-}" in
  "") ;;
  uncertainty-baselines)
    epochs=${EPOCHS:-25}; validation=0.16667; members=${MEMBERS:-10}
    protocol=(--batch-size 256 --schedule "${SCHEDULE:-constant}")
    adamw_protocol=(--adamw-weight-decay 0) ;;
  *) echo "vision_results.sh: PROTOCOL is uncertainty-baselines or unset; got '$PROTOCOL'" >&2
     exit 2 ;;
esac
# A weight decay given in FLAGS replaces the protocol's (blr refuses a flag given twice).
[[ " ${FLAGS:-} " == *" --adamw-weight-decay "* ]] && adamw_protocol=()
samples=${SAMPLES:-32}
optimizers=${OPTIMIZERS:-ivon,adamw,sgd,mc-dropout}
read -r -a flags <<<"${FLAGS:-}"
common=(--model "$model" --recipe "$recipe" --epochs "$epochs" --validation "$validation"
        --temperature-scaling --threads 1 --quiet ${protocol[@]+"${protocol[@]}"}
        ${flags[@]+"${flags[@]}"})
tag=${TAG:+-$TAG}
compare_adamw=()
[[ ",$optimizers," == *,adamw,* ]] && compare_adamw=(${adamw_protocol[@]+"${adamw_protocol[@]}"})
for seed in "${seeds[@]}"; do
  json="$out/$model-$what$tag-seed$seed.json"
  [ -s "$json" ] && { echo "reusing $json"; continue; }
  echo "== $model $what seed $seed"
  case "$what" in
    compare)
      "$blr" compare --optimizers "$optimizers" --seed "$seed" --test-samples "$samples" \
        "${common[@]}" ${compare_adamw[@]+"${compare_adamw[@]}"} --out "$out/$model$tag-seed$seed" \
        --json "$json.tmp" \
        >/dev/null ;;
    mc-dropout)
      "$blr" compare --optimizers mc-dropout --seed "$seed" --test-samples "$samples" \
        "${common[@]}" --out "$out/$model-mc-dropout-seed$seed" --json "$json.tmp" >/dev/null ;;
    ensemble)
      "$blr" ensemble --members "$members" --optimizer adamw --seed "$seed" "${common[@]}" \
        ${adamw_protocol[@]+"${adamw_protocol[@]}"} \
        --json "$json.tmp" >/dev/null ;;
    laplace)
      "$blr" laplace --checkpoint "$out/$model$tag-seed$seed/adamw.ckpt" --structure kron \
        --subset "${SUBSET:-all}" --predictive probit --threads 1 --quiet --json "$json.tmp" >/dev/null ;;
    laplace-grid)
      "$blr" laplace --checkpoint "$out/$model$tag-seed$seed/adamw.ckpt" --structure kron \
        --subset "${SUBSET:-all}" --predictive probit --prior-precision-method gridsearch --threads 1 --quiet \
        --json "$json.tmp" >/dev/null ;;
    *) echo "vision_results.sh: compare, ensemble, laplace, laplace-grid or mc-dropout" >&2; exit 2 ;;
  esac
  mv "$json.tmp" "$json"
done
