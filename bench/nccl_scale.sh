#!/usr/bin/env bash
# bench/nccl_scale.sh: NCCL's kernel at scale, beside the goals of issue 37
# (item 3): BERT-large's gradients in one bucket over 256 A100 GPUs with
# NCCL's tuner (bench/nccl_bert256.ini, under 60 s: the issue's "~670 MB",
# bf16 gradients, and the model's fp32 ones, 1.34 GB) and a 4 GiB
# allreduce with nccl-tree over 64 H100 GPUs (bench/nccl_tree64.ini,
# under 20 s); a 4 GiB allreduce on NCCL's rings over 64 A100 GPUs
# (bench/nccl_ring64.ini, the tree's goal: rings across machines jump);
# and the same allreduce with CollNet's chain over the H100 GPUs on SHARP
# switches (bench/nccl_collnet64.ini, the tree's goal) and with NVLS's tree
# (bench/nccl_tree64.ini with NCCL's nvls-tree forced, the tree's goal).
#
#   bench/nccl_scale.sh [RUNS]     (after ./dev.sh build; RUNS default 3)
#
# For each point: gradsim's wall time with fast-forward (median of RUNS),
# the goal, the ring or tree steps fast-forward skipped (runs.csv
# fast_forwarded_steps) and the simulated exchange; then one run with
# fast_forward = off, its wall time and how far its iteration time and
# wire bytes are from fast-forward's (they must agree within 1e-6); and,
# as the project's reference for a simulator's speed, SimGrid SMPI's
# MPI_Allreduce on the same platform (written by gradsim platform, the
# GPUs w0.. in order) with MPICH's ring (lr) on 64 MB, as the other
# benchmarks run it, and its messages per second (2 p (p - 1) messages).
# Not the points' own bytes: SMPI has no NCCL (its ring is one channel in
# rank order, not NCCL's channels, slices and trees), its MPI_Allreduce
# of 4 GiB of floats crashes (more than 2^31 bytes), and from a few MB on
# its wall time grows with the bytes at a fixed count of messages (its
# work on the buffers, not its simulation).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${1:-3}
bench_start
build_smpi

# rel A B: |A - B| / |B|
rel() { calc "($1 - $2) / $2" | awk '{ printf "%.2g\n", $1 < 0 ? -$1 : $1 }'; }

# point ID NAME INI GOAL_S [--set KEY=VALUE]...: one row (ID names its
# files).
point() {
  local id=$1 name=$2 ini=$3 goal=$4 p
  shift 4
  p=$(awk -F' *= *' '$1 == "nodes" { print $2 }' "$ini")
  for r in $(seq "$RUNS"); do
    local t0
    t0=$(now)
    "$G" run "$ini" "$@" --out "$W/$id-ff$r" --quiet
    calc "$(now) - $t0"
  done >"$W/$id.times"
  local ff_wall off_wall t0 ff=$W/$id-ff1/runs.csv off=$W/$id-off/runs.csv
  ff_wall=$(median <"$W/$id.times")
  t0=$(now)
  "$G" run "$ini" "$@" --out "$W/$id-off" --quiet \
    --set exchange.fast_forward=off
  off_wall=$(calc "$(now) - $t0")
  "$G" platform "$ini" --out "$W/$id.xml"
  for i in $(seq 0 $((p - 1))); do echo "w$i"; done >"$W/$id.hosts"
  local smpi_sim smpi_wall
  t0=$(now)
  smpi_sim=$(smpi_time "$W/$id.xml" "$W/$id.hosts" "$p" \
    --cfg=smpi/allreduce:lr allreduce 16777216)
  smpi_wall=$(calc "$(now) - $t0")
  printf '%-30s %7.1f %6s %9s %12.9f | %7.1f %8s %8s | %7.1f %9.0f\n' \
    "$name" "$ff_wall" "$goal" "$(col "$ff" fast_forwarded_steps)" \
    "$(col "$ff" exchange_s)" "$off_wall" \
    "$(rel "$(col "$ff" iteration_s)" "$(col "$off" iteration_s)")" \
    "$(rel "$(col "$ff" wire_bytes)" "$(col "$off" wire_bytes)")" \
    "$smpi_wall" "$(calc "2 * $p * ($p - 1) / $smpi_wall")"
  [ -n "$smpi_sim" ] || echo "(SMPI failed: $(tail -1 "$W/smpi.err"))"
}

printf '%-30s %7s %6s %9s %12s | %7s %8s %8s | %7s %9s\n' \
  "point" "wall s" "goal s" "ff steps" "exchange s" "off s" "d iter" \
  "d bytes" "SMPI s" "SMPI msg/s"
point bert "BERT-large bf16, 256 A100" bench/nccl_bert256.ini 60
point bert32 "BERT-large fp32, 256 A100" bench/nccl_bert256.ini 60 \
  --set model.grad_dtype=fp32
point tree "4 GiB nccl-tree, 64 H100" bench/nccl_tree64.ini 20
point ring "4 GiB nccl-ring, 64 A100" bench/nccl_ring64.ini 20
point collnet "4 GiB collnet-chain, 64 H100" bench/nccl_collnet64.ini 20
point nvls "4 GiB nvls-tree, 64 H100" bench/nccl_tree64.ini 20 \
  --set exchange.algorithm=nccl --set exchange.nccl_algo=nvls-tree
echo "wall s: gradsim with fast-forward, median of $RUNS; off s: fast_forward = off, one run;"
echo "d iter, d bytes: relative distance of iteration_s and wire_bytes from off's (goal: 1e-6);"
echo "SMPI: MPI_Allreduce lr of 64 MB on the same platform file, one run, and its"
echo "messages per second (another algorithm and size: see the header)"
