#!/usr/bin/env bash
# scripts/vision_results.sh (issue 29, item 5) passes each run the flags its protocol and the
# caller ask for, and blr refuses a flag given twice: under PROTOCOL=uncertainty-baselines AdamW
# gets the protocol's weight decay 0 unless FLAGS gives its own (the validation search of stop
# 43), other optimizers never get AdamW's flags, and TAG names the output. A stand-in for blr
# records each command line instead of training.
# Usage: vision_results_flags.sh <path-to-blr> <source-dir>
set -uo pipefail
src=${2:?usage: vision_results_flags.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

# The stand-in: appends its arguments to calls.txt and writes an empty JSON where --json points.
cat >"$work/fake-blr" <<'SH'
#!/usr/bin/env bash
echo "$*" >>"$(dirname "$0")/calls.txt"
while [ $# -gt 0 ]; do
  [ "$1" = --json ] && { echo '{}' >"$2"; shift; }
  shift
done
SH
chmod +x "$work/fake-blr"
run() {  # OUT-subfolder env... : runs the script with the given environment, returns the call
  local out=$1
  shift
  : >"$work/calls.txt"
  env "$@" bash "$src/scripts/vision_results.sh" "$work/fake-blr" "$work/$out" lenet compare 0 \
    >/dev/null 2>"$work/err.txt" || { cat "$work/err.txt" >&2; fail "vision_results.sh $* failed"; }
  cat "$work/calls.txt"
}
count() { grep -o -- "$1" <<<"$2" | wc -l; }

call=$(run a PROTOCOL=uncertainty-baselines OPTIMIZERS=adamw)
[ "$(count '--adamw-weight-decay 0 ' "$call ")" = 1 ] || fail "AdamW did not get the protocol's weight decay 0: $call"
[ "$(count '--batch-size 256' "$call")" = 1 ] || fail "no batch 256 under the protocol: $call"

call=$(run b PROTOCOL=uncertainty-baselines OPTIMIZERS=adamw TAG=adamw-wd0.1 \
  FLAGS="--adamw-weight-decay 0.1")
[ "$(count '--adamw-weight-decay' "$call")" = 1 ] || fail "the weight decay is given twice: $call"
[ "$(count '--adamw-weight-decay 0.1' "$call")" = 1 ] || fail "FLAGS' weight decay is not used: $call"
[ -s "$work/b/lenet-compare-adamw-wd0.1-seed0.json" ] || fail "TAG does not name the output"

call=$(run c PROTOCOL=uncertainty-baselines SCHEDULE=cosine OPTIMIZERS=ivon TAG=cosine-ess25000 \
  FLAGS="--ivon-ess 25000")
[ "$(count '--adamw' "$call")" = 0 ] || fail "IVON's run got AdamW's flags: $call"
[ "$(count '--ivon-ess 25000' "$call")" = 1 ] || fail "FLAGS is not passed: $call"
[ "$(count '--schedule cosine' "$call")" = 1 ] || fail "SCHEDULE is not passed: $call"
[ -s "$work/c/lenet-compare-cosine-ess25000-seed0.json" ] || fail "TAG does not name the output"

# An output that exists is kept: the same run again calls nothing.
call=$(run c PROTOCOL=uncertainty-baselines SCHEDULE=cosine OPTIMIZERS=ivon TAG=cosine-ess25000 \
  FLAGS="--ivon-ess 25000")
[ -z "$call" ] || fail "an existing output was run again: $call"
finish
