#!/usr/bin/env bash
# Calibration of `xwires replicate`'s verdicts (docs/significance.md):
#  A/A: `torch` against a copy of itself under another name (its own name and
#       Philox stream, every knob equal) over N small mlp trials (1000/1000
#       synthetic images, 3 epochs, lr 0.05-0.2, adam_eps 0.5); the share of
#       `significant` verdicts must stay <= 0.10 (nominal 0.05).
#  injected effect: `torch` against a copy differing only in Adam's eps
#       placement (Keras' eps-hat), at adam_eps 0.5 (a large systematic
#       effect: expect `significant`) and 1e-8 with one short epoch (expect
#       mostly not `significant`).
# The suite runs a lean version of both on every build:
# tests/api/replicate_calibration_test.cc (label `calibration`; 40 A/A trials
# with seed and with ulp replicas, K = 4, known verdict counts; measured
# shares in docs/significance.md, "Calibration": 2/40 = 0.050 with seed,
# 0/40 with ulp, 2026-11-28, commit f266330, Intel Xeon @ 2.50GHz, AVX-512).
# This script is the larger run (K = 5, 3 epochs, 1000 images per split).
# Usage: bash bench/replicate_calibration.sh [N] [FAMILY]   (defaults 40, seed)
# Runs a few minutes on 2 cores.
# Environment: XWIRES (the binary, default build/xwires), K (replicas, 5),
# JOBS (2), THREADS (2), AA_ONLY (1: skip the injected effect). Prints the
# verdict counts and the shares.
set -euo pipefail
N=${1:-40}
FAMILY=${2:-seed}
K=${K:-5}
JOBS=${JOBS:-2}
THREADS=${THREADS:-2}
B=${XWIRES:-build/xwires}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/xwires_calibration.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

/usr/bin/python3 - "$ROOT/trainers/profiles/torch.json" "$WORK" <<'EOF'
import json, sys
torch = json.load(open(sys.argv[1]))
aa = dict(torch, name="torch_aa", rng_stream="torch_aa")
json.dump(aa, open(sys.argv[2] + "/torch_aa.json", "w"), indent=2)
eps = json.loads(json.dumps(torch))
eps["name"] = "torch_epshat"
eps["adam"]["variant"] = "keras"
json.dump(eps, open(sys.argv[2] + "/torch_epshat.json", "w"), indent=2)
EOF

TINY="--arch mlp --width 0.25 --batch-size 32 --train-limit 1000 --test-limit 1000 --threads $THREADS --quiet"
LRS=(0.05 0.1 0.2)

make_trials() {  # dataset, profile B, adam_eps, epochs, count
  local ds=$1 other=$2 eps=$3 epochs=$4 n=$5
  for i in $(seq 1 "$n"); do
    local lr=${LRS[$(( (i - 1) % ${#LRS[@]} ))]}
    "$B" train $TINY --epochs "$epochs" --lr "$lr" --adam-eps "$eps" --seed "$i" \
      --profiles "torch,$other" --dataset "$ds" > /dev/null
  done
}

verdicts() {  # dataset -> "significant within_noise ..." counts
  "$B" replicate "$1" --where "id > 0" --replicas "$K" --perturb "$FAMILY" --jobs "$JOBS" \
    --threads "$THREADS" --quiet > "$1.out"
  awk 'NR > 2 {print $NF}' "$1.out" | sort | uniq -c | tr '\n' ' '
  echo
}

share() {  # dataset -> share of significant verdicts
  awk 'NR > 2 {n++; if ($NF == "significant") s++} END {printf "%d/%d = %.3f\n", s, n, s / n}' "$1.out"
}

start=$(date +%s)
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); family $FAMILY, K = $K"
make_trials "$WORK/aa" "$WORK/torch_aa.json" 0.5 3 "$N"
echo "A/A (torch vs torch_aa, $N trials): $(verdicts "$WORK/aa")"
echo "A/A significant share: $(share "$WORK/aa")"
if [ "${AA_ONLY:-0}" = 1 ]; then
  echo "wall: $(( $(date +%s) - start )) s"
  exit 0
fi
make_trials "$WORK/eps_big" "$WORK/torch_epshat.json" 0.5 3 10
echo "eps placement at adam_eps 0.5 (10 trials): $(verdicts "$WORK/eps_big")"
echo "  significant share: $(share "$WORK/eps_big")"
make_trials "$WORK/eps_small" "$WORK/torch_epshat.json" 1e-8 1 10
echo "eps placement at adam_eps 1e-8, 1 epoch (10 trials): $(verdicts "$WORK/eps_small")"
echo "  significant share: $(share "$WORK/eps_small")"
echo "wall: $(( $(date +%s) - start )) s"
