#!/usr/bin/env bash
# Issue 32, item 4: the torch layer's rooms mirror each other. Every folder of src/torch has its
# public folder in include/blr/torch and the other way round; no public header lies loose at
# include/blr/torch's root; the autograd-graph readers live in curvature/; the tests of
# tests/torch sit in subfolders named after the source folders (their shared helpers at its root),
# and a test at the root is one of a source file at src/torch's root or the device suite, which
# runs every room on each device.
# Usage: source_layout.sh <path-to-blr> <source-dir>
set -uo pipefail
src=${2:?usage: source_layout.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$src" || exit 1

for dir in src/torch/*/; do
  room=$(basename "$dir")
  [ -d "include/blr/torch/$room" ] || fail "src/torch/$room has no public folder include/blr/torch/$room"
done
for dir in include/blr/torch/*/; do
  room=$(basename "$dir")
  [ -d "src/torch/$room" ] || fail "include/blr/torch/$room has no source folder src/torch/$room"
done
for header in include/blr/torch/*.hpp; do
  [ -e "$header" ] && fail "$header lies at the root of include/blr/torch; put it in its room"
done
for reader in per_example squared_gradients kronecker_factors; do
  [ -f "include/blr/torch/curvature/$reader.hpp" ] && [ -f "src/torch/curvature/$reader.cpp" ] ||
    fail "the autograd-graph reader $reader is not in the curvature room"
done
for dir in tests/torch/*/; do
  room=$(basename "$dir")
  [ -d "src/torch/$room" ] || fail "tests/torch/$room names no source folder src/torch/$room"
done
for test in tests/torch/*_test.cpp; do
  [ -e "$test" ] || continue
  stem=$(basename "$test" _test.cpp)
  [ "$stem" = device ] || [ -f "src/torch/$stem.hpp" ] || [ -f "src/torch/$stem.cpp" ] ||
    fail "$test lies at the root of tests/torch; move it to the folder of what it tests"
done
# The grab bag stays split: optimizers that are not Gaussian mean-field rules do not include the
# mean-field rule's definitions for a helper.
for f in src/torch/optim/{sam,laplace,mc_dropout,kfac,bayesbinn,ste}.cpp; do
  grep -q '#include "gaussian_impl.hpp"' "$f" && fail "$f includes gaussian_impl.hpp"
done
finish
echo "source layout: the rooms mirror each other"
