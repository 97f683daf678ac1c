#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/libfuzzer/) with clang into the folder $1.
# Usage: fuzz/build.sh BUILD_DIR [CLANGXX]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
cxx="${2:-clang++}"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$here/libfuzzer" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=None \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${BLR_FUZZ_JOBS:-2}"
