#!/usr/bin/env bash
# The inference-methods reference in docs/inference.md is what `blr methods --markdown` prints
# from the registry and the option tables (inference/methods.hpp), and `blr methods --json` lists
# every model × method of issue 31 with typed defaults that each table accepts.
set -u
blr="$1"; source="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$blr" methods --markdown > "$tmp/generated.md" || fail "blr methods --markdown failed"
sed -n '/<!-- BEGIN inference methods reference/,/<!-- END inference methods reference -->/p' \
  "$source/docs/inference.md" | sed '1d;$d' > "$tmp/documented.md"
[ -s "$tmp/documented.md" ] || fail "docs/inference.md has no generated methods reference"
diff -u "$tmp/documented.md" "$tmp/generated.md" > "$tmp/diff.txt" ||
  fail "docs/inference.md is out of date with the registry (paste 'blr methods --markdown' between its markers): $(head -20 "$tmp/diff.txt")"
"$blr" methods --json "$tmp/m.json" > /dev/null || fail "blr methods --json failed"
python3 - "$tmp/m.json" <<'PY' || fail "registry JSON check failed"
import json, sys
entries = json.load(open(sys.argv[1]))
pairs = {(e["model"], e["method"]) for e in entries}
want = {("glm", m) for m in ("exact", "laplace", "cvi", "mixture-vi")} | {
    ("gpc", "laplace"), ("gpc", "cvi"), ("gpr", "exact"), ("gmm", "em"), ("gmm", "vmp"),
    ("gmm", "svi"), ("kalman", "exact"), ("conjugate", "exact"), ("conjugate", "vmp"),
    ("conjugate", "svi")}
assert pairs == want, pairs ^ want
assert len(pairs) == len(entries), "a model/method pair is registered twice"
for e in entries:
    assert e["summary"] and e["reference"] and e["fit"] and e["command"].startswith("blr infer"), e
    for o in e["options"]:
        # One spelling: snake_case keys, as the optimizers' tables have them.
        assert o["key"] == o["key"].lower() and "-" not in o["key"], o["key"]
        assert o["type"] in ("number", "integer", "switch", "choice"), o
        if o["type"] == "choice":
            assert o["default"] in o["choices"], o
PY
# A table's range reaches the command line naming the flag the user typed.
out=$("$blr" infer gmm --data "$source/data/faithful.csv" --features waiting --reg-covar -1 2>&1)
[ $? -ne 0 ] || fail "gmm --reg-covar -1 was accepted"
echo "$out" | grep -q "Option '--reg-covar' must be ≥ 0; got -1." || fail "gmm --reg-covar -1: $out"
echo "inference methods docs: OK"
