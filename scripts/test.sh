#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (the README's test command).
# The SIMD kernels are also cross-compiled for aarch64 and their golden-bit
# tests run on NEON under qemu-user first (tests/cross/aarch64.sh), so one
# x86 machine checks the same-bits guarantee on both architectures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# The clang fuzzers of bundle_fuzz_smoke (not part of `all`), built here so
# that the test's time is fuzzing.
cmake --build build -j "$(nproc)" --target xwires_fuzzers
bash tests/cross/aarch64.sh build-aarch64
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
