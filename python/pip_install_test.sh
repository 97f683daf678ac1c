#!/usr/bin/env bash
# `pip --isolated install --no-index --no-deps --no-build-isolation .` from the checkout into a fresh virtual
# environment (with Debian's site packages, for torch), then `import blr` and one IVON step from
# outside the tree; the installed version names the torch it was built for (0.1.0+torch<version>),
# and `python3 -m build --wheel --no-isolation` makes a wheel of that name.
# The CMake build reuses BUILD_DIR (setup.py's BLR_CMAKE_BUILD_DIR) so the test does not compile
# the library a second time; the packing, the wheel and the run paths are what it checks.
# Usage: pip_install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd); source=$(cd "$2" && pwd)
work="$build/pip-install-test"
rm -rf "$work"; mkdir -p "$work"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
# pip builds in the tree; setup.py keeps setuptools' scratch files in build-python/ (ignored).
(cd "$source" && BLR_CMAKE_BUILD_DIR="$build" "$work/venv/bin/pip" --isolated install --no-build-isolation \
   --no-deps --no-index --no-cache-dir -q . >"$work/pip.log" 2>&1) || { tail -30 "$work/pip.log" >&2; exit 1; }
cd "$work"
"$work/venv/bin/python" -c '
import torch, blr
assert "/venv/" in blr.__file__, blr.__file__
model = torch.nn.Linear(3, 2)
optimizer = blr.IVON(model.parameters(), lr=0.1, ess=10)
with optimizer.sampled_params(train=True):
    model(torch.randn(4, 3)).sum().backward()
optimizer.step()
import importlib.metadata, re
version = importlib.metadata.version("blr")
assert version.startswith("0.1.0+torch" + re.sub(r"[^A-Za-z0-9.]", ".", torch.__version__)), version
assert version.endswith(".cpu") != bool(torch.version.cuda), version
assert blr.__torch_version__ == torch.__version__, blr.__torch_version__
print("pip-installed:", blr.__file__, version, "IVON steps:", optimizer.step_count)'

# The wheel, as `python3 -m build` makes it (Debian's python3-build, offline: --no-isolation).
version=$("$work/venv/bin/python" -c 'import importlib.metadata; print(importlib.metadata.version("blr"))')
(cd "$source" && BLR_CMAKE_BUILD_DIR="$build" /usr/bin/python3 -m build --wheel --no-isolation \
   --outdir "$work/dist" >"$work/build.log" 2>&1) || { tail -30 "$work/build.log" >&2; exit 1; }
wheel=$(ls "$work/dist")
case "$wheel" in
  "blr-$version-"*.whl) echo "wheel: $wheel" ;;
  *) echo "the wheel '$wheel' is not blr $version's" >&2; exit 1 ;;
esac
