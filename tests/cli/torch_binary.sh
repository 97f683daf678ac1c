#!/usr/bin/env bash
# Binary networks from the CLI: `blr compare --optimizers bayesbinn,ste --model binary-mlp` trains
# BayesBiNN and the STE baseline on Fashion-MNIST (a short run) and reports both; eval scores a
# BayesBiNN checkpoint at sign(λ) and with Bernoulli samples; bad BayesBiNN options are one
# sentence naming the option, with CLI11's validation status (100–115, docs/reliability.md).
# Usage: torch_binary.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_binary.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

# bad options: typed flags through the registry, one sentence, before any data is read
"$blr" train --optimizer bayesbinn --bayesbinn-lr 2 --model binary-mlp >"$work/bad.out" 2>"$work/bad.err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "bayesbinn --bayesbinn-lr 2: exit status $status, expected 100–115"
grep -q "'lr'" "$work/bad.err" || { fail "bayesbinn --bayesbinn-lr 2: the error does not name lr"; cat "$work/bad.err" >&2; }
"$blr" train --optimizer bayesbinn --bayesbinn-mc-samples 1.5 >"$work/bad2.out" 2>"$work/bad2.err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--bayesbinn-mc-samples 1.5: exit status $status, expected 100–115 (an integer option)"
grep -q "mc_samples\|mc-samples" "$work/bad2.err" || fail "--bayesbinn-mc-samples 1.5: the error does not name the option"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi

tiny=(--train-limit 2000 --test-limit 500 --batch-size 100 --threads 1 --hidden 128 --epochs 2)
"$blr" compare --optimizers bayesbinn,ste --model binary-mlp --test-samples 4 --out "$work/run" \
  --json "$work/compare.json" "${tiny[@]}" >"$work/compare.out" 2>"$work/compare.err" ||
  { fail "compare bayesbinn,ste: exit status $?"; tail -5 "$work/compare.err" >&2; }
# Both learn: well above chance (0.1) on 10 classes after 2 short epochs.
python3 - "$work/compare.json" <<'PY' || fail "compare: a binary network did not learn (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
for name in ("bayesbinn", "ste"):
    assert name in d["optimizers"], f"no run of {name}"
    test = d["optimizers"][name]["test"]
    acc = test["mean"]["accuracy"]
    print(f"{name}: test accuracy {acc:.3f}", file=sys.stderr)
    assert acc > 0.5, f"{name} test accuracy {acc}"
# BayesBiNN has a posterior: Bernoulli-sample predictive; STE is a point estimate.
assert d["optimizers"]["bayesbinn"]["test"]["predictive"]["samples"] == 4
assert d["optimizers"]["bayesbinn"]["test"]["predictive"]["accuracy"] > 0.5
PY
[ -f "$work/run/bayesbinn.ckpt" ] || fail "compare: no BayesBiNN checkpoint"
"$blr" eval --checkpoint "$work/run/bayesbinn.ckpt" --test-samples 4 --threads 1 \
  --json "$work/eval.json" >"$work/eval.out" 2>"$work/eval.err" ||
  { fail "eval bayesbinn: exit status $?"; tail -5 "$work/eval.err" >&2; }

finish
echo "all binary-network CLI checks passed"
