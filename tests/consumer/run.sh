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
  script=() python=""
  for candidate in python3 /usr/bin/python3; do  # the first python3 with Debian's python3-torch
    if "$candidate" -c 'import torch' 2>/dev/null; then python=$candidate; break; fi
  done
  if [ -n "$python" ]; then
    "$python" "$source/tests/consumer/script_mlp.py" "$work/mlp.pt"
    script=("$work/mlp.pt")
  else
    echo "python3 with torch missing (scripts/setup.sh installs python3-torch): TorchScript part skipped" >&2
  fi
  "$work/build/ivon_any_model" "${script[@]}"
fi

# The Python package, when it was built: importable from the installed tree alone (run from a
# directory outside the source and build trees), one IVON step on the installed library.
python_dir=$(ls -d "$prefix"/lib/python3*/dist-packages/blr 2>/dev/null | head -1 || true)
if [ -n "$python_dir" ]; then
  (cd "$work" && PYTHONPATH="$(dirname "$python_dir")" /usr/bin/python3 -c '
import torch, blr
assert blr.__file__.startswith("'"$prefix"'"), blr.__file__
model = torch.nn.Linear(3, 2)
optimizer = blr.IVON(model.parameters(), lr=0.1, ess=10)
with optimizer.sampled_params(train=True):
    model(torch.randn(4, 3)).sum().backward()
optimizer.step()
print("installed python package:", blr.__file__, "IVON steps:", optimizer.step_count)')
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
  pkg-config --exists blr-torch
  echo "pkg-config --cflags --libs blr-torch: $(pkg-config --cflags --libs blr-torch)"
fi
echo "consumer: OK"
