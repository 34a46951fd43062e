#!/usr/bin/env bash
# Builds the fuzzers (bundle manifest and archive, query filter) with clang
# (tests/fuzz/CMakeLists.txt) into BUILD_DIR, or brings them up to date there
# (the main build has built them), and runs each for SECONDS on its seed
# corpus. Exits non-zero on a crash, leak, sanitizer report or build
# failure. Used by ctest (bundle_fuzz_smoke); for a longer local run pass a
# larger SECONDS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: run.sh BUILD_DIR [SECONDS]}"
secs="${2:-15}"
cxx="$(command -v clang++-14 || command -v clang++ || true)"
cc="$(command -v clang-14 || command -v clang || true)"
if [ -z "$cxx" ] || [ -z "$cc" ]; then
  echo "run.sh: clang not found; run scripts/setup.sh (clang-14, libclang-rt-14-dev)" >&2
  exit 1
fi
mkdir -p "$build"
# The build target xwires_fuzzers (tests/dataset/bundle.cmake; scripts/test.sh
# builds it) configures and builds BUILD_DIR:
# then this build only checks that the fuzzers are up to date.
configure=(cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release
           -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc")
if [ -f "$build/CMakeCache.txt" ]; then configure=(true); fi
if ! { "${configure[@]}" && cmake --build "$build" -j 2; } >"$build/build.log" 2>&1; then
  cat "$build/build.log" >&2
  echo "run.sh: building the fuzzers failed" >&2
  exit 1
fi
for f in fuzz_manifest fuzz_archive fuzz_filter; do
  work="$build/corpus-$f"   # new inputs go here; the seeds stay untouched
  mkdir -p "$work"
  args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$build/crash-$f-")
  if [ -f "$here/$f.dict" ]; then args+=(-dict="$here/$f.dict"); fi
  echo "== $f: ${secs}s"
  if ! "$build/$f" "${args[@]}" "$work" "$here/corpus/$f" >"$build/$f.log" 2>&1; then
    cat "$build/$f.log" >&2
    echo "run.sh: $f found a failure (input saved as $build/crash-$f-*)" >&2
    exit 1
  fi
  tail -n 8 "$build/$f.log"
done
