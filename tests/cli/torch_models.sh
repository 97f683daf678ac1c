#!/usr/bin/env bash
# ResNet-20 and the GPT-style language model from the CLI (issue 12, item 3): a character-level
# language model trained on a text:PATH corpus with AdamW and IVON reports perplexity (mean and
# predictive), next-token ECE and tokens per second; a checkpoint re-evaluates; wrong pairings of
# model and data, a missing corpus, a bad --gpt-* option and VOGN on ResNet-20 (batch norm) are
# one-sentence errors.
# Usage: torch_models.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_models.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

expect_fail "gpt on images" "trains on a text corpus" train --model gpt --data fashion-mnist --epochs 1
expect_fail "mlp on text" "use --model gpt" train --model mlp --data fortunes --epochs 1
expect_fail "missing corpus" "does not exist" train --model gpt --data "text:$work/absent" --epochs 1
expect_fail "unknown data" "fortunes or text:PATH" train --model gpt --data books --epochs 1
expect_fail "width and heads" "multiple of 'heads'" train --model gpt --data fortunes --gpt-width 10 --gpt-heads 4
"$blr" train --model gpt --data fortunes --gpt-layers 0 >"$work/bad.out" 2>"$work/bad.err"
status=$?
[ "$status" -ne 0 ] || fail "--gpt-layers 0: exit status 0"
grep -q "'layers'" "$work/bad.err" || { fail "--gpt-layers 0: the error does not name layers"; cat "$work/bad.err" >&2; }

# A small corpus: 60 documents of a repeated pattern (54 train, 3 validation, 3 test).
python3 - "$work/corpus.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(60):
        f.write("the quick brown fox %d jumps over the lazy dog.\nand runs away.\n%%\n" % (i % 7))
PY
lm=(--model gpt --data "text:$work/corpus.txt" --gpt-context 16 --gpt-layers 1 --gpt-heads 2
    --gpt-width 32 --epochs 3 --batch-size 16 --threads 1 --test-samples 4 --recipe none)
"$blr" compare --optimizers adamw,ivon --adamw-lr 1e-2 --ivon-lr 0.5 --ivon-hess-init 1 \
  --ivon-ess 1e6 "${lm[@]}" --json "$work/lm.json" --out "$work/lm" >"$work/lm.out" 2>"$work/lm.err" ||
  { fail "compare on a text corpus: exit status $?"; tail -5 "$work/lm.err" >&2; }
grep -q "perplexity test" "$work/lm.out" || { fail "the table has no perplexity line"; cat "$work/lm.out" >&2; }
python3 - "$work/lm.json" <<'PY' || fail "language-model metrics (see above)"
import json, math, sys
d = json.load(open(sys.argv[1]))
for name in ("adamw", "ivon"):
    run = d["optimizers"][name]
    lm = run["language_model"]
    # perplexity = exp(mean NLL per token), at the mean and with the predictive
    assert abs(lm["test_perplexity_mean"] - math.exp(run["test"]["mean"]["nll"])) < 1e-9 * lm["test_perplexity_mean"], lm
    assert abs(lm["test_perplexity_predictive"] - math.exp(run["test"]["predictive"]["nll"])) < 1e-9 * lm["test_perplexity_predictive"], lm
    assert "validation_perplexity_mean" in lm, lm
    vocabulary = 1 + len(set(open(sys.argv[1].replace("lm.json", "corpus.txt")).read()))
    # learnt: far below a uniform guess over the vocabulary
    assert lm["test_perplexity_mean"] < 0.5 * vocabulary, (name, lm, vocabulary)
    assert lm["train_tokens_per_second"] > 0 and lm["evaluation_tokens_per_second"] > 0, lm
    assert 0 <= lm["test_next_token_ece_mean"] <= 1, lm
assert d["optimizers"]["ivon"]["test"]["predictive"]["samples"] == 4
PY
[ -f "$work/lm/adamw.ckpt" ] || fail "no checkpoint of the language model"
if [ -f "$work/lm/ivon.ckpt" ]; then
  "$blr" eval --checkpoint "$work/lm/ivon.ckpt" --test-samples 2 >"$work/eval.out" 2>"$work/eval.err" ||
    { fail "eval of the language model: exit status $?"; tail -3 "$work/eval.err" >&2; }
fi

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  expect_fail "vogn on resnet20" "couple the examples" train --model resnet20 --optimizer vogn \
    --train-limit 16 --test-limit 16 --batch-size 8 --epochs 1 --threads 1
fi
finish
