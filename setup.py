"""pip's entry to the CMake build of the Python package (python/CMakeLists.txt).

`pip --isolated install --no-index --no-deps --no-build-isolation .` configures CMake in
build-python/ with LibTorch taken from the torch of the interpreter that runs pip
(-DBLR_TORCH_FROM_PYTHON=ON: a PyTorch 2.x wheel, CPU or CUDA, or Debian's python3-torch); with
BLR_CMAKE_BUILD_DIR set, an existing build tree is only brought up to date instead. It builds the
extension target and packs python/blr/*.py, the extension and libblr_torch.so (which the extension
finds next to itself through its $ORIGIN run path) into the wheel, whose version names the torch
it was built for. Only the Debian packages of scripts/setup.sh are needed; nothing is downloaded.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BLR_VERSION = "0.1.0"


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("BLR_CMAKE_BUILD_DIR", ROOT / "build-python")).resolve()
        if not (build / "CMakeCache.txt").exists():
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                            f"-DPython3_EXECUTABLE={sys.executable}", "-DBLR_TORCH_FROM_PYTHON=ON",
                            "-DBUILD_TESTING=OFF", "-DBLR_BUILD_BENCH=OFF"], check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "blr_python", "-j", jobs],
                       check=True)
        package = build / "python" / "blr"
        if not any(package.glob("_blr*.so")):
            raise RuntimeError(f"The CMake build in {build} made no Python extension: is "
                               "python3-torch installed (scripts/setup.sh)?")
        built_for = {}
        exec((package / "_build_info.py").read_text(), built_for)
        import torch
        if built_for["TORCH_VERSION"] != torch.__version__:
            raise RuntimeError(f"The CMake build in {build} is for torch {built_for['TORCH_VERSION']} "
                               f"but pip runs with torch {torch.__version__}; use another build "
                               "folder (unset BLR_CMAKE_BUILD_DIR).")
        target = Path(self.get_ext_fullpath(ext.name)).parent
        target.mkdir(parents=True, exist_ok=True)
        for item in package.iterdir():
            if item.suffix in (".py", ".pyi", ".so") or item.name == "py.typed":
                shutil.copy2(item, target / item.name)
        for library in build.glob("libblr_torch.so*"):
            shutil.copy2(library, target / library.name, follow_symlinks=True)


def version_for_this_torch():
    """blr's version with the torch it is built for as the local label, e.g. 0.1.0+torch2.3.1.cu121:
    the wheel's name says which torch it needs (import refuses another, python/blr/_torch_check.py)."""
    import torch
    label = re.sub(r"[^A-Za-z0-9.]", ".", torch.__version__)
    cuda = f".cu{torch.version.cuda.replace('.', '')}" if torch.version.cuda and "cu" not in label else ""
    cpu = ".cpu" if not torch.version.cuda and "cpu" not in label else ""
    return f"{BLR_VERSION}+torch{label}{cuda}{cpu}"


# setuptools' own scratch space stays out of the checkout's CMake build directory `build/`.
(ROOT / "build-python").mkdir(exist_ok=True)
setup(
    version=version_for_this_torch(),
    options={"build": {"build_base": "build-python/setuptools"},
             "egg_info": {"egg_base": "build-python"}},
    packages=["blr"],
    package_dir={"blr": "python/blr"},
    ext_modules=[CMakeExtension("blr._blr")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
