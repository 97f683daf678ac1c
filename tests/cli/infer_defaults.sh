#!/usr/bin/env bash
# One default per concept (issue 31): every flag of `blr infer` and `blr sensitivity` that shows a
# default and is spelled as a key of an inference option table (`blr methods --markdown`: each
# method's table and the shared ones) has one of that key's defaults in the tables. Before stop 38
# `blr infer gmm --method svi` drew minibatches of 20 rows, where the library, Python and the
# registry's documentation said 10.
# Usage: infer_defaults.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_defaults.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

"$blr" methods --markdown >"$work/methods.md" || fail "blr methods --markdown failed"
for command in infer sensitivity; do
  "$blr" "$command" --help >"$work/$command.help" || fail "blr $command --help failed"
  python3 - "$work/methods.md" "$work/$command.help" "$command" <<'PY' || fail "blr $command: a default differs from the option tables'"
import re, sys
tables = {}
for line in open(sys.argv[1]):
    m = re.match(r"^\| `([a-z_0-9]+)` \| ([^|]*) \|", line)
    if m:
        tables.setdefault(m.group(1), set()).add(m.group(2).strip())
def same(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b
checked, wrong = [], []
for line in open(sys.argv[2]):
    m = re.match(r"^\s+--([a-z0-9-]+) [A-Z:_]+=(\S+)", line)
    if not m:
        continue
    key, default = m.group(1).replace("-", "_"), m.group(2)
    if key not in tables:
        continue
    checked.append(key)
    if not any(same(default, d) for d in tables[key]):
        wrong.append(f"--{m.group(1)} defaults to {default}; the tables' {key}: {sorted(tables[key])}")
assert not wrong, "\n".join(wrong)
assert "quadrature_nodes" in checked, checked  # the help format is still the one parsed here
print(f"blr {sys.argv[3]}: {len(checked)} defaults checked: {', '.join(checked)}")
PY
done
finish
