#!/usr/bin/env bash
# The empty string for every value option of the LibTorch commands (the reliability audit's D12,
# issue 34's property test): `blr COMMAND --option ""` is refused naming the option — by blr's
# sentence (exit 2) or by the option's own parse check (CLI11's exit 105) — never run as if the
# option were not given; --hidden "" alone is honoured (a linear model; option_sentinels.sh runs
# it). Every option of `train` is swept, and of compare, ensemble, continual, eval, predict,
# laplace, merge, launch and sensitivity --checkpoint those train lacks (the shared ones are
# declared once, apps/blr/torch/cli.hpp, and checked by one loop, apps/blr/preflight.cpp). Each
# run loads LibTorch (about 1 s), so the runs go two at a time.
# Usage: option_sentinels_torch.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: option_sentinels_torch.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch

value_options() {  # the options of `blr ARGS --help` that take a value (a type name follows the flag)
  "$blr" "$@" --help 2>/dev/null | grep -oE '^ +(-[A-Za-z], )?--[a-z0-9-]+ [A-Z<\[]' |
    grep -oE -- '--[a-z0-9-]+' | sort -u
}
value_options train >"$work/train.opts"
[ "$(wc -l <"$work/train.opts")" -ge 100 ] || fail "train --help lists only $(wc -l <"$work/train.opts") value options"
: >"$work/cases"
while read -r o; do echo "train $o" >>"$work/cases"; done <"$work/train.opts"
for c in compare ensemble continual eval predict laplace merge launch; do
  value_options "$c" >"$work/$c.opts"
  [ -s "$work/$c.opts" ] || fail "$c --help lists no value options"
  comm -23 "$work/$c.opts" "$work/train.opts" | while read -r o; do echo "$c $o" >>"$work/cases"; done
done
value_options sensitivity --checkpoint x.ckpt >"$work/net.opts"
comm -23 "$work/net.opts" "$work/train.opts" | while read -r o; do echo "sensitivity-net $o" >>"$work/cases"; done
grep -v -- ' --hidden$' "$work/cases" >"$work/cases.run"

# One case: "COMMAND OPTION" → a line "ok" or "FAIL: ..." in $work/results/<n>.
one() {
  local n=$1 command=$2 option=$3 args rc
  args=("$command")
  # Required options (CLI11 refuses their absence first) are given, unless swept.
  if [ "$command" = sensitivity-net ]; then
    args=(sensitivity --checkpoint "$work/none.ckpt")
    [ "$option" = --checkpoint ] && args=(sensitivity)
  elif [ "$command" = compare ] && [ "$option" != --optimizers ]; then
    args=(compare --optimizers adamw)
  fi
  "$blr" "${args[@]}" "$option" "" >"$work/out.$n" 2>"$work/err.$n"
  rc=$?
  if [ "$rc" -ne 2 ] && [ "$rc" -ne 105 ]; then
    echo "FAIL: $command $option \"\": exit status $rc, expected 2 or 105: $(head -c 300 "$work/err.$n" | tr '\n' ' ')"
  elif ! grep -qF -- "$option" "$work/err.$n"; then
    echo "FAIL: $command $option \"\": the sentence does not name the option: $(head -c 300 "$work/err.$n" | tr '\n' ' ')"
  else
    echo ok
  fi
}
export -f one
export blr work
mkdir -p "$work/results"
nl -ba "$work/cases.run" | xargs -P 2 -L 1 bash -c 'one "$0" "$1" "$2" >"$work/results/$0"'
total=$(wc -l <"$work/cases.run")
done_count=$(find "$work/results" -type f | wc -l)
[ "$done_count" -eq "$total" ] || fail "only $done_count of $total cases ran"
while read -r line; do
  [ "$line" = ok ] || fail "${line#FAIL: }"
done < <(cat "$work"/results/*)
echo "option_sentinels_torch: $total options swept" >&2
finish
