#!/usr/bin/env bash
# `blr train --resume C --epochs N` extends a finished run to N epochs in all (fewer than done is
# an error), and `blr eval` names its checkpoint one way, --checkpoint (a bare file is refused
# with a sentence saying so). Usage: torch_resume_eval.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_resume_eval.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
check() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$work/$1.json" \
    2>"$work/py.err" || { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}

# ---- eval: one spelling (no data needed) -------------------------------------------------------
expect_fail eval-bare "blr eval takes the checkpoint as --checkpoint $work/x.ckpt" eval "$work/x.ckpt"
expect_fail eval-none "blr eval needs --checkpoint FILE" eval
"$blr" eval --help | grep -q -- "--checkpoint" || fail "eval --help does not show --checkpoint"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  [ "$failures" -eq 0 ] && exit 0 || exit 1
fi

# ---- resume a finished 2-epoch run to 3 epochs -------------------------------------------------
tiny=(--train-limit 256 --test-limit 300 --batch-size 64 --threads 1 --hidden 32 --quiet)
"$blr" train --optimizer ivon --test-samples 2 --epochs 2 --out "$work/run" \
  --json "$work/two.json" "${tiny[@]}" >/dev/null 2>"$work/err" ||
  { fail "train: exit status $?"; cat "$work/err" >&2; }
"$blr" train --resume "$work/run/ivon.ckpt" --epochs 3 --threads 1 --quiet --out "$work/more" \
  --json "$work/three.json" >"$work/out" 2>"$work/err" ||
  { fail "resume --epochs 3: exit status $?"; cat "$work/err" >&2; }
check three 'd["epochs"] == 3'
check three '[r["epoch"] for r in d["optimizers"]["ivon"]["history"]] == [1, 2, 3]'
check three 'd["optimizers"]["ivon"]["history"][2]["test_accuracy"] > 0'
check three 'd["optimizers"]["ivon"]["steps"] == 12'   # 3 epochs of 256/64 = 4 steps
# the first two epochs are the original run's, unchanged
python3 -c '
import json, sys
two, three = (json.load(open(f))["optimizers"]["ivon"]["history"] for f in sys.argv[1:])
assert [r["train_loss"] for r in two] == [r["train_loss"] for r in three[:2]], (two, three)
' "$work/two.json" "$work/three.json" || fail "resume: the first two epochs changed"
# extending a finished run trains exactly as one run of 3 epochs would: the final checkpoint holds
# the state at the end of training, not after the test evaluation's posterior draws
"$blr" train --optimizer ivon --test-samples 2 --epochs 3 --json "$work/straight.json" "${tiny[@]}" \
  >/dev/null 2>"$work/err" || { fail "train 3 epochs: exit status $?"; cat "$work/err" >&2; }
python3 -c '
import json, sys
a, b = (json.load(open(f))["optimizers"]["ivon"] for f in sys.argv[1:])
assert a["parameter_digest"] == b["parameter_digest"], (a["parameter_digest"], b["parameter_digest"])
assert [r["train_loss"] for r in a["history"]] == [r["train_loss"] for r in b["history"]]
' "$work/three.json" "$work/straight.json" || fail "resume: 2 + 1 epochs differ from 3 epochs"
# the extended checkpoint resumes again: 3 done, nothing left to train
"$blr" train --resume "$work/more/ivon.ckpt" --threads 1 --quiet --json "$work/again.json" \
  >/dev/null 2>"$work/err" || { fail "resume of the extended run: exit status $?"; cat "$work/err" >&2; }
check again 'len(d["optimizers"]["ivon"]["history"]) == 3'
expect_fail resume-fewer "--epochs 1 is fewer than the 2 epochs the checkpoint" \
  train --resume "$work/run/ivon.ckpt" --epochs 1 --quiet
expect_fail resume-other-config "drop --batch-size" \
  train --resume "$work/run/ivon.ckpt" --batch-size 32 --quiet

finish
echo "all resume/eval checks passed"
