#!/usr/bin/env bash
# A lost standard output is a failure (issue 34, D11): with stdout on a full device (/dev/full) or
# closed (>&-), a command whose table is its result exits 2 with one sentence naming standard
# output; before, both exited 0 with nothing written. --json - on a full device is refused as
# well, and a run whose stdout works still exits 0.
# Usage: stdout_errors.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: stdout_errors.sh <path-to-blr> <source-dir>}
src=${2:?usage: stdout_errors.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

run=(infer logistic --train "$data/pima_train.csv" --label type --positive Yes)

# check_lost NAME TEXT RC: the run NAME exited with RC = 2 and its stderr is one line holding TEXT.
check_lost() {
  local name=$1 text=$2 rc=$3
  [ "$rc" -eq 2 ] || fail "$name: exit status $rc, expected 2"
  grep -qF -- "$text" "$work/$name.err" || { fail "$name: stderr lacks '$text':"; cat "$work/$name.err" >&2; }
  [ "$(wc -l <"$work/$name.err")" -eq 1 ] || { fail "$name: stderr is not one line:"; cat "$work/$name.err" >&2; }
}

if [ -w /dev/full ]; then
  "$blr" "${run[@]}" >/dev/full 2>"$work/full.err"
  check_lost full "blr: error: Cannot write to standard output: No space left on device." $?
  "$blr" "${run[@]}" --json - >/dev/full 2>"$work/full-json.err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "full-json: exit status $rc, expected 2"
else
  echo "SKIP: /dev/full is not writable here; the full-device checks did not run." >&2
fi

"$blr" "${run[@]}" >&- 2>"$work/closed.err"
check_lost closed "blr: error: Cannot write to standard output: Bad file descriptor." $?

# Closed stdout with --json FILE: the JSON file must not take stdout's descriptor and receive the
# table (the first file opened gets the lowest free descriptor).
"$blr" "${run[@]}" --json "$work/closed.json" >&- 2>"$work/closed-json.err"
check_lost closed-json "Cannot write to standard output" $?
# (The table's first line names the command; the JSON, whose texts may say "posterior", does not.)
if [ -e "$work/closed.json" ] && grep -q "^blr infer logistic" "$work/closed.json"; then
  fail "closed-json: the table went into the JSON file"
fi

# A working stdout is still success, and --help and --version too.
"$blr" "${run[@]}" >"$work/ok.out" 2>"$work/ok.err" || fail "ok: exit status $?"
grep -q "posterior" "$work/ok.out" || fail "ok: no table on stdout"
"$blr" --version >"$work/version.out" || fail "version: exit status $?"

finish
echo "all standard-output checks passed"
