#!/usr/bin/env bash
# Cross-compiles xwires' numerics core and its tests for aarch64 and runs the
# SIMD kernel tests under qemu-user, so that the NEON kernels are checked
# against the same golden literals as x86's AVX-512, AVX2 and SSE4 ones, and
# the accelerator emulation's tensor-core panels and rounding lanes against
# their scalar definitions bit for bit (accel_tests), and the kernels' fused
# multiply-add against libm's fmaf (NEON's instruction, the scalar emulation).
# oneTBB's worker pool crawls under qemu-user, so the run is pinned to one
# CPU (ParallelFor then runs serially) and the tests that ask for several
# threads are left to the native suite (XWIRES_TEST_THREADS=1). The build
# fills new kernel scratch with NaN (XWIRES_POISON_SCRATCH), so a NEON kernel
# that reads scratch it never wrote fails the golden bits instead of passing
# on whatever the memory held.
#   bash tests/cross/aarch64.sh [BUILD_DIR]   (default: build-aarch64)
# Installs what it needs (Debian's cross compiler, qemu-user, :arm64 libraries).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-aarch64}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PACKAGES=(g++-aarch64-linux-gnu qemu-user libtbb-dev:arm64 libhwy-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64
          zlib1g-dev:arm64 libeigen3-dev nlohmann-json3-dev libboost-math-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "aarch64: installing ${missing[*]}"
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DXWIRES_CORE_ONLY=ON -DXWIRES_NATIVE=OFF \
  -DXWIRES_BUILD_BENCH=OFF -DXWIRES_POISON_SCRATCH=ON \
  -DCMAKE_TOOLCHAIN_FILE=tests/cross/aarch64-toolchain.cmake \
  "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target kernels_tests core_tests layers_tests accel_tests
cd "$BUILD"
XWIRES_TEST_THREADS=1 taskset -c 0 ctest --output-on-failure --timeout 900 \
  -R 'KernelGolden|ScratchFloats|SimdTarget|TapGather|DirectEqualsDotOverPatches|Im2colWithoutPatchMatrix|AllAlgorithmsMatchDoubleReference|ReduceTest.(Known|Exact|Segmented)|MaxPoolTwoByTwo|DirectLanesOrders|ChannelStatisticsMatch|PhiloxTest.Ranges|Accel|FmaEmulation' 
