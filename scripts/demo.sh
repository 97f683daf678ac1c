#!/usr/bin/env bash
# `make demo`, deep-learning part: IVON (the Bayesian learning rule with a diagonal Gaussian) vs
# AdamW vs SGD on Fashion-MNIST with an MLP 784-500-300-10, side by side in one table: accuracy,
# NLL, ECE, Brier, OOD AUROC and time per optimizer, at the mean and (IVON) with the posterior
# predictive. Plots (training curves, reliability diagrams) go to out/demo/.
#
# Budget: about 5 minutes on 2 cores. One epoch of the 500-300 MLP (469 steps of 128) takes about
# 1.5–2.5 s with any of the three optimizers on one core of the development machine (IVON ≈ 1.05×
# AdamW, docs/benchmarks.md), and the predictive costs about one pass at the mean per posterior
# sample, so the demo trains 5 epochs (the cosine schedule compressed to them) and evaluates the
# predictive with K = 32 samples (the IVON authors recommend 16-64): 42 s in all with 2 threads on
# a quiet 2-core machine (73 s when the machine was busy), leaving room for slower machines and for
# `blr table1` before it. The network keeps its 500-300 widths so that the numbers are those of
# the usual benchmark model; docs/results.md has
# the full 10-epoch, K = 64 protocol.
# Override with BLR_DEMO_EPOCHS / BLR_DEMO_SAMPLES / BLR_DEMO_THREADS / BLR_DEMO_OUT.
#
# OMP_WAIT_POLICY=PASSIVE: LibTorch's OpenMP threads otherwise spin while waiting, which makes a
# 2-thread run up to 20x slower when the cores are shared with other work.
#
# Settings: IVON lr 0.1, ess 60000, hess-init 1.0, weight decay 1e-4 (the IVON README
# quick-start); AdamW lr 1e-3, weight decay 1e-4; SGD lr 0.05, momentum 0.9, weight decay 5e-4;
# all with a cosine schedule, batch 128, seed 0.
#
# Usage: scripts/demo.sh <path-to-blr> [extra blr compare flags]
set -euo pipefail
blr=${1:-build/blr}
shift || true
if [ ! -x "$blr" ]; then
  echo "demo: '$blr' is not an executable; build first (make build) or pass the path." >&2
  exit 2
fi
data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "demo: Fashion-MNIST is missing in $data_dir; install it with" \
       "'apt-get install dataset-fashion-mnist' (or run 'make setup')." >&2
  exit 2
fi
if ! "$blr" --help 2>/dev/null | grep -q compare; then
  echo "demo: this blr was built without LibTorch (no 'compare' command); install libtorch-dev" \
       "and rebuild." >&2
  exit 2
fi
out=${BLR_DEMO_OUT:-out/demo}
epochs=${BLR_DEMO_EPOCHS:-5}
samples=${BLR_DEMO_SAMPLES:-32}
threads=${BLR_DEMO_THREADS:-0}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
mkdir -p "$out"
echo "== blr compare: IVON vs AdamW vs SGD, Fashion-MNIST, MLP 784-500-300-10, $epochs epochs =="
start=$(date +%s)
"$blr" compare --data fashion-mnist --model mlp --hidden 500,300 \
  --epochs "$epochs" --batch-size 128 --seed 0 --schedule cosine --threads "$threads" \
  --optimizers ivon,adamw,sgd \
  --ivon-lr 0.1 --ivon-ess 60000 --ivon-hess-init 1.0 --ivon-weight-decay 1e-4 \
  --adamw-lr 1e-3 --adamw-weight-decay 1e-4 \
  --sgd-lr 0.05 --sgd-momentum 0.9 --sgd-weight-decay 5e-4 \
  --test-samples "$samples" --out "$out" --json "$out/results.json" "$@"
echo "== done in $(( $(date +%s) - start )) s; results: $out/results.json; plots: $out/curves.png," \
     "$out/reliability.png =="
