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
  libpng-dev  # reads its screenshots (tests/api/report_test.cc)
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Node.js and npm run TensorFlow.js for `xwires conformance` and
# tests/conformance (npm ci below). Debian's packages only where no node/npm
# is on PATH: a machine whose Node.js came from another nodejs package (which
# bundles npm) cannot take Debian's npm beside it.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: done"
fi

# TensorFlow.js (npm @tensorflow/tfjs 4.22.0, pure JS, the versions pinned by
# tests/conformance/package-lock.json) for the conformance checks; installed
# once into tests/conformance/node_modules, which nothing else reads, and
# reinstalled only when the lock file changes. The tests need no network.
# --prefer-offline takes the packages from npm's cache when they are there
# (a machine that ran this once installs again without the registry). A
# failure stops the setup, as a missing Debian package does: a suite whose
# TF.js checks were skipped would not notice the drift they guard against.
CONF="$(cd "$(dirname "$0")/.." && pwd)/tests/conformance"
STAMP="$CONF/node_modules/.xwires-lock"
if ! cmp -s "$CONF/package-lock.json" "$STAMP" 2>/dev/null; then
  echo "setup: npm ci in tests/conformance (TensorFlow.js)"
  npm ci --prefix "$CONF" --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null
  cp "$CONF/package-lock.json" "$STAMP"
fi
