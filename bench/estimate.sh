#!/usr/bin/env bash
# bench/estimate.sh: gradsim's estimate of a point's wall time (what
# `gradsim run --estimate` prints and a long sweep shows before it runs;
# config/estimate.c) against the measured wall time of the same point, on
# points of every kind: parameter servers and rings on a star, rings on a
# fat tree with and without fast-forward, the codecs run on sampled
# gradients, NCCL's kernel on DGX machines, a transformer's buckets.
#
#   bench/estimate.sh [quick]     (after ./dev.sh build)
#
# One row per point: the estimate, the measured wall time (one run of
# `gradsim run --point I`, process start included) and their ratio; then
# the median ratio and the range. `quick` leaves out the two points that
# take minutes (Llama-2-7B over 128 H100s, a 4 GiB tree over 64 H100s).
# None of these runs is one the estimate's constants were fitted to
# (config/estimate.h: INCEPTIONN's sweep at 64 workers, a 1024-worker
# star ring and a 4096-worker fat-tree ring, BERT-large over 256 A100s,
# Zhang et al.'s ResNet-50; NCCL's fast-forward on nccl-tests' 512 MiB
# points).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start
QUICK=${1:-}

printf '%-58s %10s %10s %8s\n' "point" "estimate_s" "measured_s" "ratio"
# case NAME FILE INDEX [--set KEY=VALUE]...
case_() {
  local name=$1 file=$2 i=$3 est t0 t1 wall
  shift 3
  est=$("$G" run "$file" "$@" --estimate | awk -v i="$i" '$1 == i { print $2 }')
  rm -rf "$W/out"
  t0=$(now)
  "$G" run "$file" "$@" --point "$i" --out "$W/out" --quiet
  t1=$(now)
  wall=$(calc "$t1 - $t0")
  printf '%-58s %10.3g %10.3g %8.3g\n' "$name" "$est" "$wall" \
    "$(calc "$est / $wall")" | tee -a "$W/rows"
}

for i in 0 1 2 3 12 13 14 15 16 17; do
  case_ "default.ini point $i (INCEPTIONN: ps, ring; codec)" \
    experiments/default.ini "$i"
done
case_ "ring, 512 workers, star, 64 MB, fast_forward = off" \
  bench/ring1024.ini 0 --set platform.nodes=512 \
  --set exchange.fast_forward=off
case_ "ring, 256 workers, 4:1 fat tree, fast_forward = off" \
  bench/fattree256.ini 0 --set exchange.fast_forward=off
case_ "rabenseifner, 4096 workers, fat tree, 64 MB" bench/scale.ini 0 \
  --set exchange.algorithm=rabenseifner
case_ "ResNet-50, per-tensor rings, 1024 workers, fat tree" bench/scale.ini 0 \
  --set platform.nodes=1024 --set model.name=resnet50 \
  --set model.device=V100 --set training.fusion_bytes=0
case_ "BERT-large, nccl, 64 A100 (8 DGX), bf16, one bucket" \
  bench/nccl_bert256.ini 0 --set platform.nodes=64
case_ "nccl-tests, 8 A100, 64 MiB" experiments/nccl-tests.ini 0 \
  --set model.params=16777216
case_ "nccl-tests, 16 A100 (2 DGX), 2 GiB" experiments/nccl-tests.ini 0 \
  --set model.params=536870912 --set platform.nodes=16
case_ "nccl-tests, 16 H100 (2 DGX, NVLS tree), 2 GiB" \
  experiments/nccl-tests.ini 0 --set model.params=536870912 \
  --set platform.nodes=16 --set platform.preset=dgx-h100
case_ "ResNet-101, nccl, 64 V100 (Zhang et al.), q8 per hop" \
  experiments/zhang-bottleneck.ini 0 --set model.name=resnet101 \
  --set exchange.codec=q8 --set exchange.payload=sampled
# Every worker decoding every worker's message (each constant's runs
# above fitted none of these: config/estimate.h).
case_ "RedSync RGC+ASQ, AlexNet, 128 workers, allgather-rdb" \
  experiments/redsync-fig9.ini 6 --set model.name=alexnet \
  --set exchange.algorithm=allgather-rdb \
  --set exchange.codec=rgc:ratio=0.001,select=trimmed,asq=1
case_ "GRACE ResNet-50, 8 V100, top-k 1% per bucket (allgather)" \
  experiments/grace-resnet50.ini 0 --set exchange.codec=topk:ratio=0.01
case_ "q8 per bucket, nccl-ring, 24 H100 (3 DGX), 2M values, full" \
  bench/gather24.ini 0
if [ "$QUICK" != quick ]; then
  case_ "Llama-2-7B, nccl, 128 H100, 100 Gbps (llama-h100.ini)" \
    experiments/llama-h100.ini 4
  case_ "4 GiB nccl-tree, 64 H100 (8 DGX)" bench/nccl_tree64.ini 0
fi

awk '{ print $NF }' "$W/rows" | median | awk '{ printf "median ratio %.3g", $1 }'
awk '{ r = $NF; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r }
     END { printf ", from %.3g to %.3g over %d points\n", lo, hi, NR }' "$W/rows"
