#!/usr/bin/env bash
# Every installed header compiles on its own in an installed tree, with only the flags pkg-config
# gives a consumer (blr, and blr-torch for include/blr/torch): a header that leans on an include
# it does not make, or includes a header that is not installed (before 2026-11-28:
# blr/torch/optim/table1_rows.hpp included the uninstalled blr/algorithms/table1.hpp), fails here.
# The checks' own headers (include/blr/torch/checks) are not installed; that is asserted too.
# Each header is parsed (-fsyntax-only) in a translation unit of its own, in parallel.
# Usage: headers_alone.sh BUILD_DIR HAVE_TORCH(ON|OFF)
set -euo pipefail
build=$(cd "$1" && pwd); have_torch=${2:-OFF}
work="$build/headers-alone"
rm -rf "$work"; mkdir -p "$work/tu"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
include="$prefix/include"
[ -d "$include/blr/core" ] || { echo "headers_alone: nothing installed under $include" >&2; exit 1; }
[ ! -e "$include/blr/torch/checks" ] || { echo "headers_alone: the checks' headers are installed" >&2; exit 1; }
[ ! -e "$include/blr/algorithms/table1.hpp" ] || { echo "headers_alone: table1.hpp is installed" >&2; exit 1; }
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
core_flags=$(pkg-config --cflags blr)
torch_flags=""
[ "$have_torch" = "ON" ] && torch_flags=$(pkg-config --cflags blr-torch)
# One line per header: its kind (core or torch) and the translation unit that includes it.
while IFS= read -r header; do
  relative=${header#"$include"/}
  kind=core
  case "$relative" in blr/torch/*) [ "$have_torch" = "ON" ] || continue; kind=torch ;; esac
  tu="$work/tu/$(echo "$relative" | tr '/.' '__').cpp"
  printf '#include "%s"\n' "$relative" >"$tu"
  echo "$kind $tu"
done < <(find "$include/blr" -name '*.hpp' | sort) >"$work/list.txt"
compile_one() {
  local flags=$core_flags
  [ "$1" = torch ] && flags=$torch_flags
  # shellcheck disable=SC2086
  g++ -fsyntax-only $flags "$2" 2>"$2.err" && return 0
  echo "FAIL: $(cat "$2") does not compile on its own:" >&2
  head -5 "$2.err" >&2
  return 1
}
export -f compile_one
export core_flags torch_flags
# shellcheck disable=SC2016
xargs -a "$work/list.txt" -P "$(nproc)" -n 2 bash -c 'compile_one "$@"' _ ||
  { echo "headers_alone: some installed headers do not compile on their own (above)" >&2; exit 1; }
echo "headers_alone: $(wc -l <"$work/list.txt") installed headers compile on their own"
