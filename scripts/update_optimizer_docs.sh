#!/usr/bin/env bash
# Rewrites the generated optimizer reference in docs/torch.md from the option tables.
# Usage: scripts/update_optimizer_docs.sh [path/to/blr]   (default build/blr)
set -euo pipefail
cd "$(dirname "$0")/.."
blr=${1:-build/blr}
generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
"$blr" optimizers --markdown > "$generated"
python3 - docs/torch.md "$generated" <<'PY'
import sys
doc_path, generated_path = sys.argv[1], sys.argv[2]
doc = open(doc_path).read()
begin = doc.index("<!-- BEGIN optimizer reference")
begin = doc.index("\n", begin) + 1
end = doc.index("<!-- END optimizer reference -->")
open(doc_path, "w").write(doc[:begin] + open(generated_path).read() + doc[end:])
PY
echo "docs/torch.md: optimizer reference regenerated"
