#!/usr/bin/env bash
# `blr launch` and data-parallel training over loopback (127.0.0.1, a free port per run): IVON on
# two ranks with one Monte Carlo sample each (--dist-split samples) gives bitwise the parameters
# and report of one process with two samples; AdamW and IVON with the data split report the bytes
# they all-reduce (IVON twice AdamW's); a rank killed mid-run makes launch stop the other and say
# so within the timeout, with the last checkpoint intact and loadable; a hung rank makes the other
# fail within --dist-timeout; a run resumes with another world size; `blr bench data-parallel`
# times its three configurations and refuses a model it cannot train.
# Usage: torch_launch.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_launch.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
py=/usr/bin/python3
check() {
  $py -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$work/$1.json" \
    2>"$work/py.err" || { fail "$1: JSON fails $2"; tail -1 "$work/py.err" >&2; }
}

# ---- without data: bad input gets one sentence -------------------------------------------------
expect_fail launch-nproc "Option '--nproc' must be between 1 and 64" launch --nproc 0 -- train
expect_fail launch-empty "needs the blr command to run after '--'" launch --nproc 2
# Issue 34, D19: a command of the front (infer) is named, not "unknown command" from the LibTorch part
expect_fail launch-infer "'infer' is not one of them, so run \`blr infer\` directly" launch --nproc 2 -- infer logistic --train x.csv --label y
RANK=0 "$blr" train --quiet >"$work/out" 2>"$work/err" && fail "RANK without WORLD_SIZE: exit 0"
grep -qF "sets RANK but not WORLD_SIZE" "$work/err" || { fail "RANK alone: no sentence"; cat "$work/err" >&2; }
RANK=2 WORLD_SIZE=2 MASTER_PORT=1 "$blr" train --quiet >"$work/out" 2>"$work/err" &&
  fail "RANK 2 of 2: exit 0"
grep -qF "ranks run from 0 to WORLD_SIZE - 1" "$work/err" || { fail "RANK 2 of 2: no sentence"; cat "$work/err" >&2; }
expect_fail dist-split "Option '--dist-split' must be data or samples" train --dist-split x --quiet
expect_fail bench-dp-model "--model must be mlp, lenet or resnet20" bench data-parallel --model gpt
# a launched command that fails is named with its rank and status
"$blr" launch --nproc 2 -- train --dist-split x --quiet >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" -ne 0 ] || fail "launch of a failing command: exit 0"
grep -qE "blr launch: rank [01] exited with status 2; stopped the other ranks" "$work/err" ||
  { fail "launch of a failing command: no sentence"; cat "$work/err" >&2; }
grep -qE "^\[rank [01]\] blr: error: Option '--dist-split'" "$work/err" ||
  { fail "launch: the rank's output is not prefixed"; cat "$work/err" >&2; }

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  finish
  exit 0
fi
tiny=(--train-limit 256 --test-limit 200 --batch-size 64 --threads 1 --hidden 32 --quiet
      --dist-timeout 60)

# ---- IVON: 2 ranks x 1 sample = 1 process x 2 samples, bitwise ----------------------------------
"$blr" train --optimizer ivon --ivon-mc-samples 2 --epochs 2 --test-samples 4 "${tiny[@]}" \
  --json "$work/one.json" >/dev/null 2>"$work/err" || { fail "ivon 1x2: exit $?"; cat "$work/err" >&2; }
"$blr" launch --nproc 2 -- train --optimizer ivon --ivon-mc-samples 1 --dist-split samples \
  --epochs 2 --test-samples 4 "${tiny[@]}" --json "$work/two.json" >/dev/null 2>"$work/err" ||
  { fail "ivon 2x1: exit $?"; cat "$work/err" >&2; }
$py - "$work/one.json" "$work/two.json" <<'PY' || fail "IVON on 2 ranks differs from 1 process with 2 samples"
import json, sys
one, two = (json.load(open(f))["optimizers"]["ivon"] for f in sys.argv[1:])
assert one["parameter_digest"] == two["parameter_digest"], (one["parameter_digest"], two["parameter_digest"])
keys = ["train_loss", "test_accuracy", "test_nll"]
assert [[r[k] for k in keys] for r in one["history"]] == [[r[k] for k in keys] for r in two["history"]]
for r in (one, two):
    r["test"].pop("seconds", None)
assert one["test"] == two["test"], (one["test"], two["test"])
PY
check two 'd["distributed"]["world_size"] == 2 and d["distributed"]["split"] == "samples"'

# ---- data split: bytes per step, IVON twice AdamW ----------------------------------------------
for opt in adamw ivon; do
  "$blr" launch --nproc 2 -- train --optimizer $opt --epochs 1 "${tiny[@]}" \
    --json "$work/data-$opt.json" >/dev/null 2>"$work/err" || { fail "$opt data split: exit $?"; cat "$work/err" >&2; }
done
check data-adamw 'd["distributed"]["steps"] == 4 and d["distributed"]["allreduce_bytes_per_step"] > 0'
$py - "$work/data-adamw.json" "$work/data-ivon.json" <<'PY' || fail "IVON does not all-reduce twice AdamW's bytes"
import json, sys
a, i = (json.load(open(f))["distributed"]["allreduce_bytes_per_step"] for f in sys.argv[1:])
assert i == 2 * a, (a, i)
PY

# ---- bench data-parallel: the three configurations, their ratios and the all-reduce figures ----
"$blr" bench data-parallel --optimizers adamw --model lenet --train-limit 256 --batch-size 128 \
  --rounds 1 --json "$work/bench-dp.json" >"$work/out" 2>"$work/err" ||
  { fail "bench data-parallel: exit $?"; cat "$work/err" >&2; }
check bench-dp 'set(d["results"]["adamw"]) == {"1x1", "1x2", "2x1"} and d["results"]["adamw"]["1x1"]["throughput_vs_1x1"] == 1 and d["results"]["adamw"]["2x1"]["distributed"]["allreduce_bytes_per_step"] == 4 * 61706'

# ---- a rank killed mid-run: the other stops with the sentence, the checkpoint loads ------------
long=(--train-limit 256 --test-limit 100 --batch-size 32 --threads 1 --hidden 32 --quiet)
start_launch() {  # $1: output dir; runs launch in the background, sets pid and rank1
  "$blr" launch --nproc 2 --grace 2 -- train --optimizer adamw --epochs 400 "${long[@]}" \
    --dist-timeout 8 --checkpoint-every 1 --out "$1" >/dev/null 2>"$work/launch.err" &
  pid=$!
  rank1=""
  for _ in $(seq 1 600); do  # at most 60 s until the first checkpoint
    rank1=$(sed -n 's/^blr launch: rank 1 is process \([0-9]*\).*/\1/p' "$work/launch.err")
    [ -n "$rank1" ] && [ -f "$1/checkpoints/adamw-epoch-1.ckpt" ] && return 0
    sleep 0.1
  done
  return 1
}
if start_launch "$work/kill"; then
  t0=$(date +%s)
  kill -KILL "$rank1"
  wait "$pid"; rc=$?
  t1=$(date +%s)
  [ "$rc" -ne 0 ] || fail "kill: launch exited 0"
  grep -qF "blr launch: rank 1 was killed by signal 9" "$work/launch.err" ||
    { fail "kill: no sentence naming rank 1"; cat "$work/launch.err" >&2; }
  [ $((t1 - t0)) -le $((8 + 2 + 5)) ] || fail "kill: launch took $((t1 - t0)) s to stop (timeout 8 s, grace 2 s)"
  kill -0 "$rank1" 2>/dev/null && fail "kill: rank 1 still exists"
  last=$(ls "$work/kill/checkpoints"/adamw-epoch-*.ckpt | sort -t- -k3 -n | tail -1)
  "$blr" eval --checkpoint "$last" --quiet --json "$work/kill-eval.json" >/dev/null 2>"$work/err" ||
    { fail "kill: the last checkpoint $last does not load"; cat "$work/err" >&2; }
  # resume the 2-rank run on 1 process, 2 more epochs
  done_epochs=$(basename "$last" .ckpt | sed 's/.*-//')
  "$blr" train --resume "$last" --epochs $((done_epochs + 2)) --threads 1 --quiet \
    --json "$work/resumed1.json" >/dev/null 2>"$work/err" || { fail "resume on 1 process: exit $?"; cat "$work/err" >&2; }
  check resumed1 "len(d['optimizers']['adamw']['history']) == $((done_epochs + 2))"
  # and on 3 ranks
  "$blr" launch --nproc 3 -- train --resume "$last" --epochs $((done_epochs + 1)) --threads 1 \
    --quiet --json "$work/resumed3.json" >/dev/null 2>"$work/err" ||
    { fail "resume on 3 ranks: exit $?"; cat "$work/err" >&2; }
  check resumed3 "len(d['optimizers']['adamw']['history']) == $((done_epochs + 1)) and d['distributed']['world_size'] == 3"
else
  fail "kill: no checkpoint within 60 s"; cat "$work/launch.err" >&2; kill -KILL "$pid" 2>/dev/null; wait "$pid"
fi

# ---- a hung rank: the other fails within --dist-timeout, launch stops both ---------------------
if start_launch "$work/hang"; then
  t0=$(date +%s)
  kill -STOP "$rank1"
  wait "$pid"; rc=$?
  t1=$(date +%s)
  [ "$rc" -ne 0 ] || fail "hang: launch exited 0"
  grep -qF "did not answer within 8 s" "$work/launch.err" ||
    { fail "hang: rank 0 did not name the timeout"; cat "$work/launch.err" >&2; }
  grep -qF "blr launch: rank 0 exited with status 2; stopped the other ranks" "$work/launch.err" ||
    { fail "hang: no sentence naming rank 0"; cat "$work/launch.err" >&2; }
  [ $((t1 - t0)) -le $((8 + 2 + 10)) ] || fail "hang: launch took $((t1 - t0)) s to stop"
  kill -0 "$rank1" 2>/dev/null && fail "hang: rank 1 still exists"
else
  fail "hang: no checkpoint within 60 s"; cat "$work/launch.err" >&2; kill -KILL "$pid" 2>/dev/null; wait "$pid"
fi

finish
echo "all launch checks passed"
