#!/usr/bin/env bash
# The runtime search paths of blr's programs, shared library and Python module, in the build tree
# and in an installed tree: no entry may be empty or relative, since the loader reads those against
# the current directory, and none of them may load a library planted where it runs.
# Until 2026-11-29 CMake padded the build tree's RUNPATH with ':' for its rewrite at install
# ("::::::::::::::" for build/blr), and `build/blr --version` run from a folder holding a
# libfmt.so.9 loaded it (CWE-426). Each ELF file's RUNPATH is read with readelf; then every library
# the file needs (but the loader and libc) is planted, as a library that defines nothing, in a
# scratch folder, and the programs run from there (the Python module is imported from there).
# Usage: runpaths.sh BUILD_DIR HAVE_TORCH(ON|OFF) [PYTHON (the interpreter the module was built
# for)]; CXX (default c++) compiles the planted libraries.
set -euo pipefail
build=$(cd "$1" && pwd); have_torch=${2:-OFF}; python=${3:-}
work="$build/runpaths"
rm -rf "$work"; mkdir -p "$work/planted"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
files=("$build/blr" "$prefix/bin/blr")
if [ "$have_torch" = ON ]; then
  files+=("$build/blr-torch" "$build/libblr_torch.so" "$prefix/bin/blr-torch")
  files+=("$(find "$prefix" -name 'libblr_torch.so' -print -quit)")
  while IFS= read -r module; do files+=("$module"); done < <(
    find "$build/python/blr" "$prefix" -name '_blr*.so' 2>/dev/null)
fi
status=0
for file in "${files[@]}"; do
  [ -f "$file" ] || { echo "runpaths: $file was not built or installed" >&2; status=1; continue; }
  runpath=$(readelf -d "$file" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  [ -z "$runpath" ] && continue
  case ":$runpath:" in
    *::*) echo "runpaths: $file has an empty entry (the current directory) in its search" \
            "path '$runpath'" >&2
          status=1; continue ;;
  esac
  IFS=: read -r -a entries <<<"$runpath"
  for entry in "${entries[@]}"; do
    case "$entry" in
      /* | '$ORIGIN' | '$ORIGIN/'*) ;;
      *) echo "runpaths: $file has the relative entry '$entry' in its search path '$runpath'" >&2
         status=1 ;;
    esac
  done
done
[ "$status" = 0 ] || exit 1

# Plant every library these files need, each an empty shared library, and run them from there.
echo 'extern "C" void blr_planted_library() {}' >"$work/planted.cpp"
for file in "${files[@]}"; do
  readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
done | sort -u | grep -v -E '^(ld-linux|libc\.so)' | while read -r needed; do
  "${CXX:-c++}" -shared -fPIC -o "$work/planted/$needed" "$work/planted.cpp"
done
planted_count=$(find "$work/planted" -type f | wc -l)
[ "$planted_count" -gt 3 ] || { echo "runpaths: only $planted_count libraries planted" >&2; exit 1; }
cd "$work/planted"
programs=("$build/blr" "$prefix/bin/blr")
[ "$have_torch" = ON ] && programs+=("$build/blr-torch" "$prefix/bin/blr-torch")
for program in "${programs[@]}"; do
  out=$("$program" --version 2>&1) ||
    { echo "runpaths: $program fails next to planted libraries: $out" >&2; exit 1; }
  case "$out" in blr\ *) ;; *) echo "runpaths: $program printed '$out'" >&2; exit 1 ;; esac
done
if [ "$have_torch" = ON ] && [ -n "$python" ] && [ -d "$build/python/blr" ]; then
  PYTHONPATH="$build/python" "$python" -c 'import blr, blr._blr' ||
    { echo "runpaths: the Python module fails to import next to planted libraries" >&2; exit 1; }
fi
echo "runpaths: ${#files[@]} files, no empty or relative entry; ${#programs[@]} programs ran beside $planted_count planted libraries"
