#!/usr/bin/env bash
# bench/fsdp1024.sh: fully sharded data parallel at scale, beside issue
# 39's goal: FSDP on Llama-2-7B over 1,024 GPUs in under 2 minutes
# (bench/fsdp1024.ini: sharding = zero3 on MPICH's ring, two iterations).
#
#   bench/fsdp1024.sh [RUNS]     (after ./dev.sh build; RUNS default 1)
#
# Prints gradsim's wall time (median of RUNS) and peak memory, the goal,
# the ring steps fast-forward skipped and the simulated iteration; the
# same model replicated (DDP, 25 MB buckets) on the same machines, which
# fast-forward also skips whole buckets of; the same sharded point over 256
# GPUs with fast_forward = off, and how far its iteration and bytes are
# from fast-forward's (they must agree within 1e-6); and, the project's
# reference for a simulator's speed, SimGrid SMPI's MPI_Allreduce (MPICH's
# ring, lr) of 64 MB over the 1,024 GPUs of the same platform file, and
# its messages per second (2 p (p - 1) messages).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${1:-1}
bench_start
build_smpi
INI=bench/fsdp1024.ini

rel() { calc "($1 - $2) / $2" | awk '{ printf "%.2g\n", $1 < 0 ? -$1 : $1 }'; }

# timed ID [--set ...]: gradsim's wall time of the point into ID's files.
timed() {
  local id=$1 t0
  shift
  t0=$(now)
  rss_of "$G" run "$INI" "$@" --out "$W/$id" --quiet >"$W/$id.rss"
  calc "$(now) - $t0"
}

for r in $(seq "$RUNS"); do timed "ff$r"; done >"$W/ff.times"
ddp=$(timed ddp --set training.sharding=none --set training.fusion_bytes=25MB)
on256=$(timed on256 --set platform.nodes=256)
off256=$(timed off256 --set platform.nodes=256 --set exchange.fast_forward=off)
"$G" platform "$INI" --out "$W/p.xml"
for i in $(seq 0 1023); do echo "w$i"; done >"$W/p.hosts"
t0=$(now)
smpi_sim=$(smpi_time "$W/p.xml" "$W/p.hosts" 1024 --cfg=smpi/allreduce:lr \
  allreduce 16777216)
smpi_wall=$(calc "$(now) - $t0")

printf '%-34s %7s %6s %7s %9s %11s\n' point "wall s" "goal s" "RSS MB" \
  "ff steps" "iteration s"
printf '%-34s %7.1f %6s %7.0f %9s %11.6f\n' "FSDP Llama-2-7B, 1,024 H100" \
  "$(median <"$W/ff.times")" 120 "$(calc "$(cat "$W/ff1.rss") / 1024")" \
  "$(col "$W/ff1/runs.csv" fast_forwarded_steps)" \
  "$(col "$W/ff1/runs.csv" iteration_s)"
printf '%-34s %7.1f %6s %7.0f %9s %11.6f\n' "DDP Llama-2-7B, 1,024 H100" \
  "$ddp" - "$(calc "$(cat "$W/ddp.rss") / 1024")" \
  "$(col "$W/ddp/runs.csv" fast_forwarded_steps)" \
  "$(col "$W/ddp/runs.csv" iteration_s)"
echo "FSDP over 256 H100: $on256 s with fast-forward, $off256 s without;" \
  "iteration_s and wire_bytes apart by" \
  "$(rel "$(col "$W/on256/runs.csv" iteration_s)" "$(col "$W/off256/runs.csv" iteration_s)")" \
  "and $(rel "$(col "$W/on256/runs.csv" wire_bytes)" "$(col "$W/off256/runs.csv" wire_bytes)")"
echo "SMPI MPI_Allreduce lr, 64 MB, 1,024 ranks on the same platform: $smpi_wall s" \
  "($(calc "2 * 1024 * 1023 / $smpi_wall") messages/s)${smpi_sim:+}"
[ -n "$smpi_sim" ] || echo "(SMPI failed: $(tail -1 "$W/smpi.err"))"
