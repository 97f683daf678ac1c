"""pip's entry to the CMake build of the Python package (python/CMakeLists.txt).

`pip --isolated install --no-index --no-deps --no-build-isolation .` configures CMake in build-python/ (or in the directory named by
BLR_CMAKE_BUILD_DIR, e.g. an existing build tree, which is then only brought up to date), builds the
extension target, and packs python/blr/*.py, the extension and libblr_torch.so (which the
extension finds next to itself through its $ORIGIN run path) into the wheel. Only the Debian
packages of scripts/setup.sh are needed; nothing is downloaded.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("BLR_CMAKE_BUILD_DIR", ROOT / "build-python")).resolve()
        if not (build / "CMakeCache.txt").exists():
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                            f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF",
                            "-DBLR_BUILD_BENCH=OFF"], check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "blr_python", "-j", jobs],
                       check=True)
        package = build / "python" / "blr"
        if not any(package.glob("_blr*.so")):
            raise RuntimeError(f"The CMake build in {build} made no Python extension: is "
                               "python3-torch installed (scripts/setup.sh)?")
        target = Path(self.get_ext_fullpath(ext.name)).parent
        target.mkdir(parents=True, exist_ok=True)
        for item in package.iterdir():
            if item.suffix in (".py", ".pyi", ".so") or item.name == "py.typed":
                shutil.copy2(item, target / item.name)
        for library in build.glob("libblr_torch.so*"):
            shutil.copy2(library, target / library.name, follow_symlinks=True)


# setuptools' own scratch space stays out of the checkout's CMake build directory `build/`.
(ROOT / "build-python").mkdir(exist_ok=True)
setup(
    options={"build": {"build_base": "build-python/setuptools"},
             "egg_info": {"egg_base": "build-python"}},
    packages=["blr"],
    package_dir={"blr": "python/blr"},
    ext_modules=[CMakeExtension("blr._blr")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
