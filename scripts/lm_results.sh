#!/usr/bin/env bash
# Issue 29, item 4: the language model at a budget that means something on two cores. A GPT of
# width 128, 4 layers, 4 heads, context 128 on all of the fortune files' training split (18 136
# windows of 128 tokens = 2.32 M tokens, one epoch, batch 32 = 567 steps), both optimizers with
# the lm-pretrain recipe (warm-up 2 %, cosine to 0, gradient norm clipped at 1; IVON ess 1e10,
# h₀ 1e-3, clip radius 1e-3, δ 1e-6; AdamW β₂ 0.95, δ 0.1). Validation and test: the first 300
# windows of their splits (38 400 tokens each). The predictive uses K = 16.
#   grid   seed 0: AdamW lr ∈ {3e-4, 1e-3, 3e-3, 1e-2}, IVON lr ∈ {300, 1000, 3000}; each chosen by
#          validation perplexity (AdamW at its mean, IVON of its predictive)
#   seeds  the chosen rates (ADAMW_LR, IVON_LR) with seeds 1 and 2 (SEEDS="3 4" for more)
#          EPOCHS=2 (with SEEDS="0 1 2" and another OUTDIR): the same runs at two epochs
#   seed0  why IVON's seed 0 plateaus (stop 30): seed 0 with another weight-noise draw
#          (--ivon-seed 1), and IVON and AdamW at seed 0 with two epochs (1 134 steps)
# Usage: scripts/lm_results.sh BLR OUTDIR grid|seeds|seed0 [ADAMW_LR IVON_LR]
# Each run writes OUTDIR/<name>.json; an existing file is reused (a stopped run resumes).
set -euo pipefail
blr=${1:?usage: lm_results.sh BLR OUTDIR grid|seeds|seed0 [ADAMW_LR IVON_LR]}
out=${2:?}
what=${3:?}
mkdir -p "$out"
export OMP_WAIT_POLICY=PASSIVE
lm=(--model gpt --data fortunes --gpt-context 128 --gpt-layers 4 --gpt-heads 4 --gpt-width 128
    --batch-size 32 --test-limit 300 --test-samples 16 --recipe lm-pretrain --quiet)
run() {  # NAME OPTIMIZER LR SEED [FLAG...] (one epoch unless the flags give --epochs)
  local json="$out/$1.json" name=$1 optimizer=$2 lr=$3 seed=$4
  shift 4
  [ -s "$json" ] && { echo "reusing $json"; return; }
  [[ " $* " == *" --epochs "* ]] || set -- --epochs 1 "$@"
  echo "== $name"
  nice -n 5 "$blr" train --optimizer "$optimizer" "--$optimizer-lr" "$lr" --seed "$seed" "${lm[@]}" "$@" \
    --json "$json.tmp" >/dev/null
  mv "$json.tmp" "$json"
}
case "$what" in
  grid)
    for lr in 3e-4 1e-3 3e-3 1e-2; do run "adamw-lr$lr-seed0" adamw "$lr" 0; done
    for lr in 300 1000 3000; do run "ivon-lr$lr-seed0" ivon "$lr" 0; done ;;
  seeds)
    adamw_lr=${4:?the chosen AdamW lr}
    ivon_lr=${5:?the chosen IVON lr}
    for seed in ${SEEDS:-1 2}; do
      run "adamw-lr$adamw_lr-seed$seed" adamw "$adamw_lr" "$seed" --epochs "${EPOCHS:-1}"
      run "ivon-lr$ivon_lr-seed$seed" ivon "$ivon_lr" "$seed" --epochs "${EPOCHS:-1}"
    done ;;
  seed0)
    adamw_lr=${4:-0.003}
    ivon_lr=${5:-1000}
    run "ivon-lr$ivon_lr-seed0-noise1" ivon "$ivon_lr" 0 --ivon-seed 1
    run "ivon-lr$ivon_lr-seed0-2epochs" ivon "$ivon_lr" 0 --epochs 2
    run "adamw-lr$adamw_lr-seed0-2epochs" adamw "$adamw_lr" 0 --epochs 2 ;;
  *) echo "lm_results.sh: grid, seeds or seed0" >&2; exit 2 ;;
esac
python3 - "$out" <<'PY'
import json, pathlib, sys
print(f"{'run':<26} {'val ppl':>8} {'val ppl pred':>12} {'test ppl':>8} {'test ppl pred':>13} {'ECE':>7} {'ECE pred':>8} {'tokens/s':>9}")
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    d = json.load(open(path))
    (name, r), = d["optimizers"].items()
    lm = r["language_model"]
    print(f"{path.stem:<26} {lm['validation_perplexity_mean']:>8.3f} {lm['validation_perplexity_predictive']:>12.3f} "
          f"{lm['test_perplexity_mean']:>8.3f} {lm['test_perplexity_predictive']:>13.3f} "
          f"{lm['test_next_token_ece_mean']:>7.4f} {lm['test_next_token_ece_predictive']:>8.4f} {lm['train_tokens_per_second']:>9.0f}")
PY
