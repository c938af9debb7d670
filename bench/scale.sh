#!/usr/bin/env bash
# bench/scale.sh: gradsim at scale on a generated fat tree (bench/scale.ini):
# a 64 MB ring over 4096 workers, a 64 MB Rabenseifner over 4096 workers,
# and ResNet-50's per-tensor rings (153 tensors, one exchange) over 1024
# workers. Prints each one's wall time and peak memory (RSS, GNU time:
# Debian package "time") beside the goal of 30 s and 2 GB, and the ring
# steps and buckets fast-forward skipped.
#
# bench/scale.sh frontier: the frontier goals instead (each under its wall
# time and 8 GB): a 64 MB ring and a 64 MB Rabenseifner over 65,536
# workers (60 s), ResNet-50's per-tensor rings with layer-wise overlap
# over 16,384 workers (120 s), and Llama-2-7B's 25 MB buckets, overlapped,
# over 16,384 workers (120 s).
#
# bench/scale.sh collectives: every collective but csc over 8,192 workers
# of the same fat tree, a 4 MB model in one exchange (groups of 8 GPUs for
# hierarchical and nccl-rail, 4 aggregators for ps and ps-shared): a
# collective that costs more than its messages (a step that walks every
# worker, a ring simulated step by step) shows as an outlier. csc is left
# out: its norm allreduce rings a value per chunk, usually fewer than the
# workers, so every step is simulated (p^2 messages; 2,048 workers take
# minutes).
#
#   bench/scale.sh [frontier|collectives]     (after ./dev.sh build)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start
E=bench/scale.ini

printf '%-46s %9s %9s %12s %10s %10s\n' "generated fat tree, one exchange" "wall s" "RSS MB" "simulated s" "ff steps" "ff buckets"
one() { # NAME SETS...
  local name=$1
  shift
  local t0 t1 kb
  t0=$(now)
  kb=$(rss_of "$G" run "$E" --out "$W/$name" --quiet "$@")
  t1=$(now)
  printf '%-46s %9.2f %9s %12.6f %10s %10s\n' "$name" "$(calc "$t1 - $t0")" \
    "$([ "$kb" = - ] && echo - || calc "$kb / 1024" | xargs printf '%.0f')" \
    "$(col "$W/$name/runs.csv" exchange_s)" \
    "$(col "$W/$name/runs.csv" fast_forwarded_steps)" \
    "$(col "$W/$name/runs.csv" fast_forwarded_buckets)"
}
if [ "${1:-}" = collectives ]; then
  for a in ring nccl-ring inceptionn rdb rabenseifner allgather-rdb ps \
    ps-shared hierarchical nccl nccl-tree nccl-rail; do
    case $a in
    hierarchical | nccl-rail) x="exchange.group=8" ;;
    ps | ps-shared) x="platform.aggregators=4" ;;
    *) x="exchange.fast_forward=auto" ;;
    esac
    one "$a, 8192 workers, 4 MB" --set platform.nodes=8192 \
      --set model.params=1048576 --set exchange.algorithm="$a" --set "$x"
  done
  echo "(no goal: one run each, to compare)"
  exit 0
fi
if [ "${1:-}" = frontier ]; then
  one "ring, 65536 workers, 64 MB" --set platform.nodes=65536
  one "rabenseifner, 65536 workers, 64 MB" --set platform.nodes=65536 \
    --set exchange.algorithm=rabenseifner
  one "ResNet-50 per-tensor, overlap, 16384 workers" \
    --set platform.nodes=16384 --set model.name=resnet50 \
    --set training.mode=overlap
  one "Llama-2-7B 25 MB buckets, overlap, 16384" \
    --set platform.nodes=16384 --set model.name=llama-2-7b \
    --set training.fusion_bytes=25MB --set training.mode=overlap
  echo "goals: 60 s for the 65,536-worker rows, 120 s for the others; 8 GB each"
  exit 0
fi
one "ring, 4096 workers, 64 MB"
one "rabenseifner, 4096 workers, 64 MB" --set exchange.algorithm=rabenseifner
one "ResNet-50 per-tensor rings, 1024 workers" --set platform.nodes=1024 \
  --set model.name=resnet50
echo "goals: each under 30 s of wall time and 2048 MB of memory"
