#!/usr/bin/env bash
# blr table1: every row passes, the JSON has the documented keys, bad flags fail clearly.
set -u
blr="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$blr" table1 --json "$tmp/t.json" > "$tmp/out.txt" || fail "table1 exited non-zero"
grep -q "0 failed" "$tmp/out.txt" || fail "a row failed: $(grep FAIL "$tmp/out.txt")"
python3 - "$tmp/t.json" <<'PY' || fail "JSON check failed"
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) >= 24, len(rows)
assert {"svi", "vmp", "nonconjugate-vmp", "nonconjugate-vi"} <= {r["row"] for r in rows}
for r in rows:
    for k in ("row", "family", "approximation", "reduces_to", "max_deviation", "pass"):
        assert k in r, (k, r)
    assert r["pass"] is True, r
PY
# The LibTorch rows (the deep-learning rows against torch::optim) come from blr-torch, run by the
# front as a child process; --layer selects.
if "$blr" --help 2>/dev/null | grep -q '^ *train '; then
  python3 - "$tmp/t.json" <<'PY' || fail "the torch rows are missing from table1"
import json, sys
rows = json.load(open(sys.argv[1]))
torch = {r["row"] for r in rows if r["layer"] == "torch"}
assert {"torch-sgd-momentum", "torch-rmsprop", "torch-adam"} <= torch, torch
assert all(r["layer"] in ("core", "torch") for r in rows)
PY
  "$blr" table1 --layer torch --json "$tmp/torch.json" > "$tmp/torch.txt" || fail "table1 --layer torch failed"
  python3 -c "import json,sys; rows=json.load(open('$tmp/torch.json')); assert rows and all(r['layer']=='torch' for r in rows)" ||
    fail "--layer torch printed other rows"
  "$blr" table1 --row torch-adam > "$tmp/one-torch.txt" || fail "table1 --row torch-adam failed"
  grep -q "1 rows, 1 passed" "$tmp/one-torch.txt" || fail "--row torch-adam did not select one row"
fi
"$blr" table1 --layer core --json "$tmp/core.json" > /dev/null || fail "table1 --layer core failed"
python3 -c "import json; rows=json.load(open('$tmp/core.json')); assert len(rows)>=24 and all(r['layer']=='core' for r in rows)" ||
  fail "--layer core printed other rows"
if "$blr" table1 --layer bogus > /dev/null 2>&1; then fail "--layer bogus accepted"; fi
"$blr" table1 --row ivon > "$tmp/one.txt" || fail "table1 --row ivon failed"
grep -q "1 rows, 1 passed" "$tmp/one.txt" || fail "--row did not select one row"
if "$blr" table1 --row no-such-row > /dev/null 2> "$tmp/err.txt"; then fail "unknown row accepted"; fi
grep -q "No Table-1 row is named 'no-such-row'" "$tmp/err.txt" || fail "unclear error: $(cat "$tmp/err.txt")"
if "$blr" table1 --json /nonexistent-dir/x.json > /dev/null 2> "$tmp/err2.txt"; then fail "unwritable JSON accepted"; fi
grep -q "the directory .*/nonexistent-dir.* does not exist" "$tmp/err2.txt" || fail "unclear error: $(cat "$tmp/err2.txt")"
# multimodal: four minima found, bad options refused
"$blr" multimodal --json "$tmp/m.json" > /dev/null || fail "multimodal failed"
python3 - "$tmp/m.json" <<'PY' || fail "multimodal did not find the four minima"
import json, sys, math
comps = json.load(open(sys.argv[1]))["components"]
minima = [(3, 2), (-2.805118, 3.131313), (-3.779310, -3.283186), (3.584428, -1.848127)]
for m in minima:
    assert min(math.dist(m, c["mean"]) for c in comps) < 0.05, m
PY
if "$blr" multimodal --temperature -1 > /dev/null 2>&1; then fail "negative temperature accepted"; fi
if "$blr" multimodal --components 5 > /dev/null 2> "$tmp/err3.txt"; then fail "non-square grid accepted"; fi
grep -q "components" "$tmp/err3.txt" || fail "unclear error: $(cat "$tmp/err3.txt")"
echo "table1 CLI: 1 passed, 0 failed"
