#!/usr/bin/env bash
# The GPU check (device machine: PyTorch 2.x with CUDA, no Debian dev packages). Prepare here:
#   mkdir -p build-gpu-debs && (cd build-gpu-debs && apt-get download libeigen3-dev libfmt-dev \
#     libfmt9 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev zlib1g-dev libboost1.74-dev \
#     libfast-float-dev)
# then run on the device with build-gpu-debs carried: `bash scripts/gpu_check.sh`. It unpacks the
# packages with dpkg -x, builds test_torch against the machine's LibTorch, runs the CUDA device
# tests (Devices*) and the rest of test_torch (LibTorch 2.x on the CPU). Logs go to $OUT.
set -uo pipefail
start=$(date +%s)
log() { echo "[$(( $(date +%s) - start ))s] $*"; }
deps=/tmp/deps; mkdir -p $deps
for d in build-gpu-debs/*.deb; do dpkg -x "$d" $deps; done
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
TP=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
python3 -c 'import torch;print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
g++ --version | head -1; cmake --version | head -1
A=$deps/usr/lib/x86_64-linux-gnu
cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TP" \
  -DEigen3_DIR=$deps/usr/share/eigen3/cmake -Dfmt_DIR=$A/cmake/fmt \
  -Dnlohmann_json_DIR=$deps/usr/share/cmake/nlohmann_json -DCLI11_DIR=$deps/usr/share/cmake/CLI11 \
  -DFastFloat_DIR=$deps/usr/lib/cmake/FastFloat \
  -DGTest_DIR=$A/cmake/GTest -DZLIB_INCLUDE_DIR=$deps/usr/include \
  -DZLIB_LIBRARY=$(ls /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1) \
  -DCMAKE_CXX_FLAGS="-I$deps/usr/include" -DBLR_WITH_PYTHON=OFF -DBLR_BUILD_BENCH=OFF \
  > $OUT/configure.log 2>&1 || { log "configure failed"; tail -40 $OUT/configure.log; exit 1; }
log "configured"; grep -i "torch\|cuda" $OUT/configure.log | head -5
timeout 330 cmake --build /tmp/b --target test_torch -j 16 -- -k > $OUT/build.log 2>&1
rc=$?; log "build rc=$rc"
if [ $rc -ne 0 ]; then grep -E "error" -A3 $OUT/build.log | head -80; exit 1; fi
cd /tmp/b
timeout 60 ./test_torch --gtest_filter='Devices*' > $OUT/devices.log 2>&1; grep -E 'OK \]|FAILED|PASSED' $OUT/devices.log | tail -20
log "devices done"
timeout 150 ./test_torch --gtest_filter='-Devices*:TrainCheckpoint.ResumeIsBitwiseAdamW' > $OUT/rest.log 2>&1; log "rest rc=$?"; timeout 30 ./test_torch --gtest_filter='TrainCheckpoint.ResumeIsBitwiseAdamW' > $OUT/adamw.log 2>&1; log "adamw rc=$?"; tail -5 $OUT/adamw.log
grep -E "PASSED|FAILED|SKIPPED" $OUT/rest.log | tail -20
