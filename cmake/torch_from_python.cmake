# LibTorch from a Python interpreter's torch package (issue 30, item 1).
#
# A PyTorch user's LibTorch is the one inside the torch package of their interpreter (a pip wheel,
# PyTorch 2.x, CPU or CUDA), not Debian's libtorch-dev. With -DBLR_TORCH_FROM_PYTHON=ON the build
# asks that interpreter where its CMake package is (`torch.utils.cmake_prefix_path`) and puts it
# first on CMAKE_PREFIX_PATH, so that find_package(Torch) finds it; setup.py turns this on for
# `pip --isolated install --no-index --no-deps --no-build-isolation .`. Debian's python3-torch has no CMake package inside; there find_package falls
# back to libtorch-dev, which is the same torch (the version check below says so or refuses).
#
# The C++ library and the Python extension must link the LibTorch the interpreter loads: a
# different major.minor fails at import with undefined symbols, or worse. blr_check_torch_versions
# compares the two once LibTorch is found.

# blr_python_torch(PYTHON OUT_PREFIX OUT_VERSION OUT_CUDA): the interpreter's
# torch.utils.cmake_prefix_path, torch.__version__ and torch.version.cuda ("" for a CPU build).
# A FATAL_ERROR sentence if the interpreter cannot import torch.
function(blr_python_torch python out_prefix out_version out_cuda)
  execute_process(
    COMMAND "${python}" -c
            "import torch, torch.utils; print(torch.utils.cmake_prefix_path); print(torch.__version__); print(torch.version.cuda or '')"
    OUTPUT_VARIABLE answer RESULT_VARIABLE status ERROR_VARIABLE errors
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0)
    string(REGEX REPLACE ".*\n([^\n]+)\n?$" "\\1" last_error "\n${errors}")
    message(FATAL_ERROR "BLR_TORCH_FROM_PYTHON is ON but '${python}' cannot import torch "
                        "(${last_error}); install PyTorch for that interpreter or name another "
                        "with -DPython3_EXECUTABLE=PATH.")
  endif()
  string(REPLACE "\n" ";" lines "${answer}")
  list(LENGTH lines n)
  if(n LESS 2)
    message(FATAL_ERROR "BLR_TORCH_FROM_PYTHON is ON but '${python}' did not report torch's "
                        "CMake path and version (it printed '${answer}').")
  endif()
  list(GET lines 0 prefix)
  list(GET lines 1 version)
  set(cuda "")
  if(n GREATER 2)
    list(GET lines 2 cuda)
  endif()
  set(${out_prefix} "${prefix}" PARENT_SCOPE)
  set(${out_version} "${version}" PARENT_SCOPE)
  set(${out_cuda} "${cuda}" PARENT_SCOPE)
endfunction()

# blr_major_minor(VERSION OUT): "2.3" of "2.3.1+cu121", "1.13" of "1.13.0a0".
function(blr_major_minor version out)
  if(NOT version MATCHES "^([0-9]+)\\.([0-9]+)")
    message(FATAL_ERROR "'${version}' is not a torch version (MAJOR.MINOR...).")
  endif()
  set(${out} "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}" PARENT_SCOPE)
endfunction()

# blr_check_torch_versions(LIBTORCH_VERSION PYTHON_VERSION PYTHON): a FATAL_ERROR sentence when
# the LibTorch found and the interpreter's torch differ in major.minor.
function(blr_check_torch_versions libtorch_version python_version python)
  blr_major_minor("${libtorch_version}" built)
  blr_major_minor("${python_version}" imported)
  if(NOT built STREQUAL imported)
    message(FATAL_ERROR "The LibTorch found (${libtorch_version}, in ${Torch_DIR}) is not the "
                        "torch that '${python}' imports (${python_version}); point "
                        "CMAKE_PREFIX_PATH at that torch's share/cmake or use "
                        "-DPython3_EXECUTABLE for the interpreter whose torch you want.")
  endif()
endfunction()
