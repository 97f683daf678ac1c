#!/usr/bin/env bash
# The network-sensitivity validation of docs/posterior.md: train an MLP on a 1000-image subset of
# Fashion-MNIST with IVON and with AdamW (LOO-NLL estimate every 3 epochs: loo.png), fit a Laplace
# posterior to the AdamW run, then for each posterior source retrain without each of 100 random
# training examples and without each class and correlate predicted and true changes
# (validation.png, influence.png). Usage: scripts/sensitivity_validation.sh [BLR] [OUT]
set -euo pipefail
blr=${1:-build/blr}
out=${2:-/tmp/sensitivity_validation}
mkdir -p "$out"
common=(--train-limit 1000 --test-limit 5000 --hidden 32 --batch-size 100 --threads 2 --quiet
        --seed 0)
retrain=(--retrain 100 --retrain-classes --retrain-steps 100 --retrain-lr 0.01 --threads 2 --quiet)
nice -n 5 "$blr" train --optimizer ivon --epochs 30 --sensitivity-every 3 "${common[@]}" \
  --out "$out/ivon" --json "$out/ivon-train.json"
nice -n 5 "$blr" train --optimizer adamw --epochs 30 --sensitivity-every 3 "${common[@]}" \
  --out "$out/adamw" --json "$out/adamw-train.json"
nice -n 5 "$blr" laplace --checkpoint "$out/adamw/adamw.ckpt" --save "$out/laplace.ckpt" \
  --threads 2 --quiet --json "$out/laplace-fit.json"
for source in ivon/ivon adamw/adamw laplace; do
  name=$(basename "$source")
  nice -n 5 "$blr" sensitivity --checkpoint "$out/$source.ckpt" "${retrain[@]}" --top 5 \
    --json "$out/$name.json" --out "$out/pictures-$name" | tee "$out/$name.txt"
done
# Summary: Pearson and Spearman (rank) correlations of predicted and true changes, per source.
python3 - "$out" <<'PY'
import json, sys
def ranks(a):
    r = [0] * len(a)
    for k, i in enumerate(sorted(range(len(a)), key=lambda i: a[i])):
        r[i] = k
    return r
def pearson(a, b):
    n = len(a); ma = sum(a) / n; mb = sum(b) / n
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    return sab / (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5
for name in ("ivon", "adamw", "laplace"):
    j = json.load(open(f"{sys.argv[1]}/{name}.json"))
    v, c = j["validation"], j["class_validation"]
    print(f"{name:8} {j['source']}\n  examples: Pearson {v['score_correlation']:.3f} Spearman "
          f"{pearson(ranks(v['predicted']), ranks(v['true'])):.3f}, deviation Pearson "
          f"{v['deviation_correlation']:.3f}, reference shift {v['reference_shift']:.3f}\n"
          f"  classes:  Pearson {c['score_correlation']:.3f} Spearman "
          f"{pearson(ranks(c['predicted']), ranks(c['true'])):.3f}\n"
          f"  LOO NLL {j['loo']['nll']:.4f} (in-sample {j['in_sample']['nll']:.4f})")
for name in ("ivon", "adamw"):
    t = json.load(open(f"{sys.argv[1]}/{name}-train.json"))["sensitivity"]["epochs"]
    print(name, "epoch LOO-estimate test-NLL train-NLL:",
          "; ".join(f"{e['epoch']} {e['loo_nll']:.3f} {e['test_nll']:.3f} {e['train_nll']:.3f}"
                    for e in t))
PY
