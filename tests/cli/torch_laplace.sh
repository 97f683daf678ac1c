#!/usr/bin/env bash
# `blr laplace`: the post-hoc Laplace posterior of an AdamW run. The prediction at the mean is the
# trained run's exactly (the posterior is centred on its weights); the posterior predictive has K
# samples; `blr eval` of the saved posterior gives the same numbers (same draws); the last-layer
# subset and the empirical Fisher run; the Kronecker structure (all weights, and last layer with the
# linearised probit predictive) runs, its saved posterior scores the same in `blr eval`, and the
# probit predictive is reported as such (no draws); bad input is one sentence with a non-zero exit.
# Usage: torch_laplace.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_laplace.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

expect_fail no-checkpoint "needs --checkpoint" laplace
expect_fail missing-checkpoint "nothing.ckpt" laplace --checkpoint "$work/nothing.ckpt"
expect_fail bad-prior "prior-precision" laplace --checkpoint x.ckpt --prior-precision -1
expect_fail train-laplace "fitted after training" train --optimizer laplace --epochs 1
"$blr" laplace --checkpoint x.ckpt --subset bogus >"$work/out" 2>"$work/err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--subset bogus: exit status $status, expected 100–115"
"$blr" laplace --checkpoint x.ckpt --structure full >"$work/out" 2>"$work/err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--structure full: exit status $status, expected 100–115"
"$blr" laplace --checkpoint x.ckpt --predictive exact >"$work/out" 2>"$work/err"
status=$?
[ "$status" -ge 100 ] && [ "$status" -le 115 ] || fail "--predictive exact: exit status $status, expected 100–115"
"$blr" optimizers --json "$work/opt.json" >/dev/null || fail "blr optimizers failed"
python3 -c "
import json, sys
d = {e['name']: e for e in json.load(open('$work/opt.json'))['optimizers']}
assert d['laplace']['trains'] is False and d['adamw']['trains'] is True
" || fail "blr optimizers --json: laplace is not listed as a posterior that does not train"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi
"$blr" train --optimizer adamw --train-limit 2000 --test-limit 500 --batch-size 100 --threads 1 \
  --hidden 64 --epochs 2 --test-samples 4 --out "$work/run" --json "$work/train.json" --quiet \
  >"$work/train.out" 2>"$work/train.err" || { fail "train adamw: exit $?"; cat "$work/train.err" >&2; }
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --save "$work/post.ckpt" --threads 1 \
  --json "$work/laplace.json" >"$work/laplace.out" 2>"$work/laplace.err" ||
  { fail "laplace: exit $?"; cat "$work/laplace.err" >&2; }
grep -q "log marginal likelihood" "$work/laplace.err" || fail "laplace: no marginal likelihood on stderr"
"$blr" eval --checkpoint "$work/post.ckpt" --threads 1 --quiet --json "$work/eval.json" \
  >/dev/null 2>"$work/eval.err" || { fail "eval of the posterior: exit $?"; cat "$work/eval.err" >&2; }
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --subset last-layer --curvature ef \
  --prior-precision 3 --threads 1 --quiet --json "$work/last.json" >/dev/null 2>"$work/last.err" ||
  { fail "laplace last-layer ef: exit $?"; cat "$work/last.err" >&2; }
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --structure kron --save "$work/kron.ckpt" \
  --threads 1 --json "$work/kron.json" >/dev/null 2>"$work/kron.err" ||
  { fail "laplace kron: exit $?"; cat "$work/kron.err" >&2; }
grep -q "Kronecker-factored" "$work/kron.err" || fail "laplace kron: the structure is not named on stderr"
"$blr" eval --checkpoint "$work/kron.ckpt" --threads 1 --quiet --json "$work/kron_eval.json" \
  >/dev/null 2>"$work/kron_eval.err" || { fail "eval of the kron posterior: exit $?"; cat "$work/kron_eval.err" >&2; }
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --structure kron --subset last-layer \
  --predictive probit --save "$work/probit.ckpt" --threads 1 --quiet --json "$work/probit.json" \
  >/dev/null 2>"$work/probit.err" || { fail "laplace kron probit: exit $?"; cat "$work/probit.err" >&2; }
"$blr" eval --checkpoint "$work/probit.ckpt" --threads 1 --json "$work/probit_eval.json" \
  >"$work/probit_eval.out" 2>/dev/null || fail "eval of the probit posterior: exit $?"
grep -q "predictive (probit)" "$work/probit_eval.out" || fail "eval: the probit predictive is not named"
expect_fail laplace-of-laplace "already holds a laplace posterior" laplace --checkpoint "$work/post.ckpt"
# Directions the data give no curvature (zero eigenvalues of the Kronecker factors) keep the
# variance 1/δ, which overflows float32 for δ = 1e-320 (before 2026-11-28: "AUROC scores must not
# be NaN").
expect_fail laplace-prior-tiny "leaves weights with an infinite posterior variance" laplace \
  --checkpoint "$work/run/adamw.ckpt" --structure kron --prior-precision 1e-320 --threads 1 --quiet
python3 - "$work" <<'PY' || fail "laplace: JSON checks failed (see above)"
import json, math, sys
w = sys.argv[1]
train = json.load(open(f"{w}/train.json"))["optimizers"]["adamw"]["test"]
lap_doc = json.load(open(f"{w}/laplace.json"))
lap = lap_doc["optimizers"]["laplace"]["test"]
ev = json.load(open(f"{w}/eval.json"))["optimizers"]["laplace"]["test"]
last = json.load(open(f"{w}/last.json"))
info = lap_doc["laplace"]
print(f"adamw mean NLL {train['mean']['nll']:.4f}; laplace predictive NLL {lap['predictive']['nll']:.4f} "
      f"ECE {lap['predictive']['ece']:.4f}; prior precision {info['prior_precision']:.4g}", file=sys.stderr)
assert info["prior_precision_chosen"] and info["prior_precision"] > 0
assert math.isfinite(info["log_marginal_likelihood"])
assert info["examples"] == 2000 and info["source_optimizer"] == "adamw"
# centred on the trained weights: the prediction at the mean is the AdamW run's
for key in ("accuracy", "nll", "ece"):
    assert lap["mean"][key] == train["mean"][key], key
assert lap["predictive"]["samples"] == 4 and lap["predictive"]["accuracy"] > 0.5
# the saved posterior gives the same draws in blr eval
for key in ("accuracy", "nll", "ece", "brier"):
    assert ev["predictive"][key] == lap["predictive"][key], key
l = last["laplace"]
assert l["subset"] == "last_layer" and l["curvature"] == "ef"
assert l["prior_precision"] == 3 and not l["prior_precision_chosen"]
assert 0 < l["weights"] < info["weights"]
kron_doc = json.load(open(f"{w}/kron.json"))
kron, k = kron_doc["optimizers"]["laplace"]["test"], kron_doc["laplace"]
kron_ev = json.load(open(f"{w}/kron_eval.json"))["optimizers"]["laplace"]["test"]
print(f"kron: prior precision {k['prior_precision']:.4g}, log Z {k['log_marginal_likelihood']:.6g}, "
      f"predictive NLL {kron['predictive']['nll']:.4f}", file=sys.stderr)
assert k["structure"] == "kron" and k["weights"] == info["weights"] and k["prior_precision_chosen"]
assert math.isfinite(k["log_marginal_likelihood"])
# a Kronecker-factored curvature is another model of the data: another evidence and δ
assert k["log_marginal_likelihood"] != info["log_marginal_likelihood"]
for key in ("accuracy", "nll", "ece"):
    assert kron["mean"][key] == train["mean"][key], key
    assert kron_ev["predictive"][key] == kron["predictive"][key], key
assert kron["predictive"]["samples"] == 4 and kron["predictive"]["method"] == "mc"
probit_doc = json.load(open(f"{w}/probit.json"))
probit = probit_doc["optimizers"]["laplace"]["test"]
probit_ev = json.load(open(f"{w}/probit_eval.json"))["optimizers"]["laplace"]["test"]
assert probit_doc["laplace"]["predictive"] == "probit" and probit_doc["laplace"]["subset"] == "last_layer"
assert probit["predictive"]["method"] == "probit" and probit["predictive"]["samples"] == 0
# deterministic (no draws): eval of the saved posterior gives the same numbers
for key in ("accuracy", "nll", "ece"):
    assert probit_ev["predictive"][key] == probit["predictive"][key], key
assert probit["predictive"]["accuracy"] > 0.5 and math.isfinite(probit["predictive"]["nll"])
PY
finish
echo "all blr laplace CLI checks passed"
