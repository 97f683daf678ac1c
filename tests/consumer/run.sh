#!/usr/bin/env bash
# Installs the build tree into a private prefix and builds tests/consumer against it, as an
# outside project would: CMake's find_package(blr), then pkg-config alone with the compiler.
# Usage: run.sh BUILD_DIR SOURCE_DIR HAVE_TORCH(ON|OFF)
set -euo pipefail
build=$(cd "$1" && pwd); source=$(cd "$2" && pwd); have_torch=${3:-OFF}
work="$build/consumer"
rm -rf "$work"; mkdir -p "$work"
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/lib/cmake/blr/blrConfig.cmake"
test -f "$prefix/include/blr/algorithms/ivon.hpp"
! grep -rq "$source" "$prefix/lib/cmake/blr" || { echo "the installed CMake package points into the source tree" >&2; exit 1; }

# 1. CMake: find_package(blr) from a project outside the source tree.
cmake -S "$source/tests/consumer" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log"
cmake --build "$work/build" -j "$(nproc)" >"$work/build.log" || { tail -40 "$work/build.log" >&2; exit 1; }
"$work/build/core_preset"
if [ "$have_torch" = "ON" ]; then
  script=()
  if python3 -c 'import torch' 2>/dev/null; then
    python3 - "$work/mlp.pt" <<'PY'
import sys, torch
from torch import nn
class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 16)
        self.out = nn.Linear(16, 2)
    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))
torch.jit.script(Mlp()).save(sys.argv[1])
PY
    script=("$work/mlp.pt")
  else
    echo "python3 with torch missing (scripts/setup.sh installs python3-torch): TorchScript part skipped" >&2
  fi
  "$work/build/ivon_any_model" "${script[@]}"
fi

# 2. pkg-config: the core program compiled with nothing but the flags it reports.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --exists blr
flags=$(pkg-config --cflags --libs blr)
echo "pkg-config --cflags --libs blr: $flags"
# shellcheck disable=SC2086
g++ -O2 "$source/tests/consumer/core_preset.cpp" -o "$work/core_preset_pc" $flags
"$work/core_preset_pc"
if [ "$have_torch" = "ON" ]; then
  echo "pkg-config --cflags --libs blr-torch: $(pkg-config --cflags --libs blr-torch)"
fi
echo "consumer: OK"
