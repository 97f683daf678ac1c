"""The torch blr was built for against the torch this interpreter imports (issue 30, item 1).

The extension ``blr._blr`` links the LibTorch of one PyTorch release. Another major.minor release
fails at import with undefined symbols, or loads and crashes later; a CPU build of torch cannot
serve an extension built against CUDA kernels and the reverse. So ``import blr`` compares first
and refuses with one sentence that says what to rebuild.
"""

import re


def major_minor(version):
    """(2, 3) of "2.3.1+cu121", (1, 13) of "1.13.0a0"."""
    match = re.match(r"(\d+)\.(\d+)", str(version))
    if match is None:
        raise ImportError(f"blr cannot read the torch version '{version}'.")
    return int(match.group(1)), int(match.group(2))


def describe(version, cuda):
    return f"torch {version} ({'CUDA ' + cuda if cuda else 'CPU'})"


def mismatch(built_version, built_cuda, torch_version, torch_cuda):
    """The sentence refusing the import, or None when the two torches agree."""
    if major_minor(built_version) == major_minor(torch_version) and bool(built_cuda) == bool(torch_cuda):
        return None
    return (f"blr was built for {describe(built_version, built_cuda)} but this interpreter imports "
            f"{describe(torch_version, torch_cuda)}; build blr again against it with "
            "'pip --isolated install --no-index --no-deps --no-build-isolation .' from blr's source folder (docs/python.md).")


def check(torch):
    """Raises ImportError when the imported ``torch`` is not the one blr was built for."""
    from ._build_info import TORCH_CUDA, TORCH_VERSION
    sentence = mismatch(TORCH_VERSION, TORCH_CUDA, torch.__version__, torch.version.cuda)
    if sentence is not None:
        raise ImportError(sentence)
