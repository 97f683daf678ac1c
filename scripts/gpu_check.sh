#!/usr/bin/env bash
# The GPU check (device machine: PyTorch 2.x with CUDA, no Debian dev packages). Prepare here:
#   mkdir -p build-gpu-debs && (cd build-gpu-debs && apt-get download libeigen3-dev libfmt-dev \
#     libfmt9 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev zlib1g-dev libboost1.74-dev \
#     libfast-float-dev)
# then run on the device with build-gpu-debs carried: `bash scripts/gpu_check.sh`. It unpacks the
# packages with dpkg -x, builds test_torch with the system's compiler (GPU_CXX, default
# /usr/bin/g++) against the machine's LibTorch (with line tables), runs the two tests that crashed
# under the wheel's LibTorch first, then the CUDA device tests (Devices*) and the rest of
# test_torch (LibTorch 2.x on the CPU; with libstdc++ preloaded if the first two crashed). Every
# run has a preloaded handler that prints the stack of a crash (glibc's backtrace, resolved with
# addr2line), after PRELOAD_FIRST when that is set (e.g. to libstdc++.so.6, the control run that
# found the std::filesystem crash). Logs go to $OUT.
set -uo pipefail
start=$(date +%s)
log() { echo "[$(( $(date +%s) - start ))s] $*"; }
deps=/tmp/deps; mkdir -p $deps
for d in build-gpu-debs/*.deb; do dpkg -x "$d" $deps; done
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
TP=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
python3 -c 'import torch;print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
g++ --version | head -1; cmake --version | head -1; which gdb ninja addr2line
# The crash reporter: prints the raw stack of SIGSEGV/SIGBUS/SIGABRT, then dies of the signal.
cat > /tmp/crash_stack.c <<'C'
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
static void report(int s) {
  void* frames[64];
  int n = backtrace(frames, 64);
  const char* m = "\n=== crash stack (signal) ===\n";
  if (write(2, m, strlen(m)) < 0) return;
  backtrace_symbols_fd(frames, n, 2);
  signal(s, SIG_DFL);
  raise(s);
}
__attribute__((constructor)) static void install(void) {
  struct sigaction a;
  memset(&a, 0, sizeof a);
  a.sa_handler = report;
  sigaction(SIGSEGV, &a, 0); sigaction(SIGBUS, &a, 0); sigaction(SIGABRT, &a, 0);
}
C
gcc -O1 -shared -fPIC -o /tmp/crash_stack.so /tmp/crash_stack.c || log "no crash reporter"
# Resolves "lib(+0xOFF)" and "lib(sym+0xOFF)" frames of a log to function and line.
resolve() {
  grep -oE '^[^ ]+\((\+0x[0-9a-f]+|[^)]*\+0x[0-9a-f]+)\)' "$1" | head -40 | while read -r f; do
    lib=${f%%(*}; inner=${f#*(}; inner=${inner%)}
    if [[ $inner == +* ]]; then echo "$(addr2line -f -C -i -e "$lib" "${inner#+}" | paste -sd' ') [$lib]";
    else echo "$(echo "${inner%+*}" | c++filt) +${inner##*+} [$(basename "$lib")]"; fi
  done
}
A=$deps/usr/lib/x86_64-linux-gnu
# The system's compiler, as a user of the wheel would build: the device's default CXX
# (/opt/gcc/bin/g++, a wrapper) finds only a static libstdc++, so programs it links carry their
# own copy beside the wheel's exported one and the link order cannot apply (stop 27).
cxx=${GPU_CXX:-/usr/bin/g++}
log "compiler $cxx: libstdc++ $($cxx -print-file-name=libstdc++.so)"
cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TP" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CUDA_HOST_COMPILER="$cxx" \
  -DEigen3_DIR=$deps/usr/share/eigen3/cmake -Dfmt_DIR=$A/cmake/fmt \
  -Dnlohmann_json_DIR=$deps/usr/share/cmake/nlohmann_json -DCLI11_DIR=$deps/usr/share/cmake/CLI11 \
  -DFastFloat_DIR=$deps/usr/lib/cmake/FastFloat \
  -DGTest_DIR=$A/cmake/GTest -DZLIB_INCLUDE_DIR=$deps/usr/include \
  -DZLIB_LIBRARY=$(ls /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1) \
  -DCMAKE_CXX_FLAGS="-I$deps/usr/include -g1" -DBLR_WITH_PYTHON=OFF -DBLR_BUILD_BENCH=OFF -DBLR_UNITY_BATCH=3 \
  > $OUT/configure.log 2>&1 || { log "configure failed"; tail -40 $OUT/configure.log; exit 1; }
log "configured"; grep -i "torch\|cuda" $OUT/configure.log | head -5
timeout ${BUILD_SECONDS:-360} cmake --build /tmp/b --target test_torch -j 16 -- -k > $OUT/build.log 2>&1
rc=$?; log "build rc=$rc"
if [ $rc -ne 0 ]; then grep -E "error" -A3 $OUT/build.log | head -80; exit 1; fi
cd /tmp/b
# Which C++ standard library and zlib symbols the wheel's LibTorch exports: a definition there
# takes precedence over libstdc++'s for every library loaded after it.
torch_lib=$(dirname "$(python3 -c 'import torch;print(torch.__file__)')")/lib/libtorch_cpu.so
nm -D --defined-only "$torch_lib" | c++filt > /tmp/torch_exports.txt
log "libtorch_cpu.so exports $(grep -c 'std::filesystem' /tmp/torch_exports.txt) std::filesystem, $(grep -c 'std::' /tmp/torch_exports.txt) std:: and $(grep -cwE 'crc32|gzopen|gzwrite|deflate|inflate' /tmp/torch_exports.txt) zlib symbols"
grep 'std::filesystem' /tmp/torch_exports.txt | head -8
ldd ./test_torch | grep -nE 'stdc\+\+|torch_cpu|libz' 
readelf -d ./test_torch | grep NEEDED | head -3
stdcxx=$(ldd ./test_torch | awk '/libstdc\+\+/ {print $3}')
probe() {  # name, seconds, gtest filter, extra environment...
  local name=$1 seconds=$2 filter=$3; shift 3
  env "$@" LD_PRELOAD="${PRELOAD_FIRST:-} /tmp/crash_stack.so" timeout "$seconds" ./test_torch \
    --gtest_filter="$filter" > $OUT/$name.log 2>&1
  log "$name rc=$?: $(grep -cE '^\[       OK' $OUT/$name.log) ok, $(grep -cE '^\[  FAILED  \] [A-Za-z]' $OUT/$name.log) failed lines"
  grep -E '^\[  FAILED  \]|trial|Failure|crash stack|PASSED|SKIPPED \]' $OUT/$name.log | head -30
  if grep -q 'crash stack' $OUT/$name.log; then
    grep -B3 'crash stack' $OUT/$name.log | head -8; resolve $OUT/$name.log
  fi
}
# These two crashed (SIGSEGV in std::filesystem) before CMakeLists.txt named libstdc++ first on
# the link line; with PRELOAD_FIRST=<libstdc++.so.6> they passed (2026-11-26).
# The link command and the order of the program's needed libraries (libstdc++ must precede
# LibTorch).
for f in CMakeFiles/test_torch.dir/link.txt build.ninja; do [ -f $f ] && log "generator file $f"; done
link_cmd=$(cat CMakeFiles/test_torch.dir/link.txt 2>/dev/null)
echo "link: ${link_cmd:0:700}"
readelf -d ./test_torch | grep NEEDED | sed 's/.*Shared library: //' | paste -sd' '
probe filesystem 60 'TrainCheckpoint.ResumeIsBitwiseAdamW:TrainData.IdxRoundTrip'
probe devices 90 'Devices*'
# The rest of test_torch, with libstdc++ preloaded when the link order alone does not hold.
grep -q 'crash stack' $OUT/filesystem.log && export PRELOAD_FIRST=$stdcxx
probe rest ${REST_SECONDS:-200} '-Devices*'
log done
