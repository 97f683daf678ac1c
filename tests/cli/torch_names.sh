#!/usr/bin/env bash
# Names a user sees come from the user's data and from the registry (issue 30, item 6): `blr
# sensitivity --checkpoint` names the classes of a user's data by number, not with Fashion-MNIST's
# names; the train and eval help texts name the data the user can give; --optimizer's help lists
# every registered optimizer that trains.
# Usage: torch_names.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: torch_names.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
require_torch
cd "$work" || exit 1

"$blr" train --help >"$work/train.help" 2>&1 || fail "train --help failed"
grep -q "your data (.pt, .csv)" "$work/train.help" || fail "train --help does not name the user's data"
"$blr" eval --help >"$work/eval.help" 2>&1 || fail "eval --help failed"
grep -q "its run's test set" "$work/eval.help" || fail "eval --help still names only Fashion-MNIST"
"$blr" optimizers --json "$work/o.json" >/dev/null 2>&1 || fail "blr optimizers --json failed"
for name in $(python3 -c "import json; print(' '.join(o['name'] for o in json.load(open('$work/o.json'))['optimizers'] if o['trains']))"); do
  tr -s ' \n' ' ' <"$work/train.help" | grep -q -- "$name[,.]" ||
    fail "train --help's --optimizer does not list $name"
done

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 cannot import torch; the sensitivity check did not run." >&2
  finish
  exit 0
fi
/usr/bin/python3 - "$work" <<'PY'
import sys, torch
torch.manual_seed(0)
y = torch.randint(0, 4, (200,))
x = torch.randn(200, 1, 6, 6) + 2.0 * torch.nn.functional.one_hot(y, 36).float().reshape(200, 1, 6, 6)
torch.save({"x": x, "y": y, "x_test": x[:50], "y_test": y[:50]}, f"{sys.argv[1]}/four.pt")
PY
"$blr" train --data "$work/four.pt" --optimizer ivon --hidden 8 --epochs 1 --threads 1 --quiet \
  --out "$work/run" >/dev/null 2>&1 || fail "training on four.pt failed"
"$blr" sensitivity --checkpoint "$work/run/ivon.ckpt" --top 5 --threads 1 --quiet --out "$work/sens" \
  >"$work/sens.out" 2>"$work/sens.err" || { fail "sensitivity: exit status $?"; cat "$work/sens.err" >&2; }
if grep -qE "T-shirt|Trouser|Pullover|Dress|Coat|Sandal|Shirt|Sneaker|Bag|Ankle" "$work/sens.out"; then
  fail "sensitivity names a user's classes with Fashion-MNIST's names"; cat "$work/sens.out" >&2
fi
grep -qE "class [0-3]" "$work/sens.out" || { fail "sensitivity does not name the classes by number"; cat "$work/sens.out" >&2; }
grep -qE "class [0-3]" "$work/sens/plot-data/influence.gp" 2>/dev/null ||
  fail "influence.png's titles do not name the classes by number"
finish
echo "all name checks passed"
