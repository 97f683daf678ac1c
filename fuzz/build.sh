#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/libfuzzer/) with clang into the folder $1; the checkpoint
# harness too when LibTorch's CMake package is installed (BLR_FUZZ_TORCH=0 leaves it out).
# Usage: fuzz/build.sh BUILD_DIR [CLANGXX]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
cxx="${2:-clang++}"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
torch=OFF
if [ "${BLR_FUZZ_TORCH:-1}" != 0 ] && ls /usr/lib/*/cmake/Torch/TorchConfig.cmake >/dev/null 2>&1; then
  torch=ON
fi
cmake -S "$here/libfuzzer" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=None \
  -DBLR_FUZZ_TORCH=$torch "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${BLR_FUZZ_JOBS:-2}"
