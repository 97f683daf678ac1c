#!/usr/bin/env bash
# Installs the Debian bookworm packages blr needs, if any is missing.
# As root it runs apt-get; otherwise it prints the exact command and exits non-zero.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libboost-dev
  libfast-float-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libtorch-dev libgloo-dev libopenblas0-pthread
  dataset-fashion-mnist fortunes gnuplot-nox
  python3-torch python3-dev pybind11-dev python3-pytest python3-numpy
  python3-venv python3-pip python3-setuptools python3-wheel
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
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
