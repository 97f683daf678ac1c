#!/usr/bin/env bash
# Outputs are written safely (the reliability audit's D5, D8, D9, D10): a symbolic link planted
# where blr writes (--json, --predict-out, results.json, plot-data/*, the gnuplot log, an image,
# the checkpoint directory, a checkpoint's temporary) is never written through; an output that
# names an input is refused before any work; a JSON or CSV write that fails (a file-size limit,
# as a full disk) keeps the previous file and leaves no temporary; a second run on a locked
# --out directory is refused at once naming the first, and kill -9 leaves no stale lock.
# Usage: output_safety.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: output_safety.sh <path-to-blr> <source-dir>}
src=${2:?usage: output_safety.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
logistic=(infer logistic --train "$data/pima_train.csv" --positive Yes)

# A victim file outside the output directory, and a check that it still holds what it held.
victim() { printf 'precious %s\n' "$1" >"$work/victim-$1.txt"; echo "$work/victim-$1.txt"; }
intact() {  # NAME FILE
  printf 'precious %s\n' "$1" | cmp -s - "$2" || fail "$1: the file behind the link was overwritten"
}
no_temporaries() {  # NAME DIR
  if find "$2" -name '*.tmp.*' | grep -q .; then
    fail "$1: a temporary was left: $(find "$2" -name '*.tmp.*')"
  fi
}

# ---- D5: links planted where `blr infer` writes --------------------------------------------------
mkdir -p "$work/shared"
v=$(victim json)
ln -s "$v" "$work/shared/r.json"
expect_fail link-json "Option '--json' names a symbolic link" "${logistic[@]}" --json "$work/shared/r.json"
intact json "$v"
v=$(victim predict)
ln -s "$v" "$work/shared/p.csv"
expect_fail link-predict-out "Option '--predict-out' names a symbolic link" "${logistic[@]}" \
  --predict "$data/pima_test.csv" --predict-out "$work/shared/p.csv"
intact predict "$v"

# ---- D9: an output that names an input -----------------------------------------------------------
cp "$data/pima_train.csv" "$work/x1.csv"
ln "$work/x1.csv" "$work/x1-hardlink.csv"
for out in "$work/x1.csv" "$work/shared/../x1.csv" "$work/x1-hardlink.csv"; do
  expect_fail "json-is-train $out" "Option '--json' names the same file as option '--train'" \
    infer logistic --train "$work/x1.csv" --positive Yes --json "$out"
done
cmp -s "$work/x1.csv" "$data/pima_train.csv" || fail "json-is-train: the training CSV was replaced"
cp "$data/pima_test.csv" "$work/x3.csv"
expect_fail predict-out-is-predict "Option '--predict-out' names the same file as option '--predict'" \
  "${logistic[@]}" --predict "$work/x3.csv" --predict-out "$work/x3.csv"
cmp -s "$work/x3.csv" "$data/pima_test.csv" || fail "predict-out-is-predict: the input was replaced"

# ---- D10: a failed write keeps the previous file ---------------------------------------------------
# A file-size limit of 1 KiB (ulimit -f, 1024-byte blocks in bash) below the JSON's ~5 KB: the
# write fails with EFBIG as it would on a full disk (SIGXFSZ ignored, as blr itself does).
"$blr" "${logistic[@]}" --json "$work/r.json" >/dev/null 2>"$work/err" || fail "d10: first run failed"
cp "$work/r.json" "$work/r-before.json"
(ulimit -f 1; trap '' XFSZ; exec "$blr" "${logistic[@]}" --json "$work/r.json") >/dev/null 2>"$work/err"
rc=$?
[ "$rc" -eq 2 ] || fail "d10-json: exit status $rc, expected 2"
grep -qF "Writing the JSON file '$work/r.json' failed (File too large)" "$work/err" ||
  { fail "d10-json: no sentence naming the file and the reason"; cat "$work/err" >&2; }
cmp -s "$work/r.json" "$work/r-before.json" || fail "d10-json: the previous JSON file was destroyed"
head -3 "$data/pima_test.csv" >"$work/few.csv"
"$blr" "${logistic[@]}" --predict "$work/few.csv" --predict-out "$work/p.csv" >/dev/null 2>&1 ||
  fail "d10-csv: first run failed"
cp "$work/p.csv" "$work/p-before.csv"
(ulimit -f 1; trap '' XFSZ
 exec "$blr" "${logistic[@]}" --predict "$data/pima_test.csv" --predict-out "$work/p.csv") \
  >/dev/null 2>"$work/err"
rc=$?
[ "$rc" -eq 2 ] || fail "d10-csv: exit status $rc, expected 2"
grep -qF "Writing the prediction file '$work/p.csv' failed (File too large)" "$work/err" ||
  { fail "d10-csv: no sentence naming the file and the reason"; cat "$work/err" >&2; }
cmp -s "$work/p.csv" "$work/p-before.csv" || fail "d10-csv: the previous CSV was destroyed"
no_temporaries d10 "$work"

# ---- the torch part: --out directories ------------------------------------------------------------
if ! "$blr" --help 2>/dev/null | grep -q '^ *train '; then
  echo "SKIP (torch part): this blr was built without LibTorch." >&2
  finish
  exit 0
fi
train=(train --data "$data/pima_train.csv" --task classification --hidden 8 --threads 1 --quiet)

# D5: one planted link per run (the first refusal ends the run).
plant() {  # NAME RELATIVE-PATH-IN-OUT
  local out="$work/run-$1"
  mkdir -p "$(dirname "$out/$2")"
  ln -s "$(victim "$1")" "$out/$2"
  echo "$out"
}
out=$(plant results results.json)
expect_fail link-results "'$out/results.json' is a symbolic link" "${train[@]}" --epochs 1 --out "$out"
intact results "$work/victim-results.txt"
out=$(plant curves plot-data/ivon-curves.dat)
expect_fail link-plot-data "is a symbolic link" "${train[@]}" --epochs 1 --out "$out"
intact curves "$work/victim-curves.txt"
if command -v gnuplot >/dev/null; then
  out=$(plant gnuplot-log plot-data/plots.log)
  expect_fail link-gnuplot-log "is a symbolic link" "${train[@]}" --epochs 1 --out "$out"
  intact gnuplot-log "$work/victim-gnuplot-log.txt"
  out=$(plant image curves.png)
  expect_fail link-image "'$out/curves.png' is a symbolic link" "${train[@]}" --epochs 1 --out "$out"
  intact image "$work/victim-image.txt"
fi
mkdir -p "$work/elsewhere" "$work/run-ckdir"
ln -s "$work/elsewhere" "$work/run-ckdir/checkpoints"
expect_fail link-checkpoint-dir "checkpoint directory '$work/run-ckdir/checkpoints' is a symbolic link" \
  "${train[@]}" --epochs 1 --checkpoint-every 1 --out "$work/run-ckdir"
[ -z "$(ls -A "$work/elsewhere")" ] || fail "link-checkpoint-dir: checkpoints written through the link"
# The checkpoint's temporary, named with blr's own process id (bash's $$ becomes blr's by exec).
mkdir -p "$work/run-tmp/checkpoints"
v=$(victim ckpt-tmp)
bash -c 'ln -s "$1" "$2/checkpoints/ivon-epoch-1.ckpt.tmp.$$"; out=$2 blr=$3; shift 3
  exec "$blr" "$@" --epochs 1 --checkpoint-every 1 --out "$out"' \
  _ "$v" "$work/run-tmp" "$blr" "${train[@]}" >/dev/null 2>"$work/err" ||
  { fail "checkpoint-temporary: exit status $?"; cat "$work/err" >&2; }
intact ckpt-tmp "$v"
[ -f "$work/run-tmp/checkpoints/ivon-epoch-1.ckpt" ] && [ ! -L "$work/run-tmp/checkpoints/ivon-epoch-1.ckpt" ] ||
  fail "checkpoint-temporary: the checkpoint is not a regular file"
no_temporaries checkpoint-temporary "$work/run-tmp"

# D9: laplace --save over its own --checkpoint, merge --out over its --base.
ckpt="$work/run-tmp/ivon.ckpt"
cp "$ckpt" "$work/before.ckpt"
expect_fail save-is-checkpoint "Option '--save' names the same file as option '--checkpoint'" \
  laplace --checkpoint "$ckpt" --save "$ckpt" --threads 1 --quiet
expect_fail merge-out-is-base "Option '--out' names the same file as option '--base'" \
  merge --base "$ckpt" --models "$ckpt" --out "$ckpt" --threads 1 --quiet
cmp -s "$ckpt" "$work/before.ckpt" || fail "d9: the checkpoint was replaced"

# D8: a second run on a locked --out is refused at once, naming the first; kill -9 frees it.
"$blr" "${train[@]}" --epochs 100000 --out "$work/both" >/dev/null 2>&1 &
first=$!
for _ in $(seq 1 300); do
  [ "$(cat "$work/both/.blr.lock" 2>/dev/null)" = "$first" ] && break
  sleep 0.1
done
[ "$(cat "$work/both/.blr.lock" 2>/dev/null)" = "$first" ] || fail "lock: the first run recorded no lock"
expect_fail lock "The output directory '$work/both' is in use by another blr run (process $first)" \
  "${train[@]}" --epochs 1 --out "$work/both"
kill -9 "$first"
wait "$first" 2>/dev/null
"$blr" "${train[@]}" --epochs 1 --out "$work/both" >/dev/null 2>"$work/err" ||
  { fail "lock: a run after kill -9 of the holder was refused"; cat "$work/err" >&2; }
finish
