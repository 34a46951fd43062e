#!/usr/bin/env bash
# Side-by-side training throughput: xwires profiles vs PyTorch (Debian's
# python3-torch, system BLAS and OpenBLAS), same model, batch and threads.
# Each measurement is the best of REPEATS runs (other load on the machine
# only ever slows a run down), and the runs are interleaved: every round
# runs each xwires profile and each PyTorch variant once, so that a machine
# whose speed drifts (shared hosts, clock boost) slows both sides alike.
# PyTorch runs both with its default OpenMP wait policy and with
# OMP_WAIT_POLICY=PASSIVE, and keeps the better: its spinning OpenMP
# workers collapse when other processes share the cores.
# Prints one table row per arch: images/s of each xwires profile and of the
# better PyTorch, then each profile's ratio to the better PyTorch, then the
# median over rounds of each round's ratio (both sides measured minutes
# apart, so a machine whose speed drifts moves both alike), then the same
# median against one fixed PyTorch configuration: the one of the four (BLAS
# x wait policy) whose runs have the best median, named in the row. The
# first two figures compare one run of ours with the best of PyTorch's four
# runs of the round, so where two configurations run alike PyTorch takes
# the better of two samples and ours one; the last compares run with run.
# The xwires
# kernels run on the CPU's best SIMD target, or on XWIRES_SIMD_TARGET (e.g.
# AVX2 on an AVX-512 machine, to measure that CPU class's code path).
# PyTorch is then held to the same class (PEER_ISA, default: the class of
# XWIRES_SIMD_TARGET): oneDNN through DNNL_MAX_CPU_ISA, ATen's vectorized
# kernels through ATEN_CPU_CAPABILITY and OpenBLAS through OPENBLAS_CORETYPE,
# so that both sides run the code a CPU of that class would run. PEER_ISA=
# native leaves PyTorch on the machine's best ISA.
# The peer needs Debian's python3-torch, python3-torchvision (resnet), which
# scripts/setup.sh installs for the Python package, and libopenblas0-pthread
# (the OpenBLAS column), which it leaves out because only this benchmark
# uses it.
#   bash bench/compare_train_throughput.sh [BUILD_DIR] [THREADS] [BATCH] [REPEATS]
set -euo pipefail
BUILD=${1:-build}
THREADS=${2:-2}
BATCH=${3:-128}
REPEATS=${4:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
ARCHS=${ARCHS:-"resnet20 vgg11 simple_cnn mlp"}

rate() {  # images_per_s of one run of "$@" (CPU_RATE=1: images per CPU second)
  if [[ -n "${CPU_RATE:-}" ]]; then
    "$@" | sed -n 's/.*cpu_ms_per_image=\([0-9.]*\).*/\1/p' | awk '{printf "%.2f\n", 1000 / $1}'
  else
    "$@" | sed -n 's/.* images_per_s=\([0-9.]*\).*/\1/p'
  fi
}
max() { awk -v a="$1" -v b="$2" 'BEGIN{print (b>a)?b:a}'; }

# Steps and warm-up steps per run: about 1-8 s of training each (mlp's 20
# steps took 0.2 s, within the noise of a shared machine; 100 still swung
# 15-20% between runs at 18000 images/s).
steps() { case "$1" in vgg11) echo "5 1" ;; mlp) echo "300 10" ;; simple_cnn) echo "40 5" ;; *) echo "8 2" ;; esac; }

# Accelerator profiles against the fp32 profile each derives from
# (ACCEL_PROFILES="torch-a100:torch tf-a100:tf ..."): no PyTorch; per round
# each pair runs back to back (base, then accelerator profile), and each row
# gives both best-of rates, their ratio and the median over rounds of the
# per-round ratio. ACCEL_STEPS="arch:steps:warmup ..." overrides steps() for
# the slow emulated products (default: resnet20 2:1, vgg11 1:1, mlp 100:10).
# CPU_RATE=1 rates each run by its CPU time instead of the wall clock
# (train_throughput's cpu_ms_per_image): on a machine that other work
# loads, a one-thread run's CPU time is its own work, so the ratios move
# far less between rounds; the columns are then images per CPU second.
if [[ -n "${ACCEL_PROFILES:-}" ]]; then
  accel_steps() {
    local spec
    for spec in ${ACCEL_STEPS:-resnet20:2:1 vgg11:1:1 mlp:100:10 simple_cnn:10:2}; do
      IFS=: read -r a st wu <<<"$spec"
      if [[ "$a" == "$1" ]]; then echo "$st $wu"; return; fi
    done
    steps "$1"
  }
  echo "threads $THREADS, batch $BATCH, rounds $REPEATS; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf "%-10s %-16s %9s %9s %7s %7s\n" arch profile base/s accel/s best median
  for arch in $ARCHS; do
    read -r s w <<<"$(accel_steps "$arch")"
    for pair in $ACCEL_PROFILES; do
      base=${pair#*:}; acc=${pair%%:*}
      rb=0; ra=0; ratios=""
      for _ in $(seq "$REPEATS"); do
        b=$(rate "$BUILD/bench/train_throughput" --arch "$arch" --profile "$base" \
            --threads "$THREADS" --batch "$BATCH" --steps "$s" --warmup "$w")
        a=$(rate "$BUILD/bench/train_throughput" --arch "$arch" --profile "$acc" \
            --threads "$THREADS" --batch "$BATCH" --steps "$s" --warmup "$w")
        rb=$(max "$rb" "$b"); ra=$(max "$ra" "$a")
        ratios+=" $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.4f", a/b}')"
      done
      med=$(tr ' ' '\n' <<<"$ratios" | sed '/^$/d' | sort -g |
            awk '{v[NR]=$1} END{printf "%.3f", NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
      printf "%-10s %-16s %9.1f %9.1f %7.3f %7s\n" "$arch" "$acc/$base" "$rb" "$ra" \
        "$(awk -v a="$ra" -v b="$rb" 'BEGIN{printf "%.3f", a/b}')" "$med"
    done
  done
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

# PyTorch's ISA cap: "native", AVX2 or SSE4 (also AVX3*, which equals native
# on an AVX-512 machine).
peer_isa=${PEER_ISA:-${XWIRES_SIMD_TARGET:-native}}
case "$peer_isa" in
  native | AVX3*) peer_env=() ;;
  AVX2) peer_env=(DNNL_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Haswell) ;;
  SSE4 | SSSE3 | SSE2) peer_env=(DNNL_MAX_CPU_ISA=SSE41 ATEN_CPU_CAPABILITY=default \
                                 OPENBLAS_CORETYPE=Nehalem) ;;
  *) echo "PEER_ISA: unknown class '$peer_isa' (native, AVX2 or SSE4)" >&2; exit 2 ;;
esac

target=$("$BUILD/bench/train_throughput" --arch mlp --profile tf --threads 1 --batch 8 --steps 1 \
         --warmup 0 | sed -n 's/.*target=\([A-Za-z0-9_+]*\).*/\1/p')
echo "xwires kernels: hwy:$target; PyTorch ISA: $peer_isa${peer_env:+ (${peer_env[*]})};" \
  "threads $THREADS, batch $BATCH, best of $REPEATS"
printf "%-10s %9s %9s %9s %9s %9s  %s\n" arch torch tf reference pytorch pytorch+ob \
  "torch/pt  tf/pt  ref/pt (pt = better PyTorch) | median of rounds | same vs one config"
for arch in $ARCHS; do
  read -r s w <<<"$(steps "$arch")"
  declare -A r=([torch]=0 [tf]=0 [reference]=0 [pt]=0 [ob]=0)
  peer() {
    env ${peer_env[@]+"${peer_env[@]}"} /usr/bin/python3 "$HERE/peer_torch_throughput.py" \
      --arch "$arch" --threads "$THREADS" \
      --batch "$BATCH" --steps "$s" --warmup "$w" "$@"
  }
  # Each run's images/s in round order: ours per profile, PyTorch's per
  # configuration (sys, sys+passive, ob, ob+passive), and the best of
  # PyTorch's four runs of each round (best).
  declare -A runs=([torch]="" [tf]="" [reference]="" [sys]="" [sys+passive]="" [ob]=""
                   [ob+passive]="" [best]="")
  for _ in $(seq "$REPEATS"); do
    declare -A cur=()
    for p in torch tf reference; do
      cur[$p]=$(rate "$BUILD/bench/train_throughput" --arch "$arch" --profile "$p" \
                --threads "$THREADS" --batch "$BATCH" --steps "$s" --warmup "$w")
      r[$p]=$(max "${r[$p]}" "${cur[$p]}")
    done
    # PyTorch: best over both OpenMP wait policies, system BLAS and OpenBLAS.
    pt1=$(rate peer)
    pt2=$(OMP_WAIT_POLICY=PASSIVE rate peer)
    ob1=$(rate peer --blas openblas)
    ob2=$(OMP_WAIT_POLICY=PASSIVE rate peer --blas openblas)
    r[pt]=$(max "${r[pt]}" "$(max "$pt1" "$pt2")")
    r[ob]=$(max "${r[ob]}" "$(max "$ob1" "$ob2")")
    runs[sys]+=" $pt1"; runs[sys+passive]+=" $pt2"; runs[ob]+=" $ob1"; runs[ob+passive]+=" $ob2"
    for p in torch tf reference; do runs[$p]+=" ${cur[$p]}"; done
    # Each profile's ratio to the round's best PyTorch: runs minutes apart
    # see the machine alike, so their median follows drift that the best-of
    # columns (each side's luckiest run) do not.
    runs[best]+=" $(max "$(max "$pt1" "$pt2")" "$(max "$ob1" "$ob2")")"
  done
  median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
             awk '{v[NR]=$1} END{printf "%.2f", NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
  better=$(max "${r[pt]}" "${r[ob]}")
  # PyTorch's configuration with the best median, and each profile's median
  # over rounds of its run against that configuration's run of the round.
  cfg=sys
  for c in sys+passive ob ob+passive; do
    if awk -v a="$(median "${runs[$c]}")" -v b="$(median "${runs[$cfg]}")" 'BEGIN{exit !(a>b)}'
    then cfg=$c; fi
  done
  # Per-round ratios of profile $1's runs to the runs of $2 (a PyTorch key).
  paired() { paste <(tr ' ' '\n' <<<"${runs[$1]}" | sed '/^$/d') \
                   <(tr ' ' '\n' <<<"${runs[$2]}" | sed '/^$/d') |
             awk '{printf " %.4f", $1/$2}'; }
  ratio() { awk -v a="$1" -v b="$better" 'BEGIN{printf "%.2f", a/b}'; }
  printf "%-10s %9.1f %9.1f %9.1f %9.1f %9.1f  %5s %6s %6s | %s %s %s | %s %s %s (%s)\n" \
    "$arch" "${r[torch]}" "${r[tf]}" "${r[reference]}" "${r[pt]}" "${r[ob]}" \
    "$(ratio "${r[torch]}")" "$(ratio "${r[tf]}")" "$(ratio "${r[reference]}")" \
    "$(median "$(paired torch best)")" "$(median "$(paired tf best)")" \
    "$(median "$(paired reference best)")" "$(median "$(paired torch "$cfg")")" \
    "$(median "$(paired tf "$cfg")")" "$(median "$(paired reference "$cfg")")" "$cfg"
done
