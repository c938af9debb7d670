# bench/lib.sh: helpers of the benchmark scripts (sourced).
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.9g\\n\", $1 }"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# col FILE COLUMN: the column of the first row of a CSV file.
col() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k; exit }' "$1"; }
# peak RSS in KB of a command (GNU time), or "-" without /usr/bin/time.
rss_of() { if [ -x /usr/bin/time ]; then /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; else "$@" >/dev/null 2>&1; echo -; fi; }
# smpi_time PLATFORM HOSTFILE NP CFG MODE N: SMPI's simulated time (the last
# rank's end; tests/parity/smpi_coll.c), on the ideal network.
smpi_time() {
  smpirun -np "$3" -platform "$1" -hostfile "$2" \
    --cfg=network/model:CM02 --cfg=network/crosstraffic:0 \
    --cfg=network/TCP-gamma:0 --cfg=smpi/simulate-computation:no \
    --cfg=smpi/shared-malloc-blocksize:67108864 --cfg=contexts/stack-size:256 \
    "$4" --log=root.thres:critical "$W/coll" "$5" "$6" 2>"$W/smpi.err" |
    awk '/simulated_s/ { print $2 }'
}
build_smpi() {
  smpicc -O2 tests/parity/smpi_coll.c -o "$W/coll" 2>"$W/smpicc.log" ||
    { echo "smpicc failed:"; cat "$W/smpicc.log"; exit 1; }
}
# bench_start: G, the built gradsim (exit 2 when it is not built), and W,
# a work directory removed when the script exits.
bench_start() {
  G=$PWD/build/gradsim
  [ -x "$G" ] || { echo "build first: ./dev.sh build" >&2; exit 2; }
  W=$(mktemp -d /tmp/gradsim-bench.XXXXXX)
  trap 'rm -rf "$W"' EXIT
}
