#!/usr/bin/env bash
# Bring your own data: a dict of tensors written by Python's torch.save (classification, with
# and without a test split) and a CSV regression table train end to end with IVON and AdamW,
# resume bitwise and evaluate from the checkpoint; bad files and flags are one-sentence errors.
# The regression check has a closed form: a linear model on y = 2·x1 − x2 + 3 + ε with sd(ε) = 0.5
# reaches RMSE ≈ 0.5 with about 90 % of the targets inside the central 90 % interval.
# Usage: torch_byo.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_byo.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
check() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$work/$1.json" \
    2>"$work/py.err" || { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}
quiet=(--threads 1 --quiet)

# ---- CSV regression (no python3-torch needed) --------------------------------------------------
python3 - "$work" <<'PY'
import random, sys
rng = random.Random(7)
for name, n in (("reg.csv", 1500), ("reg_test.csv", 1000)):
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        f.write("x1,x2,colour,y\n")
        for _ in range(n):
            x1, x2 = rng.gauss(0, 1), rng.gauss(5, 3)
            colour = rng.choice(["red", "blue"])
            f.write(f"{x1},{x2},{colour},{2 * x1 - x2 + 3 + rng.gauss(0, 0.5)}\n")
PY
"$blr" train --data "$work/reg.csv" --test-data "$work/reg_test.csv" --task regression \
  --categorical colour --hidden "" --optimizer adamw --adamw-lr 0.05 --schedule cosine --epochs 20 --batch-size 50 \
  --json "$work/reg.json" "${quiet[@]}" >"$work/reg.out" 2>"$work/err" ||
  { fail "csv regression: exit status $?"; cat "$work/err" >&2; }
check reg 'd["task"] == "regression"'
# σ = 0.5: RMSE within 0.05 of it (its sd over 1000 test rows is 0.5/sqrt(2000) = 0.011, plus the
# fit's error), the fitted noise likewise, the 90 % interval's coverage within 4 binomial sds
# (sqrt(0.09/1000) = 0.0095) + the fitted sigma's error.
check reg 'abs(d["optimizers"]["adamw"]["test"]["mean"]["rmse"] - 0.5) < 0.05'
check reg 'abs(d["optimizers"]["adamw"]["test"]["noise_std"][0] - 0.5) < 0.05'
check reg 'abs(d["optimizers"]["adamw"]["test"]["mean"]["coverage"]["0.9"] - 0.9) < 0.05'
# NLL of N(0, 0.5²) residuals: log(0.5·sqrt(2π)) + 1/2 = 0.7258
check reg 'abs(d["optimizers"]["adamw"]["test"]["mean"]["nll"] - 0.7258) < 0.05'
check reg '"ood_shift" not in d'
grep -q "RMSE" "$work/reg.out" || fail "csv regression: no RMSE column in the table"
"$blr" train --data "$work/reg.csv" --task regression --categorical colour --hidden 16 \
  --optimizer ivon --epochs 3 --batch-size 50 --test-samples 8 --out "$work/ivonreg" \
  --json "$work/ivonreg.json" "${quiet[@]}" >/dev/null 2>"$work/err" ||
  { fail "csv regression ivon: exit status $?"; cat "$work/err" >&2; }
check ivonreg 'd["optimizers"]["ivon"]["test"]["predictive"]["samples"] == 8'
check ivonreg 'd["optimizers"]["ivon"]["test"]["mean"]["count"] == 300'  # 20 % of 1500 held out
check ivonreg '0 <= d["optimizers"]["ivon"]["test"]["predictive"]["miscalibration"] <= 1'
"$blr" eval --checkpoint "$work/ivonreg/ivon.ckpt" --json "$work/ivonreg_eval.json" \
  "${quiet[@]}" >/dev/null 2>"$work/err" || { fail "eval regression: exit status $?"; cat "$work/err" >&2; }
check ivonreg_eval 'd["optimizers"]["ivon"]["parameter_digest"] == json.load(open(sys.argv[1].replace("_eval", "")))["optimizers"]["ivon"]["parameter_digest"]'
check ivonreg_eval 'd["optimizers"]["ivon"]["test"]["mean"] == json.load(open(sys.argv[1].replace("_eval", "")))["optimizers"]["ivon"]["test"]["mean"]'

# ---- CSV errors --------------------------------------------------------------------------------
expect_fail csv-no-task "needs --task classification or --task regression" \
  train --data "$work/reg.csv" "${quiet[@]}"
expect_fail csv-text-feature "colour" train --data "$work/reg.csv" --task regression "${quiet[@]}"
expect_fail csv-bad-label "no column" train --data "$work/reg.csv" --task regression \
  --label nothere --categorical colour "${quiet[@]}"
expect_fail unknown-format "give fashion-mnist, a file written by torch.save" \
  train --data "$work/reg.txt" "${quiet[@]}"
expect_fail label-fashion "apply to CSV data" train --label y "${quiet[@]}"
expect_fail noise-negative "noise-std" train --data "$work/reg.csv" --task regression \
  --noise-std -1 "${quiet[@]}"

# ---- torch.save data (needs Debian's python3-torch) --------------------------------------------
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 cannot import torch (Debian's python3-torch); the torch.save checks did not run." >&2
  finish
  exit 0
fi
/usr/bin/python3 - "$work" <<'PY'
import sys, torch
torch.manual_seed(0)
d = sys.argv[1]
def make(n):
    y = torch.randint(0, 3, (n,))
    x = torch.randn(n, 6) + 2.0 * torch.nn.functional.one_hot(y, 6).float()
    return x, y
x, y = make(600)
xt, yt = make(200)
torch.save({"x": x, "y": y, "x_test": xt, "y_test": yt}, f"{d}/cls.pt")
torch.save({"x": x, "y": y}, f"{d}/cls_notest.pt")
torch.save({"x": x, "y": y.float() + 0.5}, f"{d}/frac.pt")
torch.save({"x": x, "y": y, "x_test": xt}, f"{d}/half.pt")
torch.save({"x": x[:10], "y": y}, f"{d}/mismatch.pt")
bad = x.clone(); bad[7, 2] = float("nan")
torch.save({"x": bad, "y": y}, f"{d}/nan.pt")
torch.save({"x": x, "y": y - 1}, f"{d}/negative.pt")
torch.save({"x": x, "z": y}, f"{d}/nokey.pt")
torch.save([x, y], f"{d}/list.pt")
torch.save({"x": x > 0, "y": y}, f"{d}/bool.pt")
torch.save({"x": (x * 40 + 100).clamp(0, 255).to(torch.uint8), "y": y}, f"{d}/uint8.pt")
torch.save({"x": x[:, 0].contiguous(), "y": y}, f"{d}/x1d.pt")
torch.save({"x": x, "y": torch.tensor(3)}, f"{d}/yscalar.pt")
PY
lr=(--ivon-lr 0.1 --adamw-lr 0.01)
for o in ivon adamw; do
  [ $o = ivon ] && olr=("${lr[@]:0:2}") || olr=("${lr[@]:2:2}")
  "$blr" train --data "$work/cls.pt" --optimizer $o "${olr[@]}" --hidden 16 --epochs 4 --batch-size 50 \
    --test-samples 4 --out "$work/$o" --json "$work/$o.json" "${quiet[@]}" >"$work/$o.out" 2>"$work/err" ||
    { fail "pt $o: exit status $?"; cat "$work/err" >&2; }
  # no shifted test set: the OOD column shows a dash, not nan
  ! grep -qi "nan" "$work/$o.out" || { fail "pt $o: the table prints nan"; cat "$work/$o.out" >&2; }
  check $o "d['optimizers']['$o']['test']['mean']['accuracy'] > 0.8"
  check $o "d['optimizers']['$o']['test']['mean']['count'] == 200"
  check $o "'ood' not in d['optimizers']['$o']['test']"
  # resuming the epoch-2 checkpoint (written during training) to 4 epochs is bitwise the
  # uninterrupted run
  "$blr" train --data "$work/cls.pt" --optimizer $o "${olr[@]}" --hidden 16 --epochs 2 --batch-size 50 \
    --test-samples 4 --out "$work/${o}2" --checkpoint-every 2 "${quiet[@]}" >/dev/null 2>"$work/err" ||
    { fail "pt $o 2 epochs: exit status $?"; cat "$work/err" >&2; }
  "$blr" train --resume "$work/${o}2/checkpoints" --epochs 4 --json "$work/${o}r.json" \
    "${quiet[@]}" >/dev/null 2>"$work/err" || { fail "pt $o resume: exit status $?"; cat "$work/err" >&2; }
  check ${o}r "d['optimizers']['$o']['parameter_digest'] == json.load(open(sys.argv[1].replace('r.json', '.json')))['optimizers']['$o']['parameter_digest']"
  "$blr" eval --checkpoint "$work/$o/$o.ckpt" --json "$work/${o}e.json" "${quiet[@]}" >/dev/null \
    2>"$work/err" || { fail "pt $o eval: exit status $?"; cat "$work/err" >&2; }
  check ${o}e "d['optimizers']['$o']['test']['mean'] == json.load(open(sys.argv[1].replace('e.json', '.json')))['optimizers']['$o']['test']['mean']"
done
"$blr" train --data "$work/cls_notest.pt" --optimizer adamw --hidden 16 --epochs 1 \
  --json "$work/notest.json" "${quiet[@]}" >/dev/null 2>"$work/err" ||
  { fail "pt without test: exit status $?"; cat "$work/err" >&2; }
check notest 'd["optimizers"]["adamw"]["test"]["mean"]["count"] == 120'  # 20 % of 600
check notest 'd["optimizers"]["adamw"]["train_size"] == 480'
expect_fail pt-frac "class labels must be whole numbers" train --data "$work/frac.pt" --task classification "${quiet[@]}"
expect_fail pt-half "has x_test but not y_test" train --data "$work/half.pt" "${quiet[@]}"
expect_fail pt-mismatch "'x' has 10 examples but 'y' has 600" train --data "$work/mismatch.pt" "${quiet[@]}"
expect_fail pt-nan "non-finite value (nan) at flat index 44 (example 7)" train --data "$work/nan.pt" "${quiet[@]}"
expect_fail pt-negative "class labels must be 0, 1, 2" train --data "$work/negative.pt" "${quiet[@]}"
expect_fail pt-unknown-key "key 'z' that blr does not read" train --data "$work/nokey.pt" "${quiet[@]}"
expect_fail pt-list "not a dict" train --data "$work/list.pt" "${quiet[@]}"
expect_fail pt-bool "inputs must be floating point or integer" train --data "$work/bool.pt" "${quiet[@]}"
# Issue 34, D19 (pt-uint8): integer images are read as token ids; the sentence says so
expect_fail pt-uint8 "the inputs are integers, which blr reads as token ids" \
  train --data "$work/uint8.pt" --hidden 8 "${quiet[@]}"
# Issue 34, D19 (pt-1d, pt-yscalar): one number per example, and a scalar y, said as such
expect_fail pt-1d "the inputs have one number per example" train --data "$work/x1d.pt" --hidden 8 "${quiet[@]}"
expect_fail pt-yscalar "'y' is a scalar; it needs one label per example" train --data "$work/yscalar.pt" "${quiet[@]}"
printf 'not a zip' >"$work/junk.pt"
expect_fail pt-junk "is not a data set written by torch.save" train --data "$work/junk.pt" "${quiet[@]}"
expect_fail pt-missing-file "Cannot read the tensor file" train --data "$work/none.pt" "${quiet[@]}"
# A crafted file on which LibTorch's unpickler grows memory without bound (24 GB before it is
# killed: a LONG_BINPUT into memo slot 779 428 977; fuzz/corpus/tensor_file/oom-unpickler-long-
# binput, whose first byte is the harness's task selector): refused by the pickle check at once.
tail -c +2 "${2:?}/fuzz/corpus/tensor_file/oom-unpickler-long-binput" >"$work/oom.pt"
expect_fail pt-memory-bomb "writes memo slot 779428977 of 36" train --data "$work/oom.pt" "${quiet[@]}"
# A crafted file whose pickle memoises into slot 21 of an empty memo and then applies REDUCE to
# a stack of one item, on which LibTorch 1.13's unpickler corrupts its stack and aborts
# (libFuzzer, stop 25; fuzz/corpus/tensor_file/abort-unpickler-reduce-on-one-item): refused
# before LibTorch reads it, now already by the archive check's reading of its zip directory, one
# of whose records has no local header (the pickle check's refusal of REDUCE is shown by
# PickleCheck.RefusesMalformedStreams).
tail -c +2 "${2:?}/fuzz/corpus/tensor_file/abort-unpickler-reduce-on-one-item" >"$work/reduce.pt"
expect_fail pt-unpickler-reduce "its record 'archive/data/0' has no local header inside the archive" \
  train --data "$work/reduce.pt" "${quiet[@]}"
finish
