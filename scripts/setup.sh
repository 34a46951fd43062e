#!/usr/bin/env bash
# Installs every Debian package xwires needs. Non-interactive and idempotent:
# re-running it only refreshes the package lists and installs what is missing.
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config
  libhdf5-dev libsqlite3-dev libsqlitecpp-dev libeigen3-dev libtbb-dev
  nlohmann-json3-dev libfccp-dev libarchive-dev libzstd-dev zlib1g-dev libssl-dev libcli11-dev
  libopenmpi-dev openmpi-bin libnlopt-cxx-dev
  libboost-math-dev  # Student t and hypergeometric distributions (src/stats)
  libhwy-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev
  python3 python3-numpy python3-h5py python3-pandas python3-sklearn
  python3-scipy python3-statsmodels  # reference values of the significance tests
  pybind11-dev python3-dev python3-pytest  # the Python package (python/) and its tests
  python3-torch python3-torchvision  # xwires.Dataset.torch_model and its test
  chromium  # headless rendering check of `xwires report` (tests/api/report_test.cc)
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
