#!/usr/bin/env bash
# Issue 32, item 2: the tools ask an optimizer for a capability (VariationalOptimizer,
# GaussianPosterior, DiagonalGaussianPosterior, DataParallelStatistics, KroneckerCurvatureInput,
# ...: interfaces, capabilities.hpp), never for its type. This scans the library, the apps and the
# Python extension for a dynamic_cast to a concrete optimizer class (or the MeanFieldOptimizer base,
# LibTorch's AdamW/SGD) outside the registry (src/torch/optim/registry.cpp,
# include/blr/torch/optim/registry.hpp), which is the one place that knows types: any such cast
# fails. Messages and help texts take their lists of optimizers from the registry, so a
# hand-written list of optimizer names in a string fails too.
# Usage: capability_queries.sh <path-to-blr> <source-dir>
set -uo pipefail
src=${2:?usage: capability_queries.sh <path-to-blr> <source-dir>}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"

types='(MeanFieldOptimizer|LaplacePosterior|Kfac|Ivon|Vogn|Ogn|Vadam|AdaBayes|AdaBayesFp|BayesBinn|McDropout|Ste|Sam|Bsam|TwoPointOptimizer|GaussianOptimizer<[^>]*>|::torch::optim::(AdamW|SGD)|torch::optim::(AdamW|SGD))'
found=$(cd "$src" && grep -rEn "dynamic_cast<(const )?$types[*&]" src apps python/src include \
          --include='*.cpp' --include='*.hpp' |
          grep -v -e '^src/torch/optim/registry.cpp:' -e '^include/blr/torch/optim/registry.hpp:')
while read -r hit; do
  [ -z "$hit" ] && continue
  fail "${hit%%:*}: a dynamic_cast to an optimizer type; ask the registry for a capability ($hit)"
done <<<"$found"
# A list of optimizer names written into a message or help text ("(ivon, vogn, ...)") goes stale:
# optimizer_names_with(&OptimizerEntry::flag) and gaussian_posterior_names() give it.
lists=$(cd "$src" && grep -rEin '"[^"]*\((ivon|vogn|ogn|vadam), (ivon|vogn|ogn|vadam)' src apps python/src \
          --include='*.cpp' --include='*.hpp')
while read -r hit; do
  [ -z "$hit" ] && continue
  fail "${hit%%:*}: a hand-written list of optimizers in a string; take it from the registry ($hit)"
done <<<"$lists"
# The tools already converted stay converted.
for f in src/torch/posterior/sensitivity.cpp src/torch/posterior/merge.cpp; do
  grep -q "dynamic_cast" "$src/$f" && fail "$f: a dynamic_cast is back"
done
finish
echo "capability queries: no new type ladder"
