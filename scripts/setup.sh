#!/usr/bin/env bash
# Installs the Debian bookworm packages blr needs, if any is missing.
# As root it runs apt-get; otherwise it prints the exact command and exits non-zero.
#
# Usage: scripts/setup.sh [all|demo] [--check|--list]
#   all (the default): everything the build and the whole test suite use.
#   demo: what `make demo` builds and runs: the C++ build, LibTorch, GoogleTest (the build folder's
#         tests are configured with it), Fashion-MNIST and the Python package (python3-torch,
#         pybind11: a Python user needs only `make demo`); not the libFuzzer harnesses', the
#         Python tests' or the language model's data (clang, pytest, python3-build, fortunes).
#         `make test` installs the rest and configures the build folder again, so that nothing it
#         needs is skipped.
#   --check: install nothing; exit 0 when every package of the profile is installed, 1 otherwise.
#   --list: print the profile's packages, one per line (scripts/package_footprint.py reads them).
set -euo pipefail
profile=${1:-all}
check=${2:-}
if [ -n "$check" ] && [ "$check" != --check ] && [ "$check" != --list ]; then
  echo "setup.sh: unknown option '$check' (--check or --list)." >&2
  exit 2
fi
demo_packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libboost-dev
  libfast-float-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libtorch-dev libgloo-dev libopenblas0-pthread libblas-dev
  dataset-fashion-mnist gnuplot-nox
  python3-torch python3-dev pybind11-dev python3-numpy
)
test_packages=(
  fortunes
  python3-pytest
  python3-venv python3-pip python3-setuptools python3-wheel python3-build
  clang libclang-rt-14-dev
)
case $profile in
  all) packages=("${demo_packages[@]}" "${test_packages[@]}") ;;
  demo) packages=("${demo_packages[@]}") ;;
  *) echo "setup.sh: unknown profile '$profile' (all or demo)." >&2; exit 2 ;;
esac
if [ "$check" = --list ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ -n "$check" ]; then
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "blr needs these Debian packages: ${missing[*]}" >&2
  echo "Install them with:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "Installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
