#!/usr/bin/env bash
# One default per concept (issue 31). The method flags of `blr infer` and `blr sensitivity` are
# generated from the inference option tables (apps/blr/table_flags.hpp); each names, per method,
# the default it starts from, which must be the one `blr methods --markdown` documents for that
# method (presets included: GP classification's Laplace tolerance 1e-12, the GP L-BFGS's). A
# hand-written flag that shows a default and is spelled as a table key must show one of the
# tables' defaults. Before stop 38 `blr infer gmm --method svi` drew minibatches of 20 rows, where
# the library, Python and the registry's documentation said 10.
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
# The tables of `blr methods --markdown`, per section: "glm laplace", "predictive", ...
tables, section = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"^### (?:`([a-z-]+ [a-z-]+)`: options|Shared: `([a-z]+)`)", line)
    if m:
        section = m.group(1) or m.group(2)
        tables[section] = {}
        continue
    m = re.match(r"^\| `([a-z_0-9]+)` \| ([^|]*) \|", line)
    if m and section:
        tables[section][m.group(1)] = m.group(2).strip()
defaults = {}
for t in tables.values():
    for key, d in t.items():
        defaults.setdefault(key, set()).add(d)
def same(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b
checked, wrong = [], []
# The help as flag → (text, whether in a group generated from the tables).
flags, current, generated = {}, None, False
for line in open(sys.argv[2]):
    if re.match(r"^Options of ", line):
        generated = True
        continue
    m = re.match(r"^\s+(--[a-z0-9-]+)([ =][^ ]*)?(?:\s{2,}(.*))?$", line.rstrip("\n"))
    if m:
        current = m.group(1)
        flags[current] = [line.strip(), generated]
    elif current and re.match(r"^\s{20,}\S", line):
        flags[current][0] += " " + line.strip()
    elif not line.strip():
        current = None
for flag, (text, from_tables) in flags.items():
    key = flag[2:].replace("-", "_")
    m = re.match(r"^--[a-z0-9-]+ [A-Z:_]+=(\S+)", text)
    if m and key in defaults:  # a hand-written flag showing its default (--level FLOAT=0.95)
        checked.append(key)
        if not any(same(m.group(1), d) for d in defaults[key]):
            wrong.append(f"{flag} defaults to {m.group(1)}; the tables' {key}: {sorted(defaults[key])}")
    if not from_tables:
        continue
    # A flag generated from the tables names each method's default: the one its table documents.
    found = re.findall(r"\(default ([^:()]+): ([^)]+)\)", text)
    if not found:
        wrong.append(f"{flag} names no default: {text}")
    for d, labels in found:
        for label in labels.split(", "):
            checked.append(f"{key}@{label}")
            documented = tables.get(label, {}).get(key)
            if documented is None or not same(d, documented):
                wrong.append(f"{flag} says {d} for {label}; blr methods: {documented}")
assert not wrong, "\n".join(wrong)
assert "quadrature_nodes@predictive" in checked, checked  # the help format is still the one parsed
print(f"blr {sys.argv[3]}: {len(checked)} defaults checked")
PY
done
finish
