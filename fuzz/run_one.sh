#!/usr/bin/env bash
# Runs one libFuzzer harness from its seed corpus (fuzz/corpus/<harness>/); new inputs are kept
# in BUILD_DIR/corpus/<harness>/ and crashes written to BUILD_DIR/artifacts/<harness>/, never
# into the source tree. Any crash, leak or sanitizer report makes it exit non-zero.
# With BLR_FUZZ_FRESH=1 (ctest) new inputs go to a fresh folder that is removed afterwards, so
# that a run with a fixed -seed is the same every time.
# Usage: fuzz/run_one.sh BUILD_DIR HARNESS [libFuzzer flags...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
harness="$2"
shift 2
corpus="$build/corpus/$harness"
if [ "${BLR_FUZZ_FRESH:-0}" = 1 ]; then
  corpus="$(mktemp -d)"
  trap 'rm -rf "$corpus"' EXIT
fi
mkdir -p "$corpus" "$build/artifacts/$harness"
extra=()
if [ "$harness" = checkpoint ] || [ "$harness" = tensor_file ] ||
   [ "$harness" = torchscript_model ]; then
  # LibTorch 1.13 (Debian, not instrumented) leaks when a payload is not a valid archive, and could
  # allocate whatever an archive claims before the archive check (a 14 KB checkpoint: 2 GB; a 1 KB
  # torch.save file: 24 GB; fuzz/corpus/checkpoint/, fuzz/corpus/tensor_file/oom-* and
  # docs/reliability.md). Leaks of memory allocated with LibTorch on the stack are suppressed
  # (fuzz/lsan_libtorch.supp), ours are reported; an allocation over 512 MB is counted as an
  # out-of-memory and the run goes on (fork mode); crashes and sanitizer reports still stop it.
  extra+=(-detect_leaks=1 -malloc_limit_mb=512 -rss_limit_mb=1536 -fork=1 -ignore_ooms=1)
  export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/lsan_libtorch.supp"
fi
"$build/fuzz_$harness" -artifact_prefix="$build/artifacts/$harness/" -print_final_stats=1 \
  "${extra[@]}" "$@" "$corpus" "$here/corpus/$harness"
