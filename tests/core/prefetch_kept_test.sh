#!/usr/bin/env bash
# The implicit-GEMM drivers' software prefetches are in the compiled code.
# They change no bits, so no other test notices when the compiler drops
# them, as GCC 12 did once (PrefetchSlotOutputs, implicit_internal.h).
# Per SIMD target compiled, the driver body of the exact tiles
# (conv_implicit_exact.cc) and of the im2col tiles (conv_implicit.cc) must
# hold at least 3 prefetch instructions: the next image's source, plus the
# next slots' outputs (two per output row, unrolled or in a loop).
#   prefetch_kept_test.sh OBJDUMP OBJECT...   (the xwires_simd objects)
set -euo pipefail
objdump=$1
shift
fail=0
check() {  # check OBJECT FUNCTION
  local listing targets count
  listing=$("$objdump" -d -C --no-show-raw-insn "$1")
  targets=$(grep -oE "<xw::kernels::N_[A-Z0-9_]+::$2\(" <<<"$listing" |
              sed -E 's/.*::(N_[A-Z0-9_]+)::.*/\1/' | sort -u || true)
  if [[ -z $targets ]]; then
    echo "FAIL: no $2 in $1"
    fail=1
    return
  fi
  for t in $targets; do
    # Every body named after the target's driver: the function, its image
    # lambda and the std::function handler it may be inlined into.
    count=$(awk -v name="::$t::$2(" '
      /^[0-9a-f]+ </ { body = index($0, name) > 0; next }
      body && /prefetch/ { n++ }
      END { print n + 0 }' <<<"$listing")
    if ((count < 3)); then
      echo "FAIL: $t::$2's driver has $count prefetch instructions (at least 3)"
      fail=1
    else
      echo "ok: $t::$2: $count prefetch instructions"
    fi
  done
}
found=0
for o in "$@"; do
  case "$o" in
    */conv_implicit_exact.cc.o) check "$o" ExactPatchGemmT; found=$((found + 1)) ;;
    */conv_implicit.cc.o) check "$o" ImplicitPatchGemmT; found=$((found + 1)) ;;
  esac
done
if ((found != 2)); then
  echo "FAIL: expected the objects of conv_implicit_exact.cc and conv_implicit.cc, got $found"
  fail=1
fi
exit $fail
