#!/usr/bin/env bash
# Shell commands through gnuplot (the audit's D1): a line break in a path that reaches a plot
# script ended the gnuplot string, and a next line `!touch PWNED` ran in a shell. Paths with
# control characters are refused in one sentence (exit 2) before anything runs; names with quotes,
# backticks, `$(...)`, `@` and backslashes are accepted, drawn, and run nothing — neither when the
# run draws nor when its checkpoint, which stores the data name, is evaluated with --out.
# Usage: plot_injection.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: plot_injection.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch

# A small 3-class CSV (no data set or python3-torch needed).
csv() {
  python3 - "$1" <<'PY'
import random, sys
rng = random.Random(3)
with open(sys.argv[1], "w") as f:
    f.write("x1,x2,y\n")
    for _ in range(300):
        y = rng.randrange(3)
        f.write(f"{rng.gauss(2 * (y == 0), 1)},{rng.gauss(2 * (y == 1), 1)},{y}\n")
PY
}
run=(--task classification --hidden 8 --epochs 1 --optimizer adamw --threads 1 --quiet)
mkdir -p "$work/cwd"
cd "$work/cwd" || exit 1

no_pwned() {
  local found
  found=$(find "$work" -name 'PWNED*' | head -3)
  [ -z "$found" ] || fail "$1: a command ran through gnuplot and created $found"
  find "$work" -name 'PWNED*' -delete
}

# Refused: exit 2, one sentence naming the option, nothing run.
refused() {
  local name=$1 option=$2
  shift 2
  "$blr" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit status $rc, expected 2"
  [ "$(wc -l <"$work/err")" -eq 1 ] || { fail "$name: stderr is not one line:"; cat "$work/err" >&2; }
  grep -qF -- "'$option'" "$work/err" && grep -qiF "control character" "$work/err" ||
    { fail "$name: the sentence does not name $option and the control character:"; cat "$work/err" >&2; }
  no_pwned "$name"
}

nl=$'\n' tab=$'\t'
csv "$work/cls.csv"
bad_data="$work/x${nl}!touch PWNED_BY_DATA_NAME${nl}.csv"
cp "$work/cls.csv" "$bad_data"
refused data-name --data train --data "$bad_data" "${run[@]}" --out "$work/run1"
refused out-path --out train --data "$work/cls.csv" "${run[@]}" \
  --out "$work/o${nl}!touch PWNED_BY_OUT_PATH${nl}"
refused tab-in-json --json train --data "$work/cls.csv" "${run[@]}" --json "$work/r${tab}.json"

# Accepted: quotes and shell syntax without control characters are only text in the plots.
quoted="$work/it's \"q\" \`touch PWNED_BT\` \$(touch PWNED_SUB) @x \\ !touch PWNED_BANG.csv"
cp "$work/cls.csv" "$quoted"
out="$work/run 'o' \"\$(touch PWNED_OUT)\""
"$blr" train --data "$quoted" "${run[@]}" --out "$out" >"$work/out" 2>"$work/err" ||
  { fail "quoted names: exit status $?"; cat "$work/err" >&2; }
no_pwned "train with quoted names"
if command -v gnuplot >/dev/null; then
  [ -s "$out/curves.png" ] || { fail "train with quoted names: no curves.png"; cat "$work/err" >&2; }
fi
"$blr" eval --checkpoint "$out/adamw.ckpt" --threads 1 --quiet --out "$work/ev" \
  >"$work/out" 2>"$work/err" || { fail "eval of the quoted run: exit status $?"; cat "$work/err" >&2; }
no_pwned "eval of a checkpoint with quoted names"
if command -v gnuplot >/dev/null; then
  [ -s "$work/ev/reliability.png" ] || { fail "eval: no reliability.png"; cat "$work/err" >&2; }
fi
refused eval-out --out eval --checkpoint "$out/adamw.ckpt" --out "$work/e${nl}!touch PWNED_EVAL${nl}"

finish
