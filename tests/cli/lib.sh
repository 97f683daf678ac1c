# Shared by the CLI tests (sourced, after `set -uo pipefail` and `blr=...`): a scratch directory
# $work removed on exit, a failure counter, and the checks every script uses.
#   fail MESSAGE                      count a failure and say why
#   expect_fail NAME TEXT ARGS...     `blr ${cli_prefix[@]} ARGS` exits non-zero and stderr
#                                     contains TEXT (fixed string, any case)
#   run_infer NAME ARGS...            `blr infer ARGS --json $work/NAME.json` must succeed (stdout
#                                     and stderr kept in $work/NAME.out and NAME.err)
#   require_torch                     exit 0 with SKIP when blr was built without LibTorch
#   finish                            exit 1 with the count if anything failed
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
cli_prefix=()

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

expect_fail() {
  local name=$1 text=$2
  shift 2
  "$blr" "${cli_prefix[@]}" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    fail "$name: exit status 0, expected an error"
  elif ! grep -qiF -- "$text" "$work/err"; then
    fail "$name: stderr lacks '$text':"; cat "$work/err" >&2
  fi
}

run_infer() {
  local name=$1
  shift
  if ! "$blr" infer "$@" --json "$work/$name.json" >"$work/$name.out" 2>"$work/$name.err"; then
    fail "$name: exit status $?"
    cat "$work/$name.err" >&2
  fi
}

require_torch() {
  if ! "$blr" --help 2>/dev/null | grep -q '^ *train '; then
    echo "SKIP: this blr was built without LibTorch (no train command)." >&2
    exit 0
  fi
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
}
