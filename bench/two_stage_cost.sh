#!/usr/bin/env bash
# Cost of the two-stage search for significant divergence (docs/significance.md,
# "The search") and the throughput of `xwires replicate`, on the main job's
# settings (`xwires search` with no arguments: simple_cnn width 0.5, 2000/1000
# synthetic images, torch vs tf, 16 subspaces x 3 proposals):
#  1. a plain search (objective abs_acc_diff: every proposal screened once);
#  2. the two-stage search (objective significant_diff, the default schedule)
#     with the same seed and the same number of screened proposals;
#  3. `xwires replicate --top R --replicas 5` on the plain search's dataset.
# The time budget is lifted (--max-seconds 1e6) so that both searches screen
# every planned proposal. The two searches run side by side (at the same
# time, so that a shared machine's load weighs on both alike; SEQUENTIAL=1
# runs one after the other). Prints CPU seconds (user + sys, what 2 busy
# cores would take in wall time / 2) and wall seconds of each, the
# two-stage / plain ratios (goal <= 2.0) and replicas per minute.
#
# The two searches' GPs propose different points (the two-stage one is
# steered by the replicas' LCBs), so their screenings differ in cost too,
# by more than the schedule's own cost when a few long trainings (many
# epochs at a small batch) land in one search and not the other. The
# two-stage search therefore also prints its workers' CPU time per stage
# ("worker CPU time: ..."): the screening of its own proposals against the
# replicas it added, the same proposals on both sides of the ratio (exact
# at one thread per job, as here by default).
# Usage: bash bench/two_stage_cost.sh [TRIALS_PER_SUBSPACE] [EXTRA SEARCH FLAGS...]
#   e.g. bash bench/two_stage_cost.sh 3 --train-limit 1000 --test-limit 500
# Environment: XWIRES (the binary, default build/xwires), JOBS (2),
# THREADS (2), SEED (0), REPLICATE_TOP (2). Runs ~10 CPU-minutes per search at
# the main job's settings.
set -euo pipefail
TPS=${1:-3}
shift || true
EXTRA=("$@")
JOBS=${JOBS:-2}
THREADS=${THREADS:-2}
SEED=${SEED:-0}
TOP=${REPLICATE_TOP:-2}
B=${XWIRES:-build/xwires}
WORK=$(mktemp -d /tmp/xwires_two_stage.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Runs a command; prints "cpu_s wall_s" of it (children included).
measure() {
  local out=$1
  shift
  /usr/bin/time -f "%U %S %e" -o "$out.time" "$@" > "$out.stdout" 2> "$out.stderr"
  awk '{printf "%.1f %.1f\n", $1 + $2, $3}' "$out.time"
}

COMMON=(search --seed "$SEED" --trials-per-subspace "$TPS" --max-seconds 1000000
        --jobs "$JOBS" --threads "$THREADS" "${EXTRA[@]}")
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ "${SEQUENTIAL:-0}" == 1 ]]; then
  measure "$WORK/plain" "$B" "${COMMON[@]}" --dataset "$WORK/plain.ds" \
    --objective abs_acc_diff > "$WORK/plain.m"
  measure "$WORK/two" "$B" "${COMMON[@]}" --dataset "$WORK/two.ds" > "$WORK/two.m"
else
  measure "$WORK/plain" "$B" "${COMMON[@]}" --dataset "$WORK/plain.ds" \
    --objective abs_acc_diff > "$WORK/plain.m" &
  measure "$WORK/two" "$B" "${COMMON[@]}" --dataset "$WORK/two.ds" > "$WORK/two.m" &
  wait
fi
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
read -r plain_cpu plain_wall < "$WORK/plain.m"
read -r two_cpu two_wall < "$WORK/two.m"
plain_n=$(grep -o '[0-9]* trials finished' "$WORK/plain.stdout" | cut -d' ' -f1)
two_n=$(grep -o '[0-9]* trials finished' "$WORK/two.stdout" | cut -d' ' -f1)
two_r=$(grep -o '[0-9]* replicas trained' "$WORK/two.stdout" | cut -d' ' -f1 || echo 0)
echo "plain search:     $plain_n screened, cpu ${plain_cpu} s, wall ${plain_wall} s"
echo "two-stage search: $two_n screened + ${two_r:-0} replicas, cpu ${two_cpu} s, wall ${two_wall} s"
awk -v a="$two_cpu" -v b="$plain_cpu" -v c="$two_wall" -v d="$plain_wall" \
  'BEGIN {printf "two-stage / plain: cpu %.2fx, wall %.2fx (goal <= 2.0x)\n", a / b, c / d}'
grep 'worker CPU time' "$WORK/two.stderr" || true
grep -A 12 'most divergent pairs' "$WORK/two.stdout" || true
grep 'verdicts:' "$WORK/two.stdout" || true

read -r rep_cpu rep_wall < <(measure "$WORK/rep" "$B" replicate "$WORK/plain.ds" --top "$TOP" \
  --replicas 5 --jobs "$JOBS" --threads "$THREADS")
reps=$((TOP * 2 * 5))
awk -v n="$reps" -v c="$rep_cpu" -v w="$rep_wall" \
  'BEGIN {printf "replicate: %d replicas, cpu %.1f s, wall %.1f s: %.1f replicas per wall minute, %.1f per CPU minute\n", n, c, w, 60 * n / w, 60 * n / c}'
