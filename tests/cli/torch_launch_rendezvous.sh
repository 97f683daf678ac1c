#!/usr/bin/env bash
# Issue 34, D6 and D7. D6: the ranks of `blr launch` meet through a file in a private directory
# (mode 0700, under $TMPDIR, removed at the end), so no process of a launched run listens on a
# socket; a positive control shows that the check sees the TCP store of a torchrun-style rank 0.
# D7: ranks started with different configurations stop with one sentence naming the difference
# (exit 2, never Gloo's SIGABRT, never a silent run): --hidden through MASTER_ADDR/MASTER_PORT
# (the audit's reproducer), --seed and the data through the rendezvous file.
# Usage: torch_launch_rendezvous.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_launch_rendezvous.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ] || ! command -v ss >/dev/null; then
  echo "SKIP: Fashion-MNIST or ss (iproute2) is missing." >&2
  finish
  exit 0
fi
listening() {  # $1: pid; true when it holds a listening TCP socket
  ss -ltnpH 2>/dev/null | grep -q "pid=$1,"
}

# ---- D6: a launched run opens no listening socket, and its rendezvous directory is private -----
mkdir -p "$work/tmp"
TMPDIR="$work/tmp" "$blr" launch --nproc 2 --grace 2 -- train --optimizer adamw --epochs 400 \
  --train-limit 256 --test-limit 100 --batch-size 32 --threads 1 --hidden 32 --quiet \
  --dist-timeout 20 --checkpoint-every 1 --out "$work/run" >/dev/null 2>"$work/launch.err" &
pid=$!
ranks=""
for _ in $(seq 1 600); do  # at most 60 s until the first checkpoint
  ranks=$(sed -n 's/^blr launch: rank [01] is process \([0-9]*\).*/\1/p' "$work/launch.err" | tr '\n' ' ')
  [ "$(echo "$ranks" | wc -w)" -eq 2 ] && [ -f "$work/run/checkpoints/adamw-epoch-1.ckpt" ] && break
  sleep 0.1
done
if [ -f "$work/run/checkpoints/adamw-epoch-1.ckpt" ]; then
  for p in $pid $ranks; do
    listening "$p" && fail "D6: process $p of a launched run listens: $(ss -ltnpH | grep "pid=$p,")"
  done
  dirs=("$work"/tmp/blr-launch-*)
  if [ ${#dirs[@]} -ne 1 ] || [ ! -d "${dirs[0]}" ]; then
    fail "D6: no rendezvous directory under \$TMPDIR while the ranks run"
  elif [ "$(stat -c %a "${dirs[0]}")" != 700 ]; then
    fail "D6: the rendezvous directory has mode $(stat -c %a "${dirs[0]}"), not 700"
  fi
  kill -TERM "$pid"
  wait "$pid"
  compgen -G "$work/tmp/blr-launch-*" >/dev/null && fail "D6: the rendezvous directory is left behind"
else
  fail "D6: the launched run wrote no checkpoint within 60 s"; cat "$work/launch.err" >&2
  kill -KILL "$pid" 2>/dev/null; wait "$pid"
fi
# Positive control: rank 0 of a torchrun-style run serves a TCP store, which the check sees.
port=$((20000 + RANDOM % 20000))
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$blr" train --train-limit 64 \
  --test-limit 64 --threads 1 --quiet --dist-timeout 6 >/dev/null 2>"$work/alone.err" &
alone=$!
seen=0
for _ in $(seq 1 50); do
  listening "$alone" && { seen=1; break; }
  sleep 0.1
done
[ "$seen" -eq 1 ] || fail "D6 control: the check does not see rank 0's TCP store listening"
wait "$alone" && fail "D6 control: rank 0 without its peer exited 0"

# ---- D19 (dp-port-in-use): a taken MASTER_PORT is blr's one sentence, without LibTorch's log lines
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(30)' >"$work/holder.port" &
holder=$!
for _ in $(seq 1 50); do [ -s "$work/holder.port" ] && break; sleep 0.1; done
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(cat "$work/holder.port") "$blr" train \
  --train-limit 64 --test-limit 64 --threads 1 --quiet --dist-timeout 5 >/dev/null 2>"$work/taken.err"
rc=$?
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
[ "$rc" -eq 2 ] || fail "dp-port-in-use: exit status $rc, expected 2"
grep -q "Address already in use" "$work/taken.err" || { fail "dp-port-in-use: the cause is not named:"; cat "$work/taken.err" >&2; }
[ "$(wc -l <"$work/taken.err")" -eq 1 ] || { fail "dp-port-in-use: stderr is not one line:"; cat "$work/taken.err" >&2; }

# ---- D7: ranks with different configurations ---------------------------------------------------
c=(--train-limit 512 --test-limit 200 --batch-size 64 --threads 1 --epochs 1 --quiet --dist-timeout 20)
pair() {  # NAME "ENV..." "RANK-0 FLAGS" "RANK-1 FLAGS": both ranks must exit 2 with the sentence
  local name=$1 env=$2
  # shellcheck disable=SC2086
  env RANK=0 WORLD_SIZE=2 $env "$blr" train "${c[@]}" $3 >/dev/null 2>"$work/$name.0" &
  local p0=$!
  # shellcheck disable=SC2086
  env RANK=1 WORLD_SIZE=2 $env "$blr" train "${c[@]}" $4 >/dev/null 2>"$work/$name.1"
  local rc1=$?
  wait "$p0"
  local rc0=$?
  [ "$rc0" -eq 2 ] && [ "$rc1" -eq 2 ] || fail "D7 $name: exit statuses $rc0 and $rc1, not 2 and 2"
  for r in 0 1; do
    grep -qF "$5" "$work/$name.$r" ||
      { fail "D7 $name: rank $r does not say '$5'"; cat "$work/$name.$r" >&2; }
  done
}
port=$((20000 + RANDOM % 20000))
pair hidden "MASTER_ADDR=127.0.0.1 MASTER_PORT=$port" "--hidden 32" "--hidden 64" \
  "Rank 1 of 2 was started with --hidden = [64], but rank 0 with --hidden = [32]"
pair seed "BLR_RENDEZVOUS_FILE=$work/seed.store" "--seed 1" "--seed 2" \
  "Rank 1 of 2 was started with --seed = 2, but rank 0 with --seed = 1"
pair optimizer "BLR_RENDEZVOUS_FILE=$work/optimizer.store" "--hidden 16 --optimizer adamw" "--hidden 16 --optimizer ivon" \
  "Rank 1 of 2 was started with --optimizer = \"ivon\", but rank 0 with --optimizer = \"adamw\""
finish
