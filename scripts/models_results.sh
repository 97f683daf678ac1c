#!/usr/bin/env bash
# The small-scale runs of docs/results.md "ResNet-20 and the GPT-style language model" (issue 12):
#   lm-grid   IVON vs AdamW on the fortunes language model, seed 0, the learning-rate grid (chosen on
#             validation perplexity of the posterior predictive / of AdamW's mean)
#   lm-seeds  the chosen settings with seeds 0 and 1 (same token budget for both optimizers)
#   resnet    IVON vs AdamW vs SGD on ResNet-20, Fashion-MNIST training subset
# Usage: scripts/models_results.sh BLR OUTDIR lm-grid|lm-seeds|resnet  (runs are bounded and niced;
# the machine is shared, one LibTorch thread).
set -euo pipefail
blr=${1:?usage: models_results.sh BLR OUTDIR lm-grid|lm-seeds|resnet}
out=${2:?}
what=${3:?}
mkdir -p "$out"
export OMP_WAIT_POLICY=PASSIVE
# GPT 2 layers × 4 heads × width 64, context 64; 1500 training windows (96 000 tokens) × 2 epochs,
# batch 32; validation and test: the first 300 windows of their splits (19 200 tokens each).
lm=(--model gpt --data fortunes --gpt-context 64 --gpt-layers 2 --gpt-heads 4 --gpt-width 64
    --train-limit 1500 --test-limit 300 --epochs 2 --batch-size 32 --schedule cosine
    --test-samples 16 --threads 1 --quiet)
ivon_fixed=(--ivon-hess-init 0.1 --ivon-ess 96000 --ivon-weight-decay 0)
adamw_fixed=(--adamw-weight-decay 0)
case "$what" in
  lm-grid)
    for pair in "1e-3 0.1" "3e-3 0.3" "1e-2 1.0"; do
      set -- $pair
      nice -n 5 "$blr" compare --optimizers adamw,ivon --seed 0 "${lm[@]}" \
        --adamw-lr "$1" "${adamw_fixed[@]}" --ivon-lr "$2" "${ivon_fixed[@]}" \
        --json "$out/lm-grid-adamw$1-ivon$2.json"
    done ;;
  lm-seeds)
    adamw_lr=${ADAMW_LR:?set ADAMW_LR to the chosen rate}
    ivon_lr=${IVON_LR:?set IVON_LR to the chosen rate}
    for seed in 0 1; do
      nice -n 5 "$blr" compare --optimizers adamw,ivon --seed "$seed" "${lm[@]}" \
        --adamw-lr "$adamw_lr" "${adamw_fixed[@]}" --ivon-lr "$ivon_lr" "${ivon_fixed[@]}" \
        --json "$out/lm-seed$seed.json"
    done ;;
  resnet)
    nice -n 5 "$blr" compare --optimizers ivon,adamw,sgd --model resnet20 --data fashion-mnist \
      --train-limit 1000 --test-limit 500 --epochs 2 --batch-size 50 --schedule cosine \
      --test-samples 4 --threads 1 --quiet --seed 0 \
      --ivon-lr 0.2 --ivon-hess-init 0.5 --ivon-ess 1000 --ivon-weight-decay 1e-4 \
      --adamw-lr 1e-3 --adamw-weight-decay 1e-4 \
      --sgd-lr 0.05 --sgd-momentum 0.9 --sgd-weight-decay 5e-4 \
      --json "$out/resnet-seed0-n1000.json" ;;
  *) echo "unknown step '$what'" >&2; exit 2 ;;
esac
