"""`import blr` with another torch than the build's is refused in one sentence (issue 30, item 1):
blr/_torch_check.py against the versions recorded by CMake in blr/_build_info.py."""

import subprocess
import sys

import torch

import blr
from blr import _torch_check


def test_the_build_records_the_torch_it_was_built_against():
    assert blr.__torch_version__ == torch.__version__
    assert blr.__torch_cuda__ == torch.version.cuda


def test_the_same_major_minor_and_kind_of_build_are_accepted():
    assert _torch_check.mismatch("1.13.0a0", None, "1.13.1", None) is None
    assert _torch_check.mismatch("2.3.0+cu121", "12.1", "2.3.1+cu118", "11.8") is None


def test_another_version_or_kind_of_build_is_one_sentence():
    assert _torch_check.mismatch("1.13.0a0", None, "2.3.1+cu121", "12.1") == (
        "blr was built for torch 1.13.0a0 (CPU) but this interpreter imports torch 2.3.1+cu121 "
        "(CUDA 12.1); build blr again against it with 'pip --isolated install --no-index --no-deps --no-build-isolation .' "
        "from blr's source folder (docs/python.md).")
    assert "imports torch 2.3.1 (CPU)" in _torch_check.mismatch("2.3.1+cu121", "12.1", "2.3.1", None)
    assert "built for torch 2.4.0 (CPU)" in _torch_check.mismatch("2.4.0", None, "2.5.0", None)


def run_import(prelude):
    """`import blr` in a fresh interpreter after `prelude` (which fakes the imported torch)."""
    return subprocess.run([sys.executable, "-c", f"import torch\n{prelude}\nimport blr"],
                          capture_output=True, text=True)


def test_import_refuses_a_torch_of_another_version():
    result = run_import("torch.__version__ = '2.99.1'")
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    built = _torch_check.describe(torch.__version__, torch.version.cuda)
    imported = _torch_check.describe("2.99.1", torch.version.cuda)
    assert last == (f"ImportError: blr was built for {built} but this "
                     f"interpreter imports {imported}; build blr again against it with "
                     "'pip --isolated install --no-index --no-deps --no-build-isolation .' from blr's source folder "
                     "(docs/python.md)."), last


def test_import_refuses_a_cuda_torch_for_a_cpu_build_and_the_reverse():
    other = None if torch.version.cuda else "12.1"
    result = run_import(f"torch.version.cuda = {other!r}")
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1].endswith(
        f"imports {_torch_check.describe(torch.__version__, other)}; build blr again against it with "
        "'pip --isolated install --no-index --no-deps --no-build-isolation .' from blr's source folder (docs/python.md).")


def test_import_accepts_the_build_torch():
    result = run_import("")
    assert result.returncode == 0, result.stderr
