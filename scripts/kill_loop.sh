#!/usr/bin/env bash
# The kill loop of docs/reliability.md: `kill -9` at random moments of a training run that writes
# a checkpoint every epoch, each kill followed by `blr train --resume DIR` (the newest valid
# checkpoint of the directory), until the run completes; episodes repeat until KILLS kills have
# landed. Every completed episode must end with parameters bitwise those of an uninterrupted run
# (the run report's parameter_digest), and no temporary checkpoint file may outlive the episode.
#
# Usage: scripts/kill_loop.sh <path-to-blr> [KILLS=100] [SEED=1]
# Prints one line per episode and a summary; exits 1 on any mismatch.
set -uo pipefail
blr=${1:?usage: kill_loop.sh <path-to-blr> [kills] [seed]}
kills_wanted=${2:-100}
RANDOM=${3:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A small run: 30 epochs of 16 steps, a checkpoint after each (most of the run's time is training
# and checkpoint writes, not start-up); --threads 1 makes it deterministic.
run=(--optimizer ivon --epochs 30 --train-limit 1024 --test-limit 200 --batch-size 64 --hidden 32
     --test-samples 2 --seed 7)
common=(--threads 1 --quiet --checkpoint-every 1)

digest() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["optimizers"]["ivon"]["parameter_digest"])' "$1"
}

start=$(date +%s.%N)
"$blr" train "${run[@]}" "${common[@]}" --out "$work/reference" --json "$work/reference.json" \
  >/dev/null 2>"$work/err" || { echo "the uninterrupted run failed:" >&2; cat "$work/err" >&2; exit 1; }
reference=$(digest "$work/reference.json")
duration=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")
echo "uninterrupted run: ${duration}s, parameter digest $reference"

kills=0 episodes=0 mismatches=0 resumes=0 leftovers=0 torn_writes=0
while [ "$kills" -lt "$kills_wanted" ]; do
  episodes=$((episodes + 1))
  out="$work/episode-$episodes"
  episode_kills=0
  while :; do
    if compgen -G "$out/checkpoints/*.ckpt" >/dev/null; then
      cmd=(train --resume "$out/checkpoints" "${common[@]}" --out "$out" --json "$out/result.json")
      resumes=$((resumes + 1))
    else
      cmd=(train "${run[@]}" "${common[@]}" --out "$out" --json "$out/result.json")
    fi
    "$blr" "${cmd[@]}" >/dev/null 2>"$work/err" &
    pid=$!
    if [ "$kills" -lt "$kills_wanted" ]; then
      # A moment in [0, 0.9 duration): start-up, steps, evaluation or a checkpoint write.
      delay=$(python3 -c "import sys; print(0.9 * float(sys.argv[1]) * int(sys.argv[2]) / 32768)" "$duration" "$RANDOM")
      sleep "$delay"
      if kill -9 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null
        # A kill inside a checkpoint write leaves its temporary file (removed by the next run).
        if [ -d "$out" ] && [ -n "$(find "$out" -name '*.tmp.*' -print -quit)" ]; then
          torn_writes=$((torn_writes + 1))
        fi
        kills=$((kills + 1))
        episode_kills=$((episode_kills + 1))
        continue
      fi
    fi
    wait "$pid"
    status=$?
    if [ "$status" -ne 0 ]; then
      echo "episode $episodes: blr exited with status $status:" >&2; cat "$work/err" >&2
      mismatches=$((mismatches + 1))
    fi
    break
  done
  got=$(digest "$out/result.json" 2>/dev/null || echo missing)
  stale=$(find "$out" -name '*.tmp.*' | wc -l)
  leftovers=$((leftovers + stale))
  verdict=bitwise-equal
  if [ "$got" != "$reference" ]; then verdict="MISMATCH ($got)"; mismatches=$((mismatches + 1)); fi
  echo "episode $episodes: $episode_kills kills, digest $got: $verdict; temporary files left: $stale"
  rm -rf "$out"
done
echo "summary: $kills kills in $episodes episodes ($torn_writes inside a checkpoint write), $resumes resumes, $mismatches mismatches, $leftovers temporary files left"
[ "$mismatches" -eq 0 ] || exit 1
