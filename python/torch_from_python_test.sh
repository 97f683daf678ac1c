#!/usr/bin/env bash
# -DBLR_TORCH_FROM_PYTHON=ON (cmake/torch_from_python.cmake), configured only (a few seconds):
#  1. with /usr/bin/python3 the LibTorch found is its torch's, and python/blr/_build_info.py records
#     that torch's version;
#  2. an interpreter that cannot import torch is refused in one sentence;
#  3. an interpreter whose torch is another major.minor than the LibTorch found is refused in one
#     sentence (a stand-in interpreter that reports torch 2.3.1).
# Usage: torch_from_python_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd); source=$(cd "$2" && pwd)
work="$build/torch-from-python-test"
rm -rf "$work"; mkdir -p "$work"
configure() {  # configure FOLDER PYTHON: the output of a configure-only run, and its status
  cmake -S "$source" -B "$work/$1" -DBLR_TORCH_FROM_PYTHON=ON -DPython3_EXECUTABLE="$2" \
    -DBUILD_TESTING=OFF -DBLR_BUILD_BENCH=OFF >"$work/$1.log" 2>&1
}
fail() { echo "FAIL: $*" >&2; exit 1; }

configure real /usr/bin/python3 || { tail -20 "$work/real.log" >&2; fail "the configure with /usr/bin/python3 failed"; }
torch_version=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')
grep -q "LibTorch .* for the torch $torch_version of /usr/bin/python3" "$work/real.log" ||
  fail "the configure did not report the interpreter's torch $torch_version"
grep -qx "TORCH_VERSION = \"$torch_version\"" "$work/real/python/blr/_build_info.py" ||
  fail "_build_info.py does not record torch $torch_version"

printf '#!/bin/sh\necho "ModuleNotFoundError: No module named '"'"'torch'"'"'" >&2\nexit 1\n' >"$work/python-without-torch"
chmod +x "$work/python-without-torch"
if configure no-torch "$work/python-without-torch"; then fail "an interpreter without torch was accepted"; fi
tr '\n' ' ' <"$work/no-torch.log" | tr -s ' ' | grep -q "BLR_TORCH_FROM_PYTHON is ON but '$work/python-without-torch' cannot import torch (ModuleNotFoundError: No module named 'torch'); install PyTorch for that interpreter" ||
  { cat "$work/no-torch.log" >&2; fail "no sentence for an interpreter without torch"; }

printf '#!/bin/sh\necho %s\necho 2.3.1+cu121\necho 12.1\n' "$work/nowhere" >"$work/python-with-torch-2.3"
chmod +x "$work/python-with-torch-2.3"
if configure torch-2.3 "$work/python-with-torch-2.3"; then fail "torch 2.3 was accepted with LibTorch $torch_version"; fi
tr '\n' ' ' <"$work/torch-2.3.log" | tr -s ' ' | grep -q "is not the torch that '$work/python-with-torch-2.3' imports (2.3.1+cu121)" ||
  { cat "$work/torch-2.3.log" >&2; fail "no sentence for a torch of another version"; }
echo "BLR_TORCH_FROM_PYTHON: found torch $torch_version's LibTorch; refused no torch and torch 2.3.1"
