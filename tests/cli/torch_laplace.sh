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
# The choices are the laplace optimizer's table's, checked before the checkpoint is read.
expect_fail bad-subset "Option 'subset' takes a choice (one of all, last-layer); got bogus." \
  laplace --checkpoint x.ckpt --subset bogus
expect_fail bad-structure "Option 'structure' takes a choice (one of diag, kron); got full." \
  laplace --checkpoint x.ckpt --structure full
expect_fail bad-predictive "Option 'predictive' takes a choice (one of monte-carlo, probit); got exact." \
  laplace --checkpoint x.ckpt --predictive exact
"$blr" optimizers --json "$work/opt.json" >/dev/null || fail "blr optimizers failed"
python3 -c "
import json, sys
d = {e['name']: e for e in json.load(open('$work/opt.json'))['optimizers']}
assert d['laplace']['trains'] is False and d['adamw']['trains'] is True
" || fail "blr optimizers --json: laplace is not listed as a posterior that does not train"

# ---- regression: the Gaussian likelihood -------------------------------------------------------
# y = 2·x1 − x2 + 3 + ε, sd(ε) = 0.5, a linear network (weight Kronecker-factored, bias diagonal).
# The linearised predictive keeps the mean's predictions (same RMSE) and widens each sd beyond σ;
# σ chosen by the marginal likelihood gives a log Z at least that of the run's σ (it maximises
# log Z over σ and δ); the saved posterior scores the same in blr eval and predicts per row with
# blr predict; the linearised predictive of an IVON regression run widens σ too.
/usr/bin/python3 - "$work" <<'PY'
import random, sys
rng = random.Random(11)
d = sys.argv[1]
with open(f"{d}/reg.csv", "w") as f, open(f"{d}/reg_test.csv", "w") as t, open(f"{d}/reg_new.csv", "w") as n:
    f.write("x1,x2,y\n"); t.write("x1,x2,y\n"); n.write("x1,x2\n")
    for i in range(1300):
        x1, x2 = rng.gauss(0, 1), rng.gauss(5, 3)
        row = f"{x1},{x2},{2 * x1 - x2 + 3 + rng.gauss(0, 0.5)}\n"
        if i < 1000: f.write(row)
        else: t.write(row); n.write(f"{x1},{x2}\n")
PY
for o in "adamw --adamw-lr 0.05" "ivon --ivon-ess 800"; do
  read -r -a flags <<<"$o"
  "$blr" train --data "$work/reg.csv" --test-data "$work/reg_test.csv" --task regression \
    --hidden "" --optimizer "${flags[@]}" --epochs 10 --batch-size 50 \
    --validation 0.2 --threads 1 --quiet --out "$work/reg_${flags[0]}" >/dev/null 2>"$work/err" ||
    { fail "train regression $o: exit $?"; cat "$work/err" >&2; }
done
"$blr" laplace --checkpoint "$work/reg_adamw/adamw.ckpt" --structure kron --predictive probit \
  --threads 1 --save "$work/reg_post.ckpt" --json "$work/reg_run.json" >"$work/reg.out" \
  2>"$work/reg.err" || { fail "laplace regression: exit $?"; cat "$work/reg.err" >&2; }
grep -q "predictive (linear)" "$work/reg.out" || fail "laplace regression: the linearised predictive is not named"
grep -q "observation noise σ" "$work/reg.err" || fail "laplace regression: σ is not named on stderr"
"$blr" laplace --checkpoint "$work/reg_adamw/adamw.ckpt" --structure kron --predictive probit \
  --noise-std-method marglik --threads 1 --quiet --json "$work/reg_marglik.json" >/dev/null \
  2>"$work/err" || { fail "laplace regression marglik: exit $?"; cat "$work/err" >&2; }
"$blr" laplace --checkpoint "$work/reg_adamw/adamw.ckpt" --curvature ef --prior-precision-method gridsearch \
  --threads 1 --quiet --json "$work/reg_grid.json" >/dev/null 2>"$work/err" ||
  { fail "laplace regression gridsearch: exit $?"; cat "$work/err" >&2; }
"$blr" eval --checkpoint "$work/reg_post.ckpt" --threads 1 --quiet --json "$work/reg_eval.json" \
  >/dev/null 2>"$work/err" || { fail "eval regression posterior: exit $?"; cat "$work/err" >&2; }
"$blr" predict --checkpoint "$work/reg_post.ckpt" --data "$work/reg_new.csv" --predictive probit \
  --out "$work/reg_pred.csv" --quiet 2>"$work/err" || { fail "predict regression posterior: exit $?"; cat "$work/err" >&2; }
"$blr" predict --checkpoint "$work/reg_adamw/adamw.ckpt" --data "$work/reg_new.csv" \
  --out "$work/reg_mean.csv" --quiet 2>"$work/err" || { fail "predict regression adamw: exit $?"; cat "$work/err" >&2; }
"$blr" predict --checkpoint "$work/reg_ivon/ivon.ckpt" --data "$work/reg_new.csv" --predictive probit \
  --out "$work/reg_ivon.csv" --quiet 2>"$work/err" || { fail "predict regression ivon probit: exit $?"; cat "$work/err" >&2; }
/usr/bin/python3 - "$work" <<'PY' 2>"$work/py.err" || fail "laplace regression: $(tail -1 "$work/py.err")"
import csv, json, sys
d = sys.argv[1]
run = json.load(open(f"{d}/reg_run.json"))
ml = json.load(open(f"{d}/reg_marglik.json"))
grid = json.load(open(f"{d}/reg_grid.json"))
ev = json.load(open(f"{d}/reg_eval.json"))
la, lm = run["laplace"], ml["laplace"]
assert la["likelihood"] == "regression" and la["noise_std_method"] == "run", la
assert la["noise_std"] == la["run_noise_std"] > 0, la
assert lm["noise_std_method"] == "marglik" and lm["noise_std"] != lm["run_noise_std"], lm
assert lm["log_marginal_likelihood"] >= la["log_marginal_likelihood"], (lm, la)
t = run["optimizers"]["laplace"]["test"]
assert abs(t["predictive"]["rmse"] - t["mean"]["rmse"]) < 1e-12 * t["mean"]["rmse"], t
assert t["predictive"]["predictive_std"] > t["mean"]["predictive_std"], t
e = ev["optimizers"]["laplace"]["test"]
for k in ("rmse", "nll", "predictive_std"):
    assert abs(e["predictive"][k] - t["predictive"][k]) < 1e-12 * abs(t["predictive"][k]), (k, e, t)
g = grid["laplace"]
assert g["prior_precision_method"] == "gridsearch" and len(g["prior_precision_grid"]) == 17, g
post = list(csv.DictReader(open(f"{d}/reg_pred.csv")))
mean = list(csv.DictReader(open(f"{d}/reg_mean.csv")))
ivon = list(csv.DictReader(open(f"{d}/reg_ivon.csv")))
assert len(post) == len(mean) == len(ivon) == 300, (len(post), len(mean))
sigma = float(mean[0]["sd_0"])
for p, m in zip(post, mean):
    assert abs(float(p["mean_0"]) - float(m["mean_0"])) <= 1e-9 * max(1.0, abs(float(m["mean_0"]))), (p, m)
    assert float(p["sd_0"]) > sigma, (p, sigma)
assert all(float(r["sd_0"]) > 0 for r in ivon)
PY
expect_fail regression-marglik-grid "does not combine" laplace --checkpoint "$work/reg_adamw/adamw.ckpt" \
  --noise-std-method marglik --prior-precision-method gridsearch --quiet

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
# last_layer: laplace-torch's spelling (blr's before 2026-11-29), read as last-layer
"$blr" laplace --checkpoint "$work/run/adamw.ckpt" --subset last_layer --curvature ef \
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
assert l["subset"] == "last-layer" and l["curvature"] == "ef"
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
assert kron["predictive"]["samples"] == 4 and kron["predictive"]["method"] == "monte-carlo"
probit_doc = json.load(open(f"{w}/probit.json"))
probit = probit_doc["optimizers"]["laplace"]["test"]
probit_ev = json.load(open(f"{w}/probit_eval.json"))["optimizers"]["laplace"]["test"]
assert probit_doc["laplace"]["predictive"] == "probit" and probit_doc["laplace"]["subset"] == "last-layer"
assert probit["predictive"]["method"] == "probit" and probit["predictive"]["samples"] == 0
# deterministic (no draws): eval of the saved posterior gives the same numbers
for key in ("accuracy", "nll", "ece"):
    assert probit_ev["predictive"][key] == probit["predictive"][key], key
assert probit["predictive"]["accuracy"] > 0.5 and math.isfinite(probit["predictive"]["nll"])
PY
finish
echo "all blr laplace CLI checks passed"
