#!/usr/bin/env python3
"""Start-up cost of the blr front and of its LibTorch part, as whole processes.

Usage: bench/startup.py BUILD_DIR [RUNS]

Times RUNS (default 20) runs of each command below, interleaved, and prints the median and the
fastest wall time of each, with the ratio of `blr infer logistic` on Pima to the LibTorch part
starting and doing nothing (`blr-torch --version`, the cost every Eigen command paid before the
split). Goal of issue 14: `blr infer logistic` on Pima <= 50 ms wall.
"""
import os
import statistics
import subprocess
import sys
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
blr = os.path.join(build, "blr")
part = os.path.join(build, "blr-torch")
data = os.path.join(source, "data")
commands = {
    "blr infer logistic (Pima)": [blr, "infer", "logistic", "--train", f"{data}/pima_train.csv",
                                  "--test", f"{data}/pima_test.csv", "--label", "type",
                                  "--positive", "Yes", "--standardize", "--prior-precision", "1"],
    "blr --version (front only)": [blr, "--version"],
    "blr-torch --version (LibTorch loaded)": [part, "--version"],
}
times = {name: [] for name in commands}
for _ in range(runs):
    for name, argv in commands.items():
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[name].append(time.perf_counter() - start)
print(f"{runs} runs each, interleaved; wall time per process")
for name, t in times.items():
    print(f"  {name:<40} median {1e3 * statistics.median(t):7.1f} ms   fastest {1e3 * min(t):7.1f} ms")
infer = statistics.median(times["blr infer logistic (Pima)"])
torch = statistics.median(times["blr-torch --version (LibTorch loaded)"])
print(f"blr infer logistic / LibTorch start-up: {infer / torch:.3f}")
print(f"goal blr infer logistic <= 50 ms: {'met' if infer <= 0.050 else 'not met'} "
      f"(median {1e3 * infer:.1f} ms)")
