#!/usr/bin/env bash
# Side-by-side training throughput: xwires profiles vs PyTorch (Debian's
# python3-torch, system BLAS and OpenBLAS), same model, batch and threads.
# Each measurement is the best of REPEATS runs (other load on the machine
# only ever slows a run down). PyTorch runs both with its default OpenMP
# wait policy and with OMP_WAIT_POLICY=PASSIVE, and keeps the better: its
# spinning OpenMP workers collapse when other processes share the cores.
# Prints one table row per arch.
#   bash bench/compare_train_throughput.sh [BUILD_DIR] [THREADS] [BATCH] [REPEATS]
set -euo pipefail
BUILD=${1:-build}
THREADS=${2:-2}
BATCH=${3:-128}
REPEATS=${4:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
ARCHS=${ARCHS:-"resnet20 vgg11 mlp"}

best() {  # best images_per_s of REPEATS runs of "$@"
  local b=0 v
  for _ in $(seq "$REPEATS"); do
    v=$("$@" | sed -n 's/.*images_per_s=\([0-9.]*\).*/\1/p')
    b=$(awk -v a="$b" -v c="$v" 'BEGIN{print (c>a)?c:a}')
  done
  echo "$b"
}

steps() { case "$1" in vgg11) echo "3 1" ;; mlp) echo "20 3" ;; *) echo "6 2" ;; esac; }

printf "%-9s %9s %9s %9s %11s %11s  %s\n" arch torch tf reference pytorch pytorch+ob "best/pytorch best/pytorch+ob"
for arch in $ARCHS; do
  read -r s w <<<"$(steps "$arch")"
  declare -A r=()
  for p in torch tf reference; do
    r[$p]=$(best "$BUILD/bench/train_throughput" --arch "$arch" --profile "$p" --threads "$THREADS" \
            --batch "$BATCH" --steps "$s" --warmup "$w")
  done
  peer() {  # best over both OpenMP wait policies
    local a c
    a=$(best /usr/bin/python3 "$HERE/peer_torch_throughput.py" --arch "$arch" --threads "$THREADS" \
        --batch "$BATCH" --steps "$s" --warmup "$w" "$@")
    c=$(OMP_WAIT_POLICY=PASSIVE best /usr/bin/python3 "$HERE/peer_torch_throughput.py" --arch "$arch" \
        --threads "$THREADS" --batch "$BATCH" --steps "$s" --warmup "$w" "$@")
    awk -v a="$a" -v c="$c" 'BEGIN{print (c>a)?c:a}'
  }
  pt=$(peer)
  ob=$(peer --blas openblas)
  top=$(printf "%s\n%s\n%s\n" "${r[torch]}" "${r[tf]}" "${r[reference]}" | sort -g | tail -1)
  printf "%-9s %9.1f %9.1f %9.1f %11.1f %11.1f  %.2f %.2f\n" "$arch" "${r[torch]}" "${r[tf]}" \
    "${r[reference]}" "$pt" "$ob" "$(awk -v a="$top" -v b="$pt" 'BEGIN{print a/b}')" \
    "$(awk -v a="$top" -v b="$ob" 'BEGIN{print a/b}')"
done
