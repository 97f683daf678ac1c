#!/usr/bin/env bash
# blr predict on new data (a torch.save file with key x, a CSV table) from IVON and AdamW
# checkpoints, the x_ood key of a data file as the OOD set of train's OOD metrics, and bad input
# as one sentence with exit status 2. Independent checks: each output row's probabilities sum to
# 1 and its entropy is −Σ p log p (recomputed here); an AdamW checkpoint's predictions on the
# test inputs reproduce train's test accuracy and NLL at the mean.
# Usage: torch_predict.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_predict.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 cannot import torch (Debian's python3-torch)." >&2
  exit 0
fi
quiet=(--threads 1 --quiet)
check() {
  /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" \
    "$work/$1.json" 2>"$work/py.err" || { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}
# expect_exit2 NAME TEXT ARGS...: exit status 2 and TEXT in a one-line stderr.
expect_exit2() {
  local name=$1 text=$2
  shift 2
  "$blr" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit status $rc, expected 2"
  grep -qiF -- "$text" "$work/err" || { fail "$name: stderr lacks '$text':"; cat "$work/err" >&2; }
  [ "$(wc -l <"$work/err")" -eq 1 ] || { fail "$name: stderr is not one line:"; cat "$work/err" >&2; }
}

/usr/bin/python3 - "$work" <<'PY'
import sys, torch
d = sys.argv[1]
g = torch.Generator().manual_seed(3)
centres = torch.tensor([[2.0, 0, 0, 0], [0, 2.0, 0, 0], [0, 0, 2.0, 0]])
def blobs(n):
    y = torch.randint(0, 3, (n,), generator=g)
    return centres[y] + torch.randn(n, 4, generator=g), y
x, y = blobs(600)
xt, yt = blobs(200)
x_ood = 6 * torch.randn(150, 4, generator=g)
torch.save({"x": x, "y": y, "x_test": xt, "y_test": yt, "x_ood": x_ood}, f"{d}/ood.pt")
torch.save({"x": x, "y": y, "x_test": xt, "y_test": yt, "x_ood": x_ood[:, :3]}, f"{d}/ood_bad.pt")
torch.save({"x": xt[:50], "y": yt[:50]}, f"{d}/new.pt")
torch.save({"x": xt, "y": yt}, f"{d}/test_inputs.pt")
torch.save({"x": torch.randn(10, 5), "y": yt[:10]}, f"{d}/five.pt")
torch.save({"x": xt[:5]}, f"{d}/one_key.pt")  # pickled with SETITEM
bad = xt[:10].clone(); bad[4, 2] = float("nan")
torch.save({"x": bad, "y": yt[:10]}, f"{d}/nan.pt")
torch.save({"y": yt, "x_test": xt}, f"{d}/nox.pt")
with open(f"{d}/cls.csv", "w") as f, open(f"{d}/new.csv", "w") as n, open(f"{d}/nan.csv", "w") as b:
    f.write("a,b,colour,label\n"); n.write("colour,b,a\n"); b.write("a,b,colour\n")
    for i in range(300):
        lab = i % 2
        a, bb = float(torch.randn(1, generator=g)) + 2 * lab, float(torch.randn(1, generator=g))
        colour = ["red", "blue"][i % 3 == 0]
        f.write(f"{a},{bb},{colour},{'yes' if lab else 'no'}\n")
        if i < 20: n.write(f"{colour},{bb},{a}\n")
    b.write("1.0,nan,red\n")
PY

# ---- x_ood: the OOD set of train's OOD metrics -------------------------------------------------
"$blr" train --data "$work/ood.pt" --hidden 16 --optimizer ivon --ivon-ess 600 --epochs 3 \
  --batch-size 50 --test-samples 8 --out "$work/ivon" --json "$work/ivon.json" "${quiet[@]}" \
  >"$work/ivon.out" 2>"$work/err" || { fail "train ivon on x_ood data: exit $?"; cat "$work/err" >&2; }
check ivon 'd["ood_shift"] == "the data file'"'"'s x_ood inputs"'
check ivon 'd["optimizers"]["ivon"]["test"]["ood"]["shift"] == "x_ood"'
check ivon 'all(0 <= d["optimizers"]["ivon"]["test"]["ood"][k] <= 1 for k in ("auroc_mean", "aupr_predictive", "fpr95_mean"))'
check ivon 'all(k in d["optimizers"]["ivon"]["test"]["mean"] for k in ("adaptive_ece", "classwise_ece", "aurc"))'
grep -q "FPR95" "$work/ivon.out" || fail "train: no FPR95 column in the table"
grep -q "x_ood" "$work/ivon.out" || fail "train: the table does not say the OOD set is x_ood"
expect_exit2 ood-shape "x_ood [3]" train --data "$work/ood_bad.pt" --epochs 1 "${quiet[@]}"

# ---- predict: Monte Carlo and probit from IVON -------------------------------------------------
ckpt="$work/ivon/ivon.ckpt"
# rows COUNT CSV: COUNT rows of 3 probabilities summing to 1, predicted = argmax, entropy = −Σ p log p
rows() {
  /usr/bin/python3 - "$1" "$2" <<'PY' 2>"$work/py.err" || { fail "predictions $2: $(tail -1 "$work/py.err")"; }
import csv, math, sys
n, path = int(sys.argv[1]), sys.argv[2]
table = list(csv.DictReader(open(path)))
assert len(table) == n, len(table)
for i, r in enumerate(table):
    p = [float(r[f"p_{k}"]) for k in range(3)]
    assert int(r["row"]) == i
    assert abs(sum(p) - 1) < 1e-12, p           # doubles: 3 terms of round-off
    assert int(r["predicted"]) == max(range(3), key=lambda k: p[k])
    h = -sum(q * math.log(q) for q in p if q > 0)
    assert abs(float(r["entropy"]) - h) < 1e-12, (h, r["entropy"])
PY
}
"$blr" predict --checkpoint "$ckpt" --data "$work/new.pt" --samples 8 --out "$work/mc.csv" \
  "${quiet[@]}" 2>"$work/err" || { fail "predict mc: exit $?"; cat "$work/err" >&2; }
rows 50 "$work/mc.csv"
"$blr" predict --checkpoint "$ckpt" --data "$work/new.pt" --predictive probit "${quiet[@]}" \
  >"$work/probit.csv" 2>"$work/err" || { fail "predict probit: exit $?"; cat "$work/err" >&2; }
rows 50 "$work/probit.csv"
cmp -s "$work/mc.csv" "$work/probit.csv" && fail "predict: probit and mc gave the same numbers"

# ---- predict: AdamW at the mean reproduces train's test metrics ---------------------------------
"$blr" train --data "$work/ood.pt" --hidden 16 --optimizer adamw --epochs 3 --batch-size 50 \
  --out "$work/adamw" --json "$work/adamw.json" "${quiet[@]}" >/dev/null 2>"$work/err" ||
  { fail "train adamw: exit $?"; cat "$work/err" >&2; }
"$blr" predict --checkpoint "$work/adamw/adamw.ckpt" --data "$work/test_inputs.pt" \
  --out "$work/adamw.csv" "${quiet[@]}" 2>"$work/err" || { fail "predict adamw: exit $?"; cat "$work/err" >&2; }
rows 200 "$work/adamw.csv"
/usr/bin/python3 - "$work" <<'PY' 2>"$work/py.err" || fail "adamw predictions vs train: $(tail -1 "$work/py.err")"
import csv, json, math, sys, torch
d = sys.argv[1]
yt = torch.load(f"{d}/ood.pt")["y_test"].tolist()
table = list(csv.DictReader(open(f"{d}/adamw.csv")))
accuracy = sum(int(r["predicted"]) == y for r, y in zip(table, yt)) / len(yt)
nll = -sum(math.log(float(r[f"p_{y}"])) for r, y in zip(table, yt)) / len(yt)
m = json.load(open(f"{d}/adamw.json"))["optimizers"]["adamw"]["test"]["mean"]
assert accuracy == m["accuracy"], (accuracy, m["accuracy"])
# float32 log-softmax, printed with 17 digits: the NLL agrees to float32 round-off.
assert abs(nll - m["nll"]) < 1e-6, (nll, m["nll"])
PY
expect_exit2 probit-point-estimate "needs a Gaussian posterior" \
  predict --checkpoint "$work/adamw/adamw.ckpt" --data "$work/new.pt" --predictive probit "${quiet[@]}"

# ---- predict: CSV ------------------------------------------------------------------------------
"$blr" train --data "$work/cls.csv" --task classification --categorical colour --hidden 8 \
  --optimizer ivon --ivon-ess 240 --epochs 2 --batch-size 20 --out "$work/csv" "${quiet[@]}" \
  >/dev/null 2>"$work/err" || { fail "train csv: exit $?"; cat "$work/err" >&2; }
"$blr" predict --checkpoint "$work/csv/ivon.ckpt" --data "$work/new.csv" --samples 4 \
  "${quiet[@]}" >"$work/csv.csv" 2>"$work/err" || { fail "predict csv: exit $?"; cat "$work/err" >&2; }
/usr/bin/python3 -c "
import csv, sys
t = list(csv.DictReader(open(sys.argv[1])))
assert len(t) == 20 and all(abs(float(r['p_0']) + float(r['p_1']) - 1) < 1e-12 for r in t)
" "$work/csv.csv" || fail "predict csv: wrong rows"
expect_exit2 csv-nan "not a finite number" predict --checkpoint "$work/csv/ivon.ckpt" --data "$work/nan.csv" "${quiet[@]}"

# ---- predict: regression (mean and sd per row) --------------------------------------------------
# y = 2·x1 − x2 + 3 + ε, sd(ε) = 0.5. AdamW at the mean: every row's sd is the fitted noise σ, and
# the rows reproduce train's test RMSE and Gaussian NLL. IVON: the sd adds the K draws' spread,
# so it exceeds that run's σ on every row; the mean's RMSE against the targets is σ-sized.
/usr/bin/python3 - "$work" <<'PY'
import random, sys
rng = random.Random(11)
d = sys.argv[1]
with open(f"{d}/reg.csv", "w") as f, open(f"{d}/reg_test.csv", "w") as t, open(f"{d}/reg_new.csv", "w") as n:
    f.write("x1,x2,colour,y\n"); t.write("x1,x2,colour,y\n"); n.write("colour,x2,x1\n")
    for i in range(1300):
        x1, x2 = rng.gauss(0, 1), rng.gauss(5, 3)
        colour = rng.choice(["red", "blue"])
        row = f"{x1},{x2},{colour},{2 * x1 - x2 + 3 + rng.gauss(0, 0.5)}\n"
        if i < 1000: f.write(row)
        else: t.write(row); n.write(f"{colour},{x2},{x1}\n")
PY
"$blr" train --data "$work/reg.csv" --test-data "$work/reg_test.csv" --task regression \
  --categorical colour --hidden "" --optimizer adamw --adamw-lr 0.05 --schedule cosine --epochs 10 \
  --batch-size 50 --out "$work/reg_adamw" --json "$work/reg_adamw.json" "${quiet[@]}" >/dev/null 2>"$work/err" ||
  { fail "train regression adamw: exit $?"; cat "$work/err" >&2; }
"$blr" train --data "$work/reg.csv" --test-data "$work/reg_test.csv" --task regression \
  --categorical colour --hidden "" --optimizer ivon --ivon-ess 1000 --epochs 10 --batch-size 50 \
  --out "$work/reg_ivon" --json "$work/reg_ivon.json" "${quiet[@]}" >/dev/null 2>"$work/err" ||
  { fail "train regression ivon: exit $?"; cat "$work/err" >&2; }
for o in adamw ivon; do
  "$blr" predict --checkpoint "$work/reg_$o/$o.ckpt" --data "$work/reg_new.csv" --samples 16 \
    --out "$work/reg_$o.csv" "${quiet[@]}" 2>"$work/err" || { fail "predict regression $o: exit $?"; cat "$work/err" >&2; }
done
/usr/bin/python3 - "$work" <<'PY' 2>"$work/py.err" || fail "regression predictions: $(tail -1 "$work/py.err")"
import csv, json, math, sys
d = sys.argv[1]
y = [float(r["y"]) for r in csv.DictReader(open(f"{d}/reg_test.csv"))]
a = list(csv.DictReader(open(f"{d}/reg_adamw.csv")))
v = list(csv.DictReader(open(f"{d}/reg_ivon.csv")))
assert len(a) == len(v) == len(y) == 300 and list(a[0]) == ["row", "mean_0", "sd_0"], list(a[0])
m = json.load(open(f"{d}/reg_adamw.json"))["optimizers"]["adamw"]["test"]
sigma = m["noise_std"][0]
assert all(abs(float(r["sd_0"]) - sigma) <= 1e-12 * sigma for r in a), (a[0], sigma)  # √(σ²)·s: round-off
rmse = math.sqrt(sum((float(r["mean_0"]) - t) ** 2 for r, t in zip(a, y)) / len(y))
nll = sum(math.log(sigma * math.sqrt(2 * math.pi)) + 0.5 * ((t - float(r["mean_0"])) / sigma) ** 2
          for r, t in zip(a, y)) / len(y)
# float32 network outputs, destandardised in double: agreement to float32 round-off.
assert abs(rmse - m["mean"]["rmse"]) < 1e-5 * m["mean"]["rmse"], (rmse, m["mean"]["rmse"])
assert abs(nll - m["mean"]["nll"]) < 1e-5, (nll, m["mean"]["nll"])
sd = [float(r["sd_0"]) for r in v]
sigma_ivon = json.load(open(f"{d}/reg_ivon.json"))["optimizers"]["ivon"]["test"]["noise_std"][0]
assert all(s > sigma_ivon for s in sd), (min(sd), sigma_ivon)   # σ² plus the draws' variance > 0
assert max(sd) < 3 * sigma_ivon, (max(sd), sigma_ivon)
rmse_ivon = math.sqrt(sum((float(r["mean_0"]) - t) ** 2 for r, t in zip(v, y)) / len(y))
assert 0.4 < rmse_ivon < 0.7, rmse_ivon
PY
# The linearised predictive N(f(x; μ), diag(JΣJᵀ) + σ²) of IVON's posterior: every sd above σ,
# and the mean (the network at μ, no draws) as accurate as the mixture's.
"$blr" predict --checkpoint "$work/reg_ivon/ivon.ckpt" --data "$work/reg_new.csv" --predictive probit \
  --out "$work/reg_ivon_linear.csv" "${quiet[@]}" 2>"$work/err" ||
  { fail "predict regression ivon probit: exit $?"; cat "$work/err" >&2; }
/usr/bin/python3 - "$work" <<'PY' 2>"$work/py.err" || fail "regression linearised predictions: $(tail -1 "$work/py.err")"
import csv, json, math, sys
d = sys.argv[1]
y = [float(r["y"]) for r in csv.DictReader(open(f"{d}/reg_test.csv"))]
rows = list(csv.DictReader(open(f"{d}/reg_ivon_linear.csv")))
sigma = json.load(open(f"{d}/reg_ivon.json"))["optimizers"]["ivon"]["test"]["noise_std"][0]
assert len(rows) == 300 and all(sigma < float(r["sd_0"]) < 3 * sigma for r in rows), sigma
rmse = math.sqrt(sum((float(r["mean_0"]) - t) ** 2 for r, t in zip(rows, y)) / len(y))
assert 0.4 < rmse < 0.7, rmse
PY
expect_exit2 regression-probit-adamw "needs a Gaussian posterior" predict --checkpoint \
  "$work/reg_adamw/adamw.ckpt" --data "$work/reg_new.csv" --predictive probit "${quiet[@]}"

# ---- bad input: one sentence, exit 2 ------------------------------------------------------------
expect_exit2 missing-checkpoint "no-such.ckpt" predict --checkpoint "$work/no-such.ckpt" --data "$work/new.pt"
expect_exit2 no-data "needs --data" predict --checkpoint "$ckpt"
expect_exit2 feature-count "shape [5]" predict --checkpoint "$ckpt" --data "$work/five.pt" "${quiet[@]}"
expect_exit2 nan-row "non-finite" predict --checkpoint "$ckpt" --data "$work/nan.pt" "${quiet[@]}"
expect_exit2 one-key "a single key" predict --checkpoint "$ckpt" --data "$work/one_key.pt" "${quiet[@]}"
expect_exit2 no-x "no key 'x'" predict --checkpoint "$ckpt" --data "$work/nox.pt" "${quiet[@]}"
expect_exit2 zero-samples "must lie in [1, 100000]; got 0" predict --checkpoint "$ckpt" --data "$work/new.pt" --samples 0 "${quiet[@]}"
expect_exit2 bad-method "monte-carlo or probit" predict --checkpoint "$ckpt" --data "$work/new.pt" --predictive laplace "${quiet[@]}"
expect_exit2 csv-for-pt-run "is a CSV table" predict --checkpoint "$ckpt" --data "$work/new.csv" "${quiet[@]}"
finish
