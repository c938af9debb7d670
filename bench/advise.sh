#!/usr/bin/env bash
# bench/advise.sh: `gradsim advise`'s search, beside the goals of issue 40:
# about 100 candidates on a 64-GPU cluster within 5 minutes on the 2-core
# development machine, and the two answers its "done when" names.
#
#   bench/advise.sh [--exhaustive]     (after ./dev.sh build)
#
# 1. ResNet-50 on eight DGX A100 machines (64 GPUs) behind 25 Gb/s NICs,
#    the space of bench/advise-space.ini (108 combinations and the
#    refinement's): the search's wall time, how many candidates it
#    simulated and how many the formulas pruned, and the estimated wall
#    time of simulating every candidate the engine runs (the search's
#    physical limit is simulating all of them: what pruning saves). With
#    --exhaustive, that search is run too and its best compared.
# 2. ResNet-50 on 16 V100s behind 10 GbE (default space): a codec should
#    win. 3. Llama-3-8B on 8 DGX H100 machines at 400 Gb/s a GPU (default
#    space): no lossy codec should win. Each prints its recommendation and
#    wall time.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start
EXH=${1:-}

count() { awk -F, -v s="$2" 'NR > 1 && $2 == s { n++ } END { print n + 0 }' "$1/candidates.csv"; }
est_sum() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "estimate_s") k = i; next }
           $2 != "refused" && $2 != "excluded" && $2 != "does-not-fit" { s += $k } END { printf "%.0f", s }' "$1/candidates.csv"
}

echo "== 1. ResNet-50, 64 A100 (8 DGX A100), 25 Gb/s NICs, bench/advise-space.ini"
t0=$(now)
"$G" advise --model resnet50 --platform preset=dgx-a100,nodes=64,bandwidth=25Gbps \
  --space bench/advise-space.ini --out "$W/a100" -q >"$W/a100.txt" 2>&1
t1=$(now)
n=$(($(awk 'END { print NR }' "$W/a100/candidates.csv") - 1))
printf 'candidates %d: simulated %d, pruned by the formulas %d, refused %d, excluded by --max-error %d, over budget %d\n' \
  "$n" "$(count "$W/a100" simulated)" "$(count "$W/a100" pruned)" \
  "$(count "$W/a100" refused)" "$(count "$W/a100" excluded)" "$(count "$W/a100" over-budget)"
printf 'search wall time %.1f s (goal: 300 s); every runnable candidate simulated: about %s s of estimated simulation\n' \
  "$(calc "$t1 - $t0")" "$(est_sum "$W/a100")"
head -1 "$W/a100/best.ini"
if [ "$EXH" = --exhaustive ]; then
  t0=$(now)
  "$G" advise --model resnet50 --platform preset=dgx-a100,nodes=64,bandwidth=25Gbps \
    --space bench/advise-space.ini --out "$W/a100x" --exhaustive -q >/dev/null 2>&1
  t1=$(now)
  printf 'exhaustive: %.1f s wall, simulated %d\n' "$(calc "$t1 - $t0")" "$(count "$W/a100x" simulated)"
  head -1 "$W/a100x/best.ini"
fi

echo
echo "== 2. ResNet-50, 16 V100, 10 GbE (default space)"
t0=$(now)
"$G" advise --model resnet50 --platform nodes=16,bandwidth=10Gbps --set model.device=V100 \
  --out "$W/resnet" -q 2>&1 | head -1
t1=$(now)
printf 'wall time %.1f s, simulated %d, pruned %d\n' "$(calc "$t1 - $t0")" \
  "$(count "$W/resnet" simulated)" "$(count "$W/resnet" pruned)"

echo
echo "== 3. Llama-3-8B, 8 DGX H100 (64 GPUs, 400 Gb/s a GPU), bf16 (default space)"
t0=$(now)
"$G" advise --model llama-3-8b --platform preset=dgx-h100,nodes=64 --set model.precision=bf16 \
  --out "$W/llama" -q 2>&1 | head -1
t1=$(now)
printf 'wall time %.1f s, simulated %d, pruned %d, over budget %d\n' "$(calc "$t1 - $t0")" \
  "$(count "$W/llama" simulated)" "$(count "$W/llama" pruned)" "$(count "$W/llama" over-budget)"
