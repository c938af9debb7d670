#!/usr/bin/env bash
# bench/fattree256.sh: gradsim against SimGrid SMPI on a contended platform
# file: one 64 MB ring allreduce over 256 workers of a 4:1 oversubscribed
# fat tree (bench/fattree256.ini, written to a file by gradsim platform;
# both run on the file, hosts h0..h255 in that order).
#
#   bench/fattree256.sh [RUNS]     (after ./dev.sh build; RUNS default 5)
#
# Prints the wall time of gradsim with fast-forward (median of RUNS), of
# gradsim simulating every step (one run; its messages per second), and of
# SMPI's MPI_Allreduce with algorithm lr (one run), their simulated times
# (the last worker's end) and the ratios.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${1:-5}
bench_start
E=bench/fattree256.ini
P=256

"$G" platform "$E" --out "$W/fattree.xml"
for i in $(seq 0 $((P - 1))); do echo "h$i"; done >"$W/hosts"
F=(--set "platform.topology=file:$W/fattree.xml" --set "platform.hosts=$W/hosts")

for r in $(seq "$RUNS"); do
  t0=$(now)
  "$G" run "$E" "${F[@]}" --out "$W/ff$r" --quiet
  calc "$(now) - $t0"
done >"$W/ff.times"
ff_wall=$(median <"$W/ff.times")
ff_sim=$(col "$W/ff1/runs.csv" exchange_s)
ff_steps=$(col "$W/ff1/runs.csv" fast_forwarded_steps)
t0=$(now)
"$G" run "$E" "${F[@]}" --out "$W/full" --quiet --set exchange.fast_forward=off
full_wall=$(calc "$(now) - $t0")
full_sim=$(col "$W/full/runs.csv" exchange_s)
# Every step simulated: 2 (p - 1) steps of p messages (64 MB divides).
messages=$((2 * (P - 1) * P))

build_smpi
t0=$(now)
smpi_sim=$(smpi_time "$W/fattree.xml" "$W/hosts" $P --cfg=smpi/allreduce:lr allreduce 16777216)
smpi_wall=$(calc "$(now) - $t0")

printf '%-44s %10s %14s\n' "64 MB ring, 256 workers, 4:1 fat-tree file" "wall s" "simulated s"
printf '%-44s %10.3f %14.9f\n' "gradsim, fast-forward (median of $RUNS)" "$ff_wall" "$ff_sim"
printf '%-44s %10.3f %14.9f\n' "gradsim, every step simulated" "$full_wall" "$full_sim"
printf '%-44s %10.3f %14.9f\n' "SimGrid SMPI MPI_Allreduce lr" "$smpi_wall" "$smpi_sim"
echo
printf 'fast-forward skipped %s of %s ring steps of worker 0\n' "$ff_steps" $((2 * (P - 1)))
printf 'speed-up over SMPI: %.1fx (fast-forward), %.1fx (every step)\n' \
  "$(calc "$smpi_wall / $ff_wall")" "$(calc "$smpi_wall / $full_wall")"
printf 'simulated time vs SMPI: %+.4f%% (fast-forward), %+.4f%% (every step)\n' \
  "$(calc "($ff_sim - $smpi_sim) / $smpi_sim * 100")" \
  "$(calc "($full_sim - $smpi_sim) / $smpi_sim * 100")"
printf 'step-by-step engine: %d messages in %.3f s: %.0f messages/s\n' \
  $messages "$full_wall" "$(calc "$messages / $full_wall")"
