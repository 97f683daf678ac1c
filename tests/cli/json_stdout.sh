#!/usr/bin/env bash
# `--json -`: stdout holds the JSON document and nothing else (the human table goes to stderr),
# for the core commands infer, table1 and multimodal; tests/cli/torch_json_stdout.sh does train,
# compare and eval. Usage: json_stdout.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: json_stdout.sh <path-to-blr> <source-dir>}
src=${2:?usage: json_stdout.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

# json_only NAME TABLE-PATTERN ARGS...: `blr ARGS` (which include --json -) exits 0, its stdout
# parses as one JSON document, and the human output (TABLE-PATTERN) is on stderr instead.
json_only() {
  local name=$1 pattern=$2
  shift 2
  if ! "$blr" "$@" >"$work/$name.json" 2>"$work/$name.err"; then
    fail "$name: exit status $?"; cat "$work/$name.err" >&2; return
  fi
  python3 -c 'import json,sys; json.load(sys.stdin)' <"$work/$name.json" ||
    { fail "$name: stdout is not one JSON document:"; head -5 "$work/$name.json" >&2; }
  grep -q -- "$pattern" "$work/$name.err" || fail "$name: the table ('$pattern') is not on stderr"
  [ -e "$work/-" ] && fail "$name: wrote a file named '-'"
}

cd "$work" || exit 1
json_only infer "log evidence" infer linreg --train "$data/synth_train.csv" --json -
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["model"] == "linreg", d' \
  <"$work/infer.json" || fail "infer: JSON lacks model linreg"
json_only table1 "1 rows, 1 passed" table1 --row ivon --json -
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["pass"] is True, d' \
  <"$work/table1.json" || fail "table1: JSON row is not a pass"
json_only multimodal "Mixture BLR" multimodal --steps 50 --json -
# a file path still gets the table on stdout
"$blr" table1 --row ivon --json "$work/t.json" >"$work/t.out" 2>/dev/null
grep -q "1 rows, 1 passed" "$work/t.out" || fail "table1 --json FILE: the table left stdout"
python3 -c 'import json,sys; json.load(sys.stdin)' <"$work/t.json" || fail "table1 --json FILE: bad JSON"

finish
echo "all --json - checks passed"
