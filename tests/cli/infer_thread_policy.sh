#!/usr/bin/env bash
# `blr infer` and `blr sensitivity` run OpenBLAS with OPENBLAS_THREAD_TIMEOUT=4 when the user has
# not chosen (apps/blr/thread_policy.hpp: an idle worker sleeps after 2⁴ turns instead of calling
# sched_yield for a long while, which the kernel counts as system time). OpenBLAS reads it when it
# is loaded, so blr sets it and starts itself again: the BLAS is loaded twice, and once when the
# user set the variable (whose value is kept) or for a command that runs no BLAS threads.
# Usage: infer_thread_policy.sh <path-to-blr> <source-dir>
set -uo pipefail
blr=${1:?usage: infer_thread_policy.sh <path-to-blr> <source-dir>}
src=${2:?}
# shellcheck source=tests/cli/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

# loads ARGS...: how many times the BLAS (libblas.so.3) is loaded while ARGS runs, and the
# timeout each image saw (the loader prints the environment of neither: the command's own JSON
# cannot show it, so a second load is the sign of the restart)
loads() {
  LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -cE 'file=libblas\.so\.3 \[0\];  generating link map'
}
train=(--train "$src/data/faithful.csv" --label waiting)
n=$(env -u OPENBLAS_THREAD_TIMEOUT bash -c "$(declare -f loads); loads $blr infer linreg ${train[*]}")
[ "$n" = 2 ] || fail "blr infer (timeout unset): the BLAS was loaded $n times, not twice (set, then again)"
n=$(OPENBLAS_THREAD_TIMEOUT=12 bash -c "$(declare -f loads); loads $blr infer linreg ${train[*]}")
[ "$n" = 1 ] || fail "blr infer (timeout 12 set by the user): the BLAS was loaded $n times, not once"
n=$(env -u OPENBLAS_THREAD_TIMEOUT bash -c "$(declare -f loads); loads $blr methods")
[ "$n" = 1 ] || fail "blr methods (no BLAS threads): the BLAS was loaded $n times, not once"
n=$(env -u OPENBLAS_THREAD_TIMEOUT bash -c "$(declare -f loads); loads $blr infer --help")
[ "$n" = 1 ] || fail "blr infer --help: the BLAS was loaded $n times, not once"
# the restarted run gives the same result as a run with the variable set by hand
env -u OPENBLAS_THREAD_TIMEOUT "$blr" infer linreg "${train[@]}" --json "$work/a.json" >/dev/null ||
  fail "blr infer linreg failed"
OPENBLAS_THREAD_TIMEOUT=4 "$blr" infer linreg "${train[@]}" --json "$work/b.json" >/dev/null ||
  fail "blr infer linreg (timeout set) failed"
cmp -s "$work/a.json" "$work/b.json" || fail "the restarted run's JSON differs from a direct run's"
finish
