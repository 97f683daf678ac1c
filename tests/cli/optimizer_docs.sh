#!/usr/bin/env bash
# The optimizer reference in docs/torch.md is what `blr optimizers --markdown` prints from the
# option tables (regenerate with scripts/update_optimizer_docs.sh), and `blr optimizers --json`
# lists every registered optimizer with typed defaults.
set -u
blr="$1"; source="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# `blr optimizers --help` exits 0 even without the command (the top-level help), so look for it.
if ! "$blr" --help 2>/dev/null | grep -q '^ *optimizers '; then echo "torch layer not built: skipped"; exit 0; fi
"$blr" optimizers --markdown > "$tmp/generated.md" || fail "blr optimizers --markdown failed"
sed -n '/<!-- BEGIN optimizer reference/,/<!-- END optimizer reference -->/p' "$source/docs/torch.md" \
  | sed '1d;$d' > "$tmp/documented.md"
[ -s "$tmp/documented.md" ] || fail "docs/torch.md has no generated optimizer reference"
diff -u "$tmp/documented.md" "$tmp/generated.md" > "$tmp/diff.txt" ||
  fail "docs/torch.md is out of date with the option tables (run scripts/update_optimizer_docs.sh): $(head -20 "$tmp/diff.txt")"
for name in ivon vogn ogn vadam bayesbinn bsam mc-dropout adamw sgd ste sam; do
  grep -q "^### \`$name\`" "$tmp/generated.md" || fail "optimizer $name missing from the reference"
done
"$blr" optimizers --json "$tmp/o.json" > /dev/null || fail "blr optimizers --json failed"
python3 - "$tmp/o.json" <<'PY' || fail "optimizer JSON check failed"
import json, sys
doc = json.load(open(sys.argv[1]))
entries = doc if isinstance(doc, list) else doc.get("optimizers", doc)
names = {e["name"] for e in entries} if isinstance(entries, list) else set(entries)
assert {"ivon", "vogn", "ogn", "vadam", "bayesbinn", "bsam", "mc-dropout", "adamw", "sgd", "ste", "sam"} <= names, names
kinds = {"point estimate", "diagonal Gaussian", "Kronecker Gaussian", "Bernoulli", "dropout",
         "post-hoc Gaussian"}
by_name = {e["name"]: e for e in entries}
for e in entries:
    assert e["kind"] in kinds, e
    assert e["variational"] == (e["kind"] != "point estimate"), e
assert by_name["kfac"]["kind"] == "Kronecker Gaussian"
assert "data-parallel statistics" in by_name["ivon"]["capabilities"]
assert "Gaussian posterior" in by_name["kfac"]["capabilities"]
assert by_name["bayesbinn"]["capabilities"] == []
PY
echo "optimizer docs: OK"
