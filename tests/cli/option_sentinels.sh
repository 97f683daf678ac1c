#!/usr/bin/env bash
# No option value silently means "not given" (the reliability audit's D12). A default is the
# option's absence, never an in-range sentinel: every value given explicitly is either refused in
# one sentence (exit 2) or honoured. Two parts:
#   1. the sentinels the options used to have (0, -1, NaN): --rho 0, --alpha0 0 and -1 (and with
#      EM, where it does not apply), --parameter-tolerance nan, --init-mean nan, --fixed-iterations
#      0, --obs-var nan and --state-var 0 with --fit, --slope-var with a local level, --tolerance 0,
#      --max-iterations 0 are refused; --parameter-tolerance 0 and --slope-var 0 are honoured;
#   2. the empty string: for every option that takes a value (read from --help) of infer,
#      sensitivity, multimodal and table1, and for a sample of the torch part's (whose runs each
#      load LibTorch), `--option ""` is refused naming the option (by blr's sentence, or by the
#      option's own parse check), except --hidden "" (a linear model: honoured).
# Usage: option_sentinels.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: option_sentinels.sh <path-to-blr> <source-dir>}
src=${2:?usage: option_sentinels.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
logistic=(infer logistic --train "$data/pima_train.csv" --positive Yes)
faithful_args=(gmm --data "$data/faithful.csv")
faithful=(infer "${faithful_args[@]}")
nile=(infer kalman --data "$data/nile.csv" --column volume)

# Refused with exit status 2 and the sentence.
refused() {  # NAME TEXT ARGS...
  local name=$1 text=$2
  shift 2
  "$blr" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" -ne 2 ]; then
    fail "$name: exit status $rc, expected 2 (a sentinel taken for 'not given'?)"
  elif ! grep -qF -- "$text" "$work/err"; then
    fail "$name: stderr lacks '$text':"; cat "$work/err" >&2
  fi
}
json_is() {  # NAME PYTHON-EXPRESSION-ON-d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$work/$1.json" \
    2>/dev/null || fail "$1: JSON fails $2"
}

# ---- 1. sentinels ---------------------------------------------------------------------------------
refused rho-0 "Option '--rho' must be in (0, 1]; got 0." "${logistic[@]}" --rho 0
refused rho-0-cvi "Option '--rho' must be in (0, 1]; got 0." "${logistic[@]}" --method cvi --rho 0
refused rho-0-mixture "Option '--rho' must be in (0, 1]; got 0." "${logistic[@]}" --method cvi \
  --family mixture:2 --rho 0
refused rho-gmm "Option '--rho' does not apply to blr infer gmm --method em; it is an option of glm laplace, glm cvi, glm mixture-vi, gpc cvi" \
  "${faithful[@]}" --rho 0.5
refused alpha0-0 "Option '--alpha0' must be a positive finite number; got 0." \
  "${faithful[@]}" --method vmp --alpha0 0
refused alpha0-minus-1 "Option '--alpha0' must be a positive finite number; got -1." \
  "${faithful[@]}" --method vmp --alpha0 -1
refused alpha0-em "Option '--alpha0' applies only to model 'gmm' with method vmp or svi." \
  "${faithful[@]}" --alpha0 5
refused parameter-tolerance-nan "Option '--parameter-tolerance' must be ≥ 0; got nan." \
  "${faithful[@]}" --parameter-tolerance nan
refused fixed-iterations-0 "Option '--fixed-iterations' must be in [1, 1000000000]; got 0." \
  "${faithful[@]}" --fixed-iterations 0
expect_fail tolerance-0 "--tolerance: it must be a positive finite number; got 0" \
  "${faithful[@]}" --tolerance 0
expect_fail max-iterations-0 "--max-iterations: it must be at least 1; got 0" \
  "${faithful[@]}" --max-iterations 0
refused init-mean-nan "Option '--init-mean' must be finite; got nan." \
  "${nile[@]}" --obs-var 15000 --state-var 1400 --init-mean nan
refused obs-var-nan-fit "Option '--obs-var' must be a positive finite number; got nan." \
  "${nile[@]}" --fit --obs-var nan
refused state-var-0-fit "Option '--state-var' is where --fit starts, on log variances, and must be positive; got 0." \
  "${nile[@]}" --fit --state-var 0
refused slope-var-level "Option '--slope-var' applies only to --model local-linear-trend." \
  "${nile[@]}" --obs-var 15000 --state-var 1400 --slope-var 0
refused init-var-model-file "do not apply with --model-file" \
  "${nile[@]}" --model-file /dev/null --init-var 1e7

# Honoured: an explicit value that equals a documented meaning is used, not replaced.
run_infer parameter-tolerance-0 "${faithful_args[@]}" --parameter-tolerance 0
json_is parameter-tolerance-0 'd["stopping"]["parameter_tolerance"] == 0'
run_infer slope-var-0 kalman --data "$data/nile.csv" --column volume --model local-linear-trend \
  --obs-var 15000 --state-var 1500 --slope-var 0
json_is slope-var-0 'd["slope_var"] == 0'

# ---- 2. the empty string, for every option that takes a value ----------------------------------------
# The options of `blr ARGS --help` that take a value (a type name follows the flag).
value_options() {
  "$blr" "$@" --help 2>/dev/null | grep -oE '^ +(-[A-Za-z], )?--[a-z0-9-]+ [A-Z<\[]' |
    grep -oE -- '--[a-z0-9-]+'
}
# `blr COMMAND... [--option value]... --option ""` for every value option of COMMAND: refused, by
# blr's sentence (exit 2) or by the option's own parse check (CLI11's exit 105, naming the
# option), never run as if the option were not given. The pairs after "--" are required options,
# given unless the one swept.
sweep() {  # COMMAND... -- [OPTION VALUE]...
  local command=() required=() option count=0 i
  while [ "$1" != "--" ]; do command+=("$1"); shift; done
  shift
  required=("$@")
  for option in $(value_options "${command[@]}"); do
    count=$((count + 1))
    [ "$option" = --hidden ] && continue  # "" = no hidden layer: a linear model (honoured below)
    local args=("${command[@]}")
    for ((i = 0; i < ${#required[@]}; i += 2)); do
      [ "${required[i]}" = "$option" ] || args+=("${required[i]}" "${required[i + 1]}")
    done
    "$blr" "${args[@]}" "$option" "" >"$work/out" 2>"$work/err"
    local rc=$?
    if [ "$rc" -ne 2 ] && [ "$rc" -ne 105 ]; then
      fail "${command[*]} $option \"\": exit status $rc, expected 2 or 105"; cat "$work/err" >&2
    elif ! grep -qF -- "$option" "$work/err"; then
      fail "${command[*]} $option \"\": the sentence does not name the option:"; cat "$work/err" >&2
    fi
  done
  [ "$count" -ge 3 ] || fail "${command[*]}: only $count options found in --help"
}
sweep infer logistic -- --train "$data/pima_train.csv" --positive Yes
sweep sensitivity logistic -- --train "$data/pima_train.csv" --label type --positive Yes
sweep multimodal --
sweep table1 --
# The torch part checks with the same loop (preflight.cpp), and each of its runs loads LibTorch
# (about 2 s here): there, the options whose empty value used to be taken for "not given" (the
# audit's list and their kind), and one generated optimizer flag.
if "$blr" --help 2>/dev/null | grep -q '^ *train '; then
  for option in --out --json --model-file --resume --label --data --init --epochs --test-samples; do
    refused "train $option" "Option '$option' is empty; give it a value" train "$option" ""
  done
  for option in --checkpoint --save; do
    refused "laplace $option" "Option '$option' is empty; give it a value" laplace "$option" ""
  done
  expect_fail "train --ivon-lr" "takes a number; got ''" train --ivon-lr ""  # its own parse check
  refused "merge --base" "Option '--base' is empty; give it a value" merge --base ""
  refused "eval --checkpoint" "Option '--checkpoint' is empty; give it a value" eval --checkpoint ""
  "$blr" train --data "$data/pima_train.csv" --task classification --hidden "" --epochs 1 \
    --threads 1 --quiet --json "$work/linear.json" >/dev/null 2>"$work/err" ||
    { fail "train --hidden \"\": not honoured"; cat "$work/err" >&2; }
fi
finish
