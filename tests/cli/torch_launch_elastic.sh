#!/usr/bin/env bash
# Issue 33, deliverable 4: `blr launch --max-restarts N` (elastic restarts, as torchrun's agent).
# A kill loop on a 2-rank IVON run that writes a checkpoint every epoch: rank 1 is killed with
# SIGKILL (rank 0 held with SIGSTOP first, so that the newest checkpoint is known), then rank 1
# again with the newest checkpoint truncated on disk, then rank 0. After each kill launch must
# name the rank, the signal, the restart count and the newest VALID checkpoint (the truncated one
# skipped), rank 0 must resume from that checkpoint, and the run must finish with parameters
# bitwise those of an uninterrupted `blr launch` with the same flags (parameter_digest), the same
# per-epoch losses, and only the steps after the last checkpoint trained by the last start.
# Also: a command that fails at every start stops after N restarts with the sentence; commands
# that a restart could not resume are refused; --auto-resume refuses another run's checkpoints.
# Usage: torch_launch_elastic.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_launch_elastic.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
py=/usr/bin/python3

# ---- refusals (no data needed) -------------------------------------------------------------------
expect_fail restarts-range "Option '--max-restarts' must be between 0 and 100; got 101" \
  launch --max-restarts 101 -- train --out "$work/x" --checkpoint-every 1
expect_fail restarts-eval "Option '--max-restarts' restarts \`train\` only" \
  launch --max-restarts 1 -- eval --checkpoint "$work/x.ckpt"
expect_fail restarts-no-out "needs a train command that writes checkpoints (--out DIR and --checkpoint-every K > 0), so that a restart resumes the run instead of redoing it; this one has no --out" \
  launch --max-restarts 1 -- train --checkpoint-every 1
expect_fail restarts-no-every "this one has no --checkpoint-every" \
  launch --max-restarts 1 -- train --out "$work/x"
expect_fail restarts-every-0 "this one has --checkpoint-every 0" \
  launch --max-restarts 2 -- train --out="$work/x" --checkpoint-every=0
expect_fail auto-resume-no-out "Option '--auto-resume' needs '--out DIR'" train --auto-resume --quiet

# ---- a command that fails at every start: N restarts, then the sentence --------------------------
"$blr" launch --nproc 2 --max-restarts 2 -- train --dist-split x --out "$work/fails" \
  --checkpoint-every 1 --quiet >/dev/null 2>"$work/fails.err"
rc=$?
[ "$rc" -eq 2 ] || fail "restart limit: exit status $rc, not the rank's 2"
grep -qE "^blr launch: rank [01] exited with status 2 after 2 restarts, the limit set by --max-restarts; stopped all ranks\.$" "$work/fails.err" ||
  { fail "restart limit: no final sentence"; cat "$work/fails.err" >&2; }
for k in 1 2; do
  grep -qE "^blr launch: rank [01] exited with status 2; restart $k of 2, all ranks from scratch \(no valid checkpoint in '$work/fails/checkpoints' yet\)\.$" "$work/fails.err" ||
    { fail "restart limit: no line for restart $k"; cat "$work/fails.err" >&2; }
done
[ "$(grep -c '^blr launch: rank 0 is process' "$work/fails.err")" -eq 3 ] ||
  fail "restart limit: not 3 starts of rank 0"

data_dir=${BLR_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data_dir/train-images-idx3-ubyte.gz" ]; then
  echo "SKIP: Fashion-MNIST is not installed; only the checks without data ran." >&2
  finish
  exit 0
fi

# ---- the kill loop --------------------------------------------------------------------------------
epochs=12
steps_per_epoch=128   # 4096 rows, batch 32
run=(train --optimizer ivon --epochs $epochs --train-limit 4096 --test-limit 100 --batch-size 32
     --hidden 32 --test-samples 2 --seed 5 --threads 1 --quiet --checkpoint-every 1
     --dist-timeout 20)
t_start=$(date +%s)
"$blr" launch --nproc 2 -- "${run[@]}" --out "$work/reference" --json "$work/reference.json" \
  >/dev/null 2>"$work/reference.err" || { fail "uninterrupted run: exit $?"; cat "$work/reference.err" >&2; }
t_reference=$(( $(date +%s) - t_start ))

ckdir="$work/elastic/checkpoints"
newest_epoch() {  # the highest epoch of a complete (renamed) checkpoint file, or 0
  local n=0 f e
  for f in "$ckdir"/ivon-epoch-*.ckpt; do
    [ -f "$f" ] || continue
    e=${f##*-epoch-}; e=${e%.ckpt}
    [ "$e" -gt "$n" ] && n=$e
  done
  echo "$n"
}
stopped() {  # $1: pid; waits (at most 5 s) until the process is stopped: no write of it is under way
  for _ in $(seq 1 100); do
    [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = T ] && return 0
    sleep 0.05
  done
  return 1
}
pid_of() {  # $1: rank, $2: start (1-based); the process id launch printed for it, or ""
  grep "^blr launch: rank $1 is process " "$work/elastic.err" 2>/dev/null | sed -n "$2p" | sed 's/.* process \([0-9]*\).*/\1/'
}
"$blr" launch --nproc 2 --grace 1 --max-restarts 3 -- "${run[@]}" --out "$work/elastic" \
  --json "$work/elastic.json" >/dev/null 2>"$work/elastic.err" &
launch=$!
resumed=0         # the epoch the current start resumed from
past=0            # the next kill waits for two complete checkpoints after this epoch, so that
                  # the newest valid one is not the oldest
expected=()       # per kill: the checkpoint the restart must name
killed=()
for k in 1 2 3; do
  r0="" r1="" n=0
  for _ in $(seq 1 1200); do  # at most 60 s for this start's ranks and two checkpoints past $past
    r0=$(pid_of 0 "$k"); r1=$(pid_of 1 "$k"); n=$(newest_epoch)
    [ -n "$r0" ] && [ -n "$r1" ] && [ "$n" -ge $((past + 2)) ] && break
    sleep 0.05
  done
  if [ -z "$r0" ] || [ -z "$r1" ] || [ "$n" -lt $((past + 2)) ]; then
    fail "kill $k: no new checkpoint within 60 s"; cat "$work/elastic.err" >&2; break
  fi
  if [ "$k" -lt 3 ]; then
    # Rank 0 writes the checkpoints: held, it writes no other before launch SIGKILLs it.
    kill -STOP "$r0"
    stopped "$r0" || fail "kill $k: rank 0 (process $r0) does not stop"
    n=$(newest_epoch)
    if [ "$k" -eq 2 ]; then  # the newest file torn: the restart must take the one before
      truncate -s 100 "$ckdir/ivon-epoch-$n.ckpt"
      torn=$n
      n=$((n - 1))
    fi
    kill -KILL "$r1"; killed+=("$r1")
    expected+=("1 $n")
  else
    kill -KILL "$r0"; killed+=("$r0")
    n=$(newest_epoch)
    expected+=("0 $n")
  fi
  resumed=$n
  past=$(newest_epoch)   # the torn file stays until the run writes that epoch again
done
# the whole run is bounded: at most 120 s more
for _ in $(seq 1 1200); do kill -0 "$launch" 2>/dev/null || break; sleep 0.1; done
kill -0 "$launch" 2>/dev/null && { fail "elastic run: still running after 120 s"; kill -TERM "$launch"; }
wait "$launch"; rc=$?
t_total=$(( $(date +%s) - t_start ))
[ "$rc" -eq 0 ] || { fail "elastic run: exit status $rc"; cat "$work/elastic.err" >&2; }
for p in "${killed[@]}"; do kill -0 "$p" 2>/dev/null && fail "process $p still exists"; done
k=0
for e in "${expected[@]}"; do
  k=$((k + 1))
  rank=${e% *} n=${e#* }
  line="blr launch: rank $rank was killed by signal 9 (Killed); restart $k of 3, all ranks from '$ckdir/ivon-epoch-$n.ckpt' (epoch $n)."
  grep -qxF "$line" "$work/elastic.err" || { fail "restart $k: no line '$line'"; grep '^blr launch' "$work/elastic.err" >&2; }
  grep -qxF "[rank 0] blr: --auto-resume: resuming from '$ckdir/ivon-epoch-$n.ckpt' (epoch $n)." "$work/elastic.err" ||
    { fail "restart $k: rank 0 did not resume from epoch $n"; grep 'resum' "$work/elastic.err" >&2; }
done
if [ -n "${torn:-}" ]; then
  grep -qF "blr launch: skipped: The checkpoint '$ckdir/ivon-epoch-$torn.ckpt' is truncated" "$work/elastic.err" ||
    { fail "the truncated epoch $torn is not named by launch"; grep skipped "$work/elastic.err" >&2; }
  grep -qF "[rank 0] blr: skipped: The checkpoint '$ckdir/ivon-epoch-$torn.ckpt' is truncated" "$work/elastic.err" ||
    fail "the truncated epoch $torn is not named by rank 0"
fi
[ "$(grep -c '^blr launch: rank 0 is process' "$work/elastic.err")" -eq 4 ] || fail "elastic run: not 4 starts"
$py - "$work/reference.json" "$work/elastic.json" "$resumed" $epochs $steps_per_epoch <<'PY' ||
import json, sys
ref, ela = (json.load(open(f)) for f in sys.argv[1:3])
resumed, epochs, per_epoch = (int(a) for a in sys.argv[3:])
a, b = ref["optimizers"]["ivon"], ela["optimizers"]["ivon"]
assert a["parameter_digest"] == b["parameter_digest"], (a["parameter_digest"], b["parameter_digest"])
assert [r["train_loss"] for r in a["history"]] == [r["train_loss"] for r in b["history"]]
assert len(b["history"]) == epochs and b["steps"] == epochs * per_epoch, (len(b["history"]), b["steps"])
# the last start trained only what came after the checkpoint it resumed from
assert ela["distributed"]["steps"] == (epochs - resumed) * per_epoch, (ela["distributed"]["steps"], resumed)
assert ref["distributed"]["steps"] == epochs * per_epoch
PY
  fail "elastic run: not the uninterrupted run's parameters and history"

# ---- --auto-resume refuses the checkpoints of another configuration ------------------------------
expect_fail auto-resume-other "was written by a run with another configuration (--seed = 5 there and 6 here); give this run its own --out" \
  train --optimizer ivon --epochs $epochs --train-limit 4096 --test-limit 100 --batch-size 32 \
  --hidden 32 --seed 6 --threads 1 --quiet --out "$work/elastic" --auto-resume
echo "uninterrupted run ${t_reference} s; whole test so far $(( $(date +%s) - t_start )) s (kill loop ${t_total} s)" >&2
finish
