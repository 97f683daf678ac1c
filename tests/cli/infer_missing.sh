#!/usr/bin/env bash
# No silent wrong answers in `blr infer` (issue 14, item 5): missing cells (empty or NA) are an
# error naming the line and column unless --missing drop, which reports how many rows it dropped
# and gives exactly the fit of the file without them; a text feature is an error unless declared
# --categorical, whose one-hot coding gives exactly the fit of hand-made indicator columns; numbers
# are decimal only; a result that is not finite is an error naming the entry, never a table.
# Usage: infer_missing.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_missing.sh <path-to-blr> <source-dir>}
src=${2:?usage: infer_missing.sh <path-to-blr> <source-dir>}
data="$src/data"
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cli_prefix=(infer)

# same A B KEYS...: the JSON arrays under KEYS are identical in A and B (same design, same
# arithmetic: the tolerance is 0).
same() {
  local a=$1 b=$2
  shift 2
  python3 - "$work/$a.json" "$work/$b.json" "$@" <<'PY' || fail "$a vs $b differ"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for key in sys.argv[3:]:
    assert a[key] == b[key], (key, a[key], b[key])
PY
}

# ---- missing cells --------------------------------------------------------------------------------
# Pima training rows with two holes (an empty cell on line 3, NA on line 6) and the same file
# without those rows.
awk -F, 'NR == 3 { $2 = "" } NR == 6 { $5 = "NA" } { print }' OFS=, "$data/pima_train.csv" >"$work/holes.csv"
awk 'NR != 3 && NR != 6' "$data/pima_train.csv" >"$work/complete.csv"
lin=(linreg --standardize --label bmi --features skin,glu,bp --noise-precision 0.05)
expect_fail missing-empty "holes.csv', line 3, column 'glu': the value is missing; give --missing drop" \
  "${lin[@]}" --train "$work/holes.csv"
expect_fail missing-na "line 6, column 'bmi': the value is missing" \
  linreg --label bmi --features skin,bp --train "$work/holes.csv"
run_infer dropped "${lin[@]}" --train "$work/holes.csv" --missing drop
run_infer complete "${lin[@]}" --train "$work/complete.csv"
same dropped complete mean sd lower upper covariance log_evidence
grep -q -- "--missing drop: 2 of 200 rows of '$work/holes.csv' dropped" "$work/dropped.out" ||
  fail "dropped: the count of dropped rows is not reported"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["dropped_rows"] == {"train": 2}' \
  "$work/dropped.json" || fail "dropped: JSON dropped_rows is not {train: 2}"
# A hole in a column that is not used is no reason to drop a row.
run_infer unused linreg --standardize --label age --features skin,bp --train "$work/holes.csv" --missing drop
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["dropped_rows"] == {"train": 0}' \
  "$work/unused.json" || fail "unused: a row was dropped for a column that is not used"
# Test files follow the same rule.
expect_fail missing-test "line 3, column 'glu': the value is missing" \
  "${lin[@]}" --train "$data/pima_train.csv" --test "$work/holes.csv"
run_infer dropped-test "${lin[@]}" --train "$data/pima_train.csv" --test "$work/holes.csv" --missing drop
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["dropped_rows"] == {"train": 0, "test": 2} and d["test"]["n"] == 198, d["dropped_rows"]' \
  "$work/dropped-test.json" || fail "dropped-test: wrong counts"
expect_fail missing-bad "Option '--missing' must be error or drop" "${lin[@]}" --train "$work/holes.csv" --missing impute
printf 'x,y\n1,\n2,NA\n' >"$work/allgone.csv"
expect_fail missing-all "leaves nothing" linreg --train "$work/allgone.csv" --label y --missing drop
# gmm and conjugate too
expect_fail missing-gmm "line 3, column 'glu': the value is missing" gmm --data "$work/holes.csv" --features glu,bp
run_infer gmm-drop gmm --data "$work/holes.csv" --features glu,bp --missing drop
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["dropped_rows"] == {"data": 1}' \
  "$work/gmm-drop.json" || fail "gmm-drop: wrong count"
# Kalman: a missing observation is a step without an update.
awk -F, 'NR == 11 { $2 = "" } { print }' OFS=, "$data/nile.csv" >"$work/nile-gap.csv"
expect_fail missing-kalman "line 11, column 'volume': the value is missing" \
  kalman --data "$work/nile-gap.csv" --column volume --obs-var 15099 --state-var 1469.1
run_infer kalman-gap kalman --data "$work/nile-gap.csv" --column volume --obs-var 15099 --state-var 1469.1 --missing drop
python3 - "$work/kalman-gap.json" <<'PY' || fail "kalman-gap: the missing step is not a pure prediction"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["missing_steps"] == 1 and len(d["filtered_mean"]) == 100
# step 10 (line 11) has no update: its filtered mean is the previous one, its variance grows by W
assert d["filtered_mean"][9] == d["filtered_mean"][8]
assert abs(d["filtered_var"][9] - (d["filtered_var"][8] + 1469.1)) <= 1e-12 * d["filtered_var"][9]
PY

# ---- categorical features ---------------------------------------------------------------------------
# A text column 'group' (levels b, a, c in order of appearance), and the same design by hand:
# treatment coding with the first level in sorted order ('a') as the reference.
python3 - "$data/pima_train.csv" "$work" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = ["b", "a", "c"]
with open(sys.argv[2] + "/cat.csv", "w") as f, open(sys.argv[2] + "/dummies.csv", "w") as g:
    f.write("glu,group,bmi\n"); g.write("glu,group=b,group=c,bmi\n")
    for i, r in enumerate(rows):
        lvl = groups[i % 3]
        f.write(f"{r['glu']},{lvl},{r['bmi']}\n")
        g.write(f"{r['glu']},{int(lvl == 'b')},{int(lvl == 'c')},{r['bmi']}\n")
with open(sys.argv[2] + "/cat_new.csv", "w") as f:
    f.write("glu,group\n100,a\n120,d\n")
PY
expect_fail text-feature "line 2, column 'group': 'b' is not a number; a text column is a feature only when declared categorical (blr infer: --categorical group)" \
  linreg --train "$work/cat.csv" --label bmi
run_infer cat linreg --train "$work/cat.csv" --label bmi --categorical group --noise-precision 0.05
run_infer dummies linreg --train "$work/dummies.csv" --label bmi --noise-precision 0.05
same cat dummies mean sd lower upper covariance log_evidence
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["features"] == ["(intercept)", "glu", "group=b", "group=c"]' \
  "$work/cat.json" || fail "cat: coefficient names are not COL=level"
grep -q "^group=b " "$work/cat.out" || fail "cat: the table does not name group=b"
expect_fail unseen-level "cat_new.csv', line 3, column 'group': level 'd' does not occur in the training data (levels: a, b, c)" \
  linreg --train "$work/cat.csv" --label bmi --categorical group --predict "$work/cat_new.csv" --predict-out "$work/p.csv"
expect_fail categorical-label "Column 'bmi' is the label" linreg --train "$work/cat.csv" --label bmi --categorical group,bmi
expect_fail categorical-not-feature "Column 'group' is declared categorical but is not a feature" \
  linreg --train "$work/cat.csv" --label bmi --features glu --categorical group
printf 'x,g,y\n1,a,1\n2,a,2\n3,a,4\n' >"$work/onelevel.csv"
expect_fail single-level "single level 'a'" linreg --train "$work/onelevel.csv" --label y --categorical g
expect_fail categorical-kalman "Option '--categorical' applies to the models with --train" \
  kalman --data "$data/nile.csv" --fit --categorical year
# repeatable and comma lists: both name the same columns
run_infer cat2 linreg --train "$work/cat.csv" --label bmi --categorical group --categorical glu --noise-precision 0.05
python3 -c 'import json,sys; f = json.load(open(sys.argv[1]))["features"]; assert f[1].startswith("glu=") and f[-2:] == ["group=b", "group=c"], f' \
  "$work/cat2.json" || fail "cat2: repeated --categorical not applied"

# ---- numbers are decimal only ---------------------------------------------------------------------
for bad in 0x1p3 inf -Infinity nan 1e400; do
  printf 'x,y\n1,2\n%s,3\n4,5\n' "$bad" >"$work/num.csv"
  expect_fail "number-$bad" "line 3, column 'x'" linreg --train "$work/num.csv" --label y
done
expect_fail number-hex-message "'0x1p3' is not a number" linreg --train <(printf 'x,y\n0x1p3,1\n2,2\n') --label y

# ---- one value that swamps its column: a warning naming the column, the line and the value --------
# x: 1..40 and one 1.3e154 on line 12; standardised, the other 39 rows agree to six digits.
python3 - "$work/swamp.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("x,z,y\n")
    for i in range(1, 41):
        f.write(f"{'1.3e154' if i == 11 else i},{(i * 7) % 5},{i % 3}\n")
PY
run_infer swamp linreg --train "$work/swamp.csv" --label y --standardize
grep -q "blr: warning: column 'x', line 12 of '$work/swamp.csv': the value 1.3e+154 swamps the column" \
  "$work/swamp.err" || { fail "swamp: stderr lacks the warning naming x and line 12"; cat "$work/swamp.err" >&2; }
python3 -c 'import json,sys; w = json.load(open(sys.argv[1]))["warnings"]; assert len(w) == 1 and "line 12" in w[0] and "column '"'"'x'"'"'" in w[0], w' \
  "$work/swamp.json" || fail "swamp: the JSON lacks the one warning"
# Ordinary data, and a 0/1 column with a single 1 (its other rows are equal, nothing is lost): none.
printf 'x,d,y\n1,0,1\n2,0,3\n3,1,2\n4,0,5\n5,0,4\n' >"$work/plain.csv"
run_infer plain linreg --train "$work/plain.csv" --label y
grep -q "warning" "$work/plain.err" && fail "plain: a warning on ordinary data"
python3 -c 'import json,sys; assert "warnings" not in json.load(open(sys.argv[1]))' "$work/plain.json" ||
  fail "plain: the JSON has warnings"

# ---- results that are not finite: an error naming the entry, never a table --------------------------
printf 'x,y\n1,1e300\n2,-1e300\n3,1e300\n4,-1e300\n' >"$work/huge.csv"
"$blr" infer linreg --train "$work/huge.csv" --label y --noise-precision 1e10 >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" -eq 2 ] || fail "huge-coefficients: exit status $rc, expected 2"
grep -q "produced a result that is not finite" "$work/err" || fail "huge-coefficients: no error naming the entry"
grep -q "parameter" "$work/out" && fail "huge-coefficients: a table was printed"
printf 'y\n1e300\n-1e300\n1e300\n' >"$work/huge-y.csv"
expect_fail elbo-not-finite "blr infer conjugate produced a result that is not finite: 'elbo'" \
  conjugate --data "$work/huge-y.csv" --column y --likelihood normal --method vmp

finish
echo "all blr infer missing-value, categorical and finiteness checks passed"
