#!/usr/bin/env bash
# `blr sensitivity`: a good run per model on the shipped data (JSON arrays one entry per training
# row and finite, the --top listing agrees with the JSON scores) and bad input (unknown model,
# missing --label, bad --top, bad --method, a NaN cell), each a non-zero exit with a message.
# Usage: sensitivity.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: sensitivity.sh <path-to-blr> <source-dir>}
src=${2:?usage: sensitivity.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(sensitivity)

rows=$(($(wc -l <"$data/pima_train.csv") - 1))

# good NAME K ARGS...: runs `blr sensitivity ARGS --top K --json $work/NAME.json`, which must
# succeed; then checks the JSON and that stdout lists the K top rows of the JSON's scores.
good() {
  local name=$1 k=$2
  shift 2
  if ! "$blr" sensitivity "$@" --top "$k" --json "$work/$name.json" >"$work/$name.out" \
    2>"$work/$name.err"; then
    fail "$name: exit status non-zero"
    cat "$work/$name.err" >&2
    return
  fi
  python3 - "$work/$name.json" "$work/$name.out" "$rows" "$k" "$name" <<'EOF' || fail "$name: JSON or listing check"
import json, math, re, sys
path, out, rows, k, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
j = json.load(open(path))
ok = True
def bad(msg):
    global ok
    ok = False
    print(f"{name}: {msg}", file=sys.stderr)
for key in ["error", "variance", "deviation", "deviation_first_order", "score"]:
    a = j.get(key)
    if not isinstance(a, list) or len(a) != rows:
        bad(f"'{key}' is not an array of {rows} entries")
    elif not all(isinstance(x, (int, float)) and math.isfinite(x) for x in a):
        bad(f"'{key}' holds a non-finite entry")
for i, (v, e, d1, d) in enumerate(zip(j["variance"], j["error"], j["deviation_first_order"], j["deviation"])):
    if v < 0 or abs(d1 - v * e) > 1e-12 * max(1.0, abs(d1)):
        bad(f"row {i + 1}: variance {v}, first-order deviation {d1} is not v·e = {v * e}")
        break
    if d * d1 < 0 or abs(d) < abs(d1):  # v e / (1 − h v) with 0 ≤ h v < 1
        bad(f"row {i + 1}: corrected deviation {d} is not the first-order {d1} enlarged")
        break
loo = j.get("loo", {})
if not math.isfinite(loo.get("nll", float("nan"))):
    bad("loo.nll missing or not finite")
if j["model"] == "logistic" and not 0 <= loo.get("accuracy", -1) <= 1:
    bad("loo.accuracy missing or outside [0, 1]")
# The listing: K rows, ranked by the JSON's scores.
listed = [int(m.group(1)) for m in re.finditer(r"^\s+\d+\s+(\d+)\s", open(out).read(), re.M)]
expect = sorted(range(rows), key=lambda i: (-j["score"][i], i))[:k]
if listed != [i + 1 for i in expect]:
    bad(f"stdout lists rows {listed}, the JSON's top {k} are {[i + 1 for i in expect]}")
sys.exit(0 if ok else 1)
EOF
}

good logistic 5 logistic --train "$data/pima_train.csv" --label type --positive Yes --standardize
grep -q "leave-one-out estimate (no refitting): NLL" "$work/logistic.out" ||
  fail "logistic: stdout lacks the leave-one-out line"
good logistic-cvi 3 logistic --train "$data/pima_train.csv" --label type --positive Yes \
  --standardize --method cvi
good linreg 4 linreg --train "$data/pima_train.csv" --label glu --features bp,skin,bmi,ped,age \
  --standardize --noise-precision 0.001
good poisson 2 poisson --train "$data/pima_train.csv" --label npreg \
  --features glu,bp,skin,bmi,ped,age --standardize

# --categorical and --missing, read by blr infer's code: the same design and the same dropped rows.
python3 - "$data/pima_train.csv" "$work/holes.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["glu", "bp", "group", "bmi"])
    for i, r in enumerate(rows):
        w.writerow([r["glu"], "" if i in (4, 9) else r["bp"], "abc"[i % 3], r["bmi"]])
PY
rows=198 good holes 3 linreg --train "$work/holes.csv" --label bmi --categorical group \
  --missing drop --standardize
python3 - "$work/holes.json" <<'PY' || fail "holes: categorical design or dropped rows wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["features"] == ["(intercept)", "glu", "bp", "group=b", "group=c"], d["features"]
assert d["dropped_rows"] == {"train": 2} and d["rows"] == 198, (d["dropped_rows"], d["rows"])
# rows after the dropped ones (file lines 6 and 11) are numbered among those kept
assert all(t["line"] == t["row"] + 1 + (t["row"] >= 5) + (t["row"] >= 9) for t in d["top"]), d["top"]
PY
"$blr" infer linreg --train "$work/holes.csv" --label bmi --categorical group --missing drop \
  --standardize --json "$work/holes-infer.json" >/dev/null 2>&1 || fail "holes: blr infer failed"
python3 - "$work/holes.json" "$work/holes-infer.json" <<'PY' || fail "holes: sensitivity's posterior is not infer's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["mean"] == b["mean"] and a["sd"] == b["sd"], (a["mean"], b["mean"])
assert a["assumptions"] == b["assumptions"] and a["noise_estimate"] == "normal-gamma"
PY
expect_fail holes-error "line 6, column 'bp': the value is missing; give --missing drop" \
  linreg --train "$work/holes.csv" --label bmi --categorical group
expect_fail holes-bad-policy "Option '--missing' must be error or drop" \
  linreg --train "$work/holes.csv" --label bmi --categorical group --missing impute
expect_fail holes-text "a text column is a feature only when declared categorical" \
  linreg --train "$work/holes.csv" --label bmi --missing drop

printf 'x,y,label\n1,2,Yes\n3,NaN,No\n5,6,No\n' >"$work/nan.csv"
printf 'x,y,label\n1,2,Yes\n3,4,No\n5,6,No\n7,1,Yes\n' >"$work/tiny.csv"
pima=(--train "$data/pima_train.csv" --label type --positive Yes)
expect_fail unknown-model "model" probit "${pima[@]}"
expect_fail missing-label "--label" logistic --train "$data/pima_train.csv" --positive Yes
expect_fail zero-top "Option '--top' must be a positive integer" logistic "${pima[@]}" --top 0
expect_fail word-top "--top" logistic "${pima[@]}" --top many
expect_fail unknown-method "--method" logistic "${pima[@]}" --method em
expect_fail exact-logistic "Method 'exact' does not apply to model 'logistic'" \
  logistic "${pima[@]}" --method exact
expect_fail nan-cell "line 3, column 'y': the value 'NaN' is not a finite number" \
  logistic --train "$work/nan.csv" --label label --positive Yes
expect_fail bad-prior "prior-precision" logistic --train "$work/tiny.csv" --label label \
  --positive Yes --prior-precision 0
finish
