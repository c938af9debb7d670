#!/usr/bin/env bash
# bench/ring1024.sh: gradsim against SimGrid SMPI on the same platform
# file: one 64 MB ring allreduce over 1024 workers of a star
# (bench/ring1024.ini).
#
#   bench/ring1024.sh [RUNS]     (after ./dev.sh build; RUNS default 5)
#
# Prints the wall time of gradsim (median of RUNS, fast-forward on, as by
# default), of gradsim simulating every step (one run), and of SMPI's
# MPI_Allreduce with algorithm lr (one run: it takes minutes), their
# simulated times (the last worker's end) and the ratios; and gradsim's
# memory per worker: the slope of its peak RSS between 1024 and 4096
# workers (needs /usr/bin/time, Debian package "time").
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${1:-5}
bench_start
E=bench/ring1024.ini

"$G" platform "$E" --out "$W/platform.xml"
for i in $(seq 0 1023); do echo "h$i"; done >"$W/hosts"

for r in $(seq "$RUNS"); do
  t0=$(now)
  "$G" run "$E" --out "$W/ff$r" --quiet
  calc "$(now) - $t0"
done >"$W/ff.times"
ff_wall=$(median <"$W/ff.times")
ff_sim=$(col "$W/ff1/runs.csv" exchange_s)
formula=$(col "$W/ff1/runs.csv" formula_exchange_s)
t0=$(now)
"$G" run "$E" --out "$W/full" --quiet --set exchange.fast_forward=off
full_wall=$(calc "$(now) - $t0")
full_sim=$(col "$W/full/runs.csv" exchange_s)

build_smpi
t0=$(now)
smpi_sim=$(smpi_time "$W/platform.xml" "$W/hosts" 1024 --cfg=smpi/allreduce:lr allreduce 16777216)
smpi_wall=$(calc "$(now) - $t0")

mem="(no /usr/bin/time)"
if [ -x /usr/bin/time ]; then
  rss() { rss_of "$G" run "$E" --out "$W/m$1" --quiet \
    --set platform.nodes="$1" --set model.params=$(($1 * 16384)); }
  r1=$(rss 1024)
  r4=$(rss 4096)
  mem=$(calc "($r4 - $r1) * 1024 / 3072" | xargs printf '%.0f')
  mem="$mem bytes per worker (peak RSS $r1 KB at 1024, $r4 KB at 4096)"
fi

printf '%-40s %12s %14s\n' "one 64 MB ring allreduce, 1024 workers" "wall s" "simulated s"
printf '%-40s %12.3f %14.9f\n' "gradsim (fast-forward, median of $RUNS)" "$ff_wall" "$ff_sim"
printf '%-40s %12.3f %14.9f\n' "gradsim (every step simulated)" "$full_wall" "$full_sim"
printf '%-40s %12.3f %14.9f\n' "SimGrid SMPI MPI_Allreduce lr" "$smpi_wall" "$smpi_sim"
printf '%-40s %12s %14.9f\n' "formula (ring)" "" "$formula"
echo
printf 'speed-up over SMPI: %.1fx (fast-forward), %.1fx (every step)\n' \
  "$(calc "$smpi_wall / $ff_wall")" "$(calc "$smpi_wall / $full_wall")"
printf 'simulated time vs SMPI: %+.4f%% (fast-forward), %+.4f%% (every step)\n' \
  "$(calc "($ff_sim - $smpi_sim) / $smpi_sim * 100")" \
  "$(calc "($full_sim - $smpi_sim) / $smpi_sim * 100")"
echo "memory (payload none): $mem"
