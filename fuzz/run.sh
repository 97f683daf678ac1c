#!/usr/bin/env bash
# `make fuzz FUZZ_SECONDS=N`: builds the libFuzzer harnesses (fuzz/build.sh) and runs each for N
# seconds, one after the other, under `nice`. Stops at the first harness that finds a bug.
# Usage: fuzz/run.sh SECONDS [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-60}"
build="${2:-build-fuzz}"
bash "$here/build.sh" "$build"
harnesses=$(sed -n 's/^set(BLR_FUZZ_HARNESSES \(.*\))$/\1/p' "$here/harnesses.cmake")
for h in checkpoint tensor_file torchscript_model; do  # built when LibTorch is installed
  if [ -x "$build/fuzz_$h" ]; then harnesses="$harnesses $h"; fi
done
for h in $harnesses; do
  echo "== fuzz_$h: $seconds s" >&2
  nice -n 10 bash "$here/run_one.sh" "$build" "$h" -max_total_time="$seconds"
done
