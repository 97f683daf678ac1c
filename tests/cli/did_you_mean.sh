#!/usr/bin/env bash
# Misspelled subcommands and flags: a non-zero exit and one sentence on stderr that names the
# nearest known spelling (blr::closest_match), and no suggestion for words close to nothing.
# Usage: did_you_mean.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: did_you_mean.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

# suggest NAME EXPECTED ARGS...: non-zero exit; stderr is one line "... did you mean 'EXPECTED'?".
suggest() {
  local name=$1 expected=$2
  shift 2
  "$blr" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    fail "$name: exit status 0, expected an error"
  elif ! grep -qF -- "did you mean '$expected'?" "$work/err"; then
    fail "$name: stderr does not suggest '$expected':"; cat "$work/err" >&2
  elif [ "$(wc -l <"$work/err")" -ne 1 ]; then
    fail "$name: expected one line on stderr:"; cat "$work/err" >&2
  fi
}
# no_suggestion NAME ARGS...: non-zero exit and no "did you mean".
no_suggestion() {
  local name=$1
  shift
  "$blr" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -ne 0 ] || fail "$name: exit status 0, expected an error"
  if grep -q "did you mean" "$work/err"; then fail "$name: unexpected suggestion:"; cat "$work/err" >&2; fi
  [ -s "$work/err" ] || fail "$name: no error message"
}

suggest subcommand table1 tabel1
suggest subcommand-infer infer infre linreg
suggest infer-flag --train infer linreg --trian x.csv
suggest infer-flag-equals --prior-precision infer linreg --prior-precison=2
suggest table1-flag --row table1 --rows x
grep -q "unknown command 'tabel1'" <("$blr" tabel1 2>&1) || fail "subcommand: the word is not named"
no_suggestion far-subcommand zzzzzzzz
no_suggestion far-flag table1 --zzzzzzzzzz

if "$blr" --help 2>/dev/null | grep -q '^ *train '; then
  suggest train-subcommand train trian --epochs 1
  suggest train-flag --epochs train --epoch 3
  grep -q "unknown option '--epoch' for blr train" <("$blr" train --epoch 3 2>&1) ||
    fail "train-flag: the flag or the command is not named"
  suggest optimizer-flag --ivon-hess-init train --optimizer ivon --ivon-hess-int 0.5
  suggest compare-required --optimizers compare --optimizer sgd
  suggest bench-subcommand step bench stpe
  suggest eval-flag --checkpoint eval --checkpiont x.ckpt
fi

finish
echo "all did-you-mean checks passed"
