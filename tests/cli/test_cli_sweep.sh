#!/usr/bin/env bash
# tests/cli/test_cli_sweep.sh: sweeps that stop and resume, size limits,
# and sweeps split across machines (`gradsim run --list-points`,
# `--point`, `gradsim merge`).
#
#   test_cli_sweep.sh GRADSIM SOURCE_ROOT
#
# Checks that a sweep killed with SIGKILL resumes with only its missing
# points and ends byte-identical to an uninterrupted one; that SIGINT and
# SIGTERM stop it cleanly (status 128 + signal, the count of finished
# points, no partial files, no half outputs); the stops come at a known
# state, with points held running by GRADSIM_TEST_HOLD (sweep/points.c),
# never after a sleep; determinism across runs and
# --jobs; that absurd sizes are refused with the memory or time they would
# need; and that the points of a sweep run one by one into several
# directories merge into the files of one whole run, byte for byte, while
# directories of another experiment or with missing points are refused.
set -u
export LC_ALL=C
G=$1
SRC=${2:-.}
case $G in /*) ;; *) G=$PWD/$G ;; esac
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
. "$SRC/tests/cli/lib.sh"
workdir sweep
BG=
cleanup() {
  [ -n "$BG" ] && kill -9 "$BG" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
# Background jobs get their own process group and a SIGINT that is not
# ignored (a non-interactive shell ignores it in background jobs, and
# gradsim keeps an ignored SIGINT ignored).
set -m

# Six points of about half a second each.
cat >slow.ini <<'EOF'
# Does the iteration time of a 64-worker ring depend on the run's length?
[platform]
nodes = 64
ideal = true
[model]
name = synthetic
params = 480000
tensors = 2
compute = 0.002
[exchange]
algorithm = ring
payload = none
fast_forward = off
[training]
iterations = 3, 4, 5, 6, 7, 8
EOF
# A quick sweep with real values, lossy and error-feedback codecs.
cat >quick.ini <<'EOF'
[platform]
nodes = 2, 4
aggregators = 1
latency = 10us
[model]
name = synthetic
params = 200001
tensors = 3
compute = 0.003
[exchange]
algorithm = ps, allgather-rdb
codec = q8, rgc:ratio=0.01
payload = full
[training]
iterations = 3
mode = sync, overlap
EOF

nrows() { find "$1/points" -name '*.row' 2>/dev/null | wc -l; }

# Holding points running. With GRADSIM_TEST_HOLD=DIR, a point's process
# that has simulated its point, before it writes its files, opens the FIFO
# DIR/HASH and reads it until a writer has opened and closed it. The
# hashes of slow.ini's points, by index:
"$G" run slow.ini --list-points | cut -f2 >"$L/hashes"
HELD=()
# start_held DIR: gradsim run slow.ini --out DIR --jobs 2 in the
# background (BG), every point held. Its fd 9, which every point process
# inherits, is the write end of a FIFO the test reads (fd ALIVE): its end
# means that gradsim and all its processes have ended.
start_held() {
  HOLD=$T/hold-$1
  mkdir -p "$HOLD"
  local h
  while read -r h; do mkfifo "$HOLD/$h"; done <"$L/hashes"
  mkfifo "$T/alive-$1"
  GRADSIM_TEST_HOLD=$HOLD "$G" run slow.ini --out "$1" --jobs 2 --quiet \
    >"$L/s.out" 2>"$L/s.err" 9>"$T/alive-$1" &
  BG=$!
  exec {ALIVE}<"$T/alive-$1"
}
# held I: wait until point I's process is held (it has simulated its point
# and written none of its files); it stays so until release I. (A sweep
# that never gets there hangs the test until meson's timeout.)
held() {
  exec {HELD[$1]}>"$HOLD/$(sed -n "$(($1 + 1))p" "$L/hashes")"
}
release() { exec {HELD[$1]}>&-; }
# gone: wait until gradsim and every one of its processes have ended.
gone() {
  cat <&"$ALIVE" >/dev/null
  exec {ALIVE}<&-
}
# hold_midway DIR: start_held DIR, then point 0 done and points 1 and 2
# running (jobs 2: point 2 starts only once point 0's process has ended,
# its files moved); points 3 to 5 are not started.
hold_midway() {
  start_held "$1"
  held 0
  held 1
  release 0
  held 2
}
# partial DIR: point files without their row, and work directories.
partial() {
  local f
  for f in "$1"/points/*.iter "$1"/points/*.links "$1"/points/*.note; do
    [ -e "$f" ] || continue
    [ -e "${f%.*}.row" ] || echo "$f"
  done
  find "$1/points" -name '*.work*'
}
same_outputs() { # NAME DIR-A DIR-B: the four CSV files and config.txt
  local f bad=
  for f in runs.csv iterations.csv links.csv nccl.csv config.txt; do
    cmp -s "$2/$f" "$3/$f" || bad+=" $f"
  done
  check "$1" "$(isempty "$bad")" "differ:$bad"
}

# ---- help -------------------------------------------------------------------
if run_ok "run --help exits 0" run --help; then
  miss=
  for o in --list-points --point; do
    grep -q -- "$o" "$L/out" || miss+=" $o"
  done
  check "run --help lists --list-points and --point" "$(isempty "$miss")" \
    "missing:$miss"
fi
run_ok "merge --help exits 0" merge --help &&
  check "merge --help names its arguments" \
    "$(grep -q 'OUTDIR DIR' "$L/out"; echo $?)"
run_ok "gradsim --help lists merge" --help &&
  check "gradsim --help lists merge" "$(grep -q '^  merge' "$L/out"; echo $?)"
run_ok "gradsim --version" --version &&
  check "gradsim --version prints the build config.txt records" \
    "$(grep -q '^gradsim [0-9.]* (.*)$' "$L/out"; echo $?)" "$(cat "$L/out")"

# ---- the uninterrupted reference -------------------------------------------
run_ok "the slow sweep runs" run slow.ini --out ref --jobs 2 --quiet ||
  { finish; }

# ---- SIGKILL mid-sweep, then resume -------------------------------------------
hold_midway killed
n1=$(nrows killed)
kill -9 "$BG"
wait "$BG" 2>/dev/null
BG=
# Released, a point process that outlived its parent would finish now.
release 1
release 2
gone
n2=$(nrows killed)
check "SIGKILL stopped the sweep midway ($n1 of 6 points done)" \
  "$([ "$n1" = 1 ]; echo $?)"
check "no point finishes after the parent is killed ($n1, then $n2)" \
  "$([ "$n1" = "$n2" ]; echo $?)"
check "a killed sweep writes no runs.csv" "$([ ! -e killed/runs.csv ]; echo $?)"
touch -d '2001-01-01' killed/points/*.row
touch -d '2001-01-02' "$L/mark"
if run_ok "a killed sweep resumes" run slow.ini --out killed --jobs 2 --quiet
then
  old=$(find killed/points -name '*.row' ! -newer "$L/mark" | wc -l)
  new=$(find killed/points -name '*.row' -newer "$L/mark" | wc -l)
  check "resuming keeps the $n1 finished points" "$([ "$old" = "$n1" ]; echo $?)" \
    "old rows: $old"
  check "resuming runs only the $((6 - n1)) missing points" \
    "$([ "$new" = $((6 - n1)) ]; echo $?)" "new rows: $new"
  same_outputs "killed and resumed equals uninterrupted, byte for byte" \
    ref killed
  p=$(partial killed)
  check "no partial files remain after resuming" "$(isempty "$p")" "$p"
fi

# ---- SIGINT and SIGTERM ------------------------------------------------------------
stop_test() { # SIGNAL STATUS
  local sig=$1 want=$2 dir=stop-$1
  hold_midway "$dir"
  kill -"$sig" "$BG"
  wait "$BG"
  local rc=$?
  BG=
  local n
  n=$(nrows "$dir")
  check "SIG$sig: exit status $want ($rc)" "$([ "$rc" = "$want" ]; echo $?)" \
    "$(cat "$L/s.err")"
  check "SIG$sig: says what is done (1 of 6 points)" \
    "$(grep -qx "gradsim: interrupted: 1 of 6 points done; run again to finish" \
      "$L/s.err"; echo $?)" "$(cat "$L/s.err")"
  check "SIG$sig: stopped midway, the point done before the stop kept" \
    "$([ "$n" = 1 ]; echo $?)" "$n points done"
  local p
  p=$(partial "$dir")
  check "SIG$sig: no partial point files remain" "$(isempty "$p")" "$p"
  check "SIG$sig: no outputs are written" \
    "$([ ! -e "$dir/runs.csv" ] && [ ! -e "$dir/iterations.csv" ]; echo $?)"
  # Released, a point process still running would finish now.
  release 1
  release 2
  gone
  check "SIG$sig: the running points were stopped" \
    "$([ "$(nrows "$dir")" = "$n" ]; echo $?)"
  if run_ok "SIG$sig: the sweep resumes" run slow.ini --out "$dir" --quiet; then
    same_outputs "SIG$sig: stopped and resumed equals uninterrupted" ref "$dir"
  fi
}
stop_test INT 130
stop_test TERM 143

# ---- determinism ------------------------------------------------------------------
if run_ok "quick sweep, --jobs 2" run quick.ini --out q1 --jobs 2 --quiet &&
  run_ok "quick sweep again, --jobs 1" run quick.ini --out q2 --jobs 1 --quiet &&
  run_ok "quick sweep again, --jobs 2" run quick.ini --out q3 --jobs 2 --quiet
then
  for f in runs.csv iterations.csv; do
    check "same seed, --jobs 2 twice: byte-identical $f" \
      "$(cmp -s q1/$f q3/$f; echo $?)"
    check "same seed, --jobs 1 and 2: byte-identical $f" \
      "$(cmp -s q1/$f q2/$f; echo $?)"
  done
  check "the quick sweep has 16 points" \
    "$([ "$(csv_rows q1/runs.csv)" = 16 ]; echo $?)"
fi

# ---- --list-points ------------------------------------------------------------------
if run_ok "--list-points" run quick.ini --list-points --out never; then
  cp "$L/out" "$L/list1"
  check "--list-points: one line per point" \
    "$([ "$(nlines "$L/list1")" = 16 ]; echo $?)"
  check "--list-points: indices 0..15 in order" \
    "$([ "$(cut -f1 "$L/list1" | tr '\n' ' ')" = "$(seq -s ' ' 0 15) " ]; echo $?)"
  check "--list-points: index, hash, then the swept keys" \
    "$(awk -F '\t' 'NF != 6 || length($2) != 16 || $2 ~ /[^0-9a-f]/ || $3 !~ /^platform.nodes=/ ||
        $6 !~ /^training.mode=(sync|overlap)$/ { bad = 1 } END { exit bad }' \
      "$L/list1"; echo $?)" "$(head -2 "$L/list1")"
  check "--list-points writes nothing" "$([ ! -e never ]; echo $?)"
  # The hashes are those of the point files.
  miss=
  for h in $(cut -f2 "$L/list1"); do [ -e q1/points/$h.row ] || miss+=" $h"; done
  check "--list-points: hashes name the point files" "$(isempty "$miss")" "$miss"
  run_ok "--list-points again" run quick.ini --list-points
  check "--list-points is stable" "$(cmp -s "$L/out" "$L/list1"; echo $?)"
  run_ok "--list-points with --set" run quick.ini --list-points \
    --set platform.nodes=4 --set training.mode=sync
  check "--list-points follows --set (4 points left)" \
    "$([ "$(nlines "$L/out")" = 4 ] && [ "$(head -c 2 "$L/out")" = "0$(printf '\t')" ]; echo $?)" \
    "$(cat "$L/out")"
fi

# ---- --estimate ---------------------------------------------------------------------
# A row per point (index, wall_s, memory_MB, messages, swept values) and
# the total, points done in --out marked; nothing written, nothing run.
if run_ok "--estimate" run quick.ini --estimate --out never; then
  check "--estimate writes nothing" "$([ ! -e never ]; echo $?)"
  check "--estimate: a row per point, numbers where numbers go" \
    "$(awk '!/^#/ && $1 != "point" { n++; if ($1 != n - 1 || !($2 > 0) || !($3 > 10) || !($4 >= 1)) bad = 1 }
        END { exit bad || n != 16 }' "$L/out"; echo $?)" "$(head -4 "$L/out")"
  check "--estimate: the sweep's total" \
    "$(grep -q '^# 16 of 16 points to run: about' "$L/out"; echo $?)" "$(tail -1 "$L/out")"
  run_ok "--estimate on a finished sweep" run quick.ini --estimate --out q1 &&
    check "--estimate marks the points done" \
      "$([ "$(grep -c '(done: kept)' "$L/out")" = 16 ] &&
        grep -q '^# 0 of 16 points to run' "$L/out"; echo $?)" "$(tail -2 "$L/out")"
fi
# ---- --point, and a sweep split across machines ---------------------------------
if run_ok "--point 5" run quick.ini --point 5 --out one; then
  h=$(sed -n 6p "$L/list1" | cut -f2)
  check "--point runs that point only" \
    "$([ "$(nrows one)" = 1 ] && [ -e one/points/$h.row ]; echo $?)"
  check "--point writes no runs.csv" "$([ ! -e one/runs.csv ]; echo $?)"
  check "--point says which point it ran" \
    "$(grep -q "^point 5 of 16 ($h) done" "$L/out"; echo $?)" "$(cat "$L/out")"
  cmp -s one/points/$h.row q1/points/$h.row
  check "--point gives the row of the whole run" "$?"
  run_ok "--point 5 again" run quick.ini --point 5 --out one &&
    check "--point again: already done" \
      "$(grep -q 'already done' "$L/out"; echo $?)"
fi
# GNU parallel style: every index into the directory of one of 3 "hosts"
# (one point at a time: the merge below also compares --jobs 1 with the
# --jobs 2 of the reference).
"$G" run slow.ini --list-points | cut -f1 >"$L/idx"
ok=0
while read -r i; do
  run run slow.ini --point "$i" --out "host$((i % 3))" --quiet
  [ "$RC" = 0 ] || ok=1
done <"$L/idx"
check "every --point of the split sweep runs" "$ok" "$(err_head)"
if run_ok "merge the three hosts" merge merged host0 host1 host2 --quiet; then
  same_outputs "merged split sweep equals one whole run, byte for byte" ref merged
  touch -d '2001-01-01' merged/points/*.row
  run_ok "a merged directory resumes as a whole run" run slow.ini \
    --out merged --quiet
  check "... with nothing left to run" \
    "$([ -z "$(find merged/points -name '*.row' -newer "$L/mark")" ]; echo $?)"
fi
# merge --plot draws from the manifest alone: the experiment's question
# is kept there.
if command -v gnuplot >/dev/null 2>&1 &&
  run_ok "merge --plot" merge mp host0 host1 host2 --plot --quiet; then
  miss=
  for f in plot.png plot.svg breakdown.png breakdown.svg breakdown.dat; do
    [ -s "mp/$f" ] || miss+=" $f"
  done
  check "merge --plot writes the plot and the breakdown" "$(isempty "$miss")" \
    "missing:$miss"
  check "merge --plot: the question from the manifest under the titles" \
    "$(grep -q "Does the iteration time of a 64-worker ring depend on the run's length?" \
      mp/plot.gp && grep -q 'set xlabel "iterations"' mp/breakdown.gp; echo $?)"
fi
run_ok "merge a whole run into another directory" merge m2 ref --quiet &&
  same_outputs "merge of one whole directory equals it" ref m2
run_ok "merge with overlapping directories" merge m3 host0 ref host1 --quiet &&
  same_outputs "overlapping directories merge to the same files" ref m3
run_ok "merge prints the summary" merge m4 host2 host1 host0 &&
  check "merge's summary names the directory" \
    "$(grep -q 'results in m4' "$L/out"; echo $?)"

# ---- limits: refused before anything is written ---------------------------------
bad() { # NAME EXPECT-IN-MESSAGE ARGS...
  local name=$1 want=$2
  shift 2
  rm -rf never
  run "$@"
  local lines
  lines=$(nlines "$L/err")
  if [ "$RC" = 2 ] && [ "$lines" = 1 ] && [ ! -s "$L/out" ] &&
    [ ! -e never ] && grep -q '^gradsim: ' "$L/err" &&
    grep -qi -- "$want" "$L/err"; then
    pass "bad input: $name"
  else
    fail "bad input: $name" "command: gradsim $(quote "$@")" \
      "status $RC, $lines stderr lines, stdout $(wc -c <"$L/out") bytes," \
      "wrote: $([ -e never ] && echo yes || echo no), wanted '$want'" \
      "$(err_head)"
  fi
}
for o in --point=0 --list-points --plot --trace; do
  bad "--estimate with $o" "--estimate runs nothing" run quick.ini --estimate "$o"
done
bad "a billion workers: the memory they need" "TB of memory" \
  run slow.ini --out never --set platform.nodes=1000000000
bad "10^15 parameters: the memory they need" "PB of float32" \
  run slow.ini --out never --set model.name=synthetic --set model.params=1e15
bad "a million workers: more memory than the machine" "of memory" \
  run slow.ini --out never --set platform.nodes=1048576 \
  --set training.iterations=1
bad "the memory message states the limit" "of this machine's" \
  run slow.ini --out never --set platform.nodes=1048576 \
  --set training.iterations=1
bad "a sampled payload larger than memory" "gradient values" \
  run slow.ini --out never --set platform.nodes=65536 \
  --set exchange.algorithm=allgather-rdb --set exchange.payload=sampled \
  --set exchange.sample=67108864 --set model.params=1e12 \
  --set training.iterations=1
bad "a point too long to simulate: its message count" \
  "too long to simulate: 3.6e+10 simulated messages" \
  run slow.ini --out never --set platform.nodes=30000 \
  --set training.iterations=10
bad "the time message states the limit" "limit is 1e+10 messages" \
  run slow.ini --out never --set platform.nodes=30000 \
  --set training.iterations=10
bad "--list-points refuses what run refuses" "too long" \
  run slow.ini --list-points --set platform.nodes=30000 \
  --set training.iterations=10
# The same size fast-forwarded is fine: four ring steps per exchange.
run_ok "30000 workers fast-forwarded are within the limits" run slow.ini \
  --list-points --set platform.nodes=30000 --set training.iterations=10 \
  --set exchange.fast_forward=auto --set model.params=30000000

# ---- bad input: --point and merge --------------------------------------------
bad "--point out of range" "has 6 points (0..5" \
  run slow.ini --out never --point 6
bad "--point negative" "has 6 points" run slow.ini --out never --point -1
bad "--point with --plot" "--plot" run slow.ini --out never --point 0 --plot
bad "--point with --list-points" "exclude" \
  run slow.ini --out never --point 0 --list-points
bad "merge without directories" "OUTDIR" merge never
bad "merge of a missing directory" "nope is not a directory" \
  merge never nope
mkdir -p empty
bad "merge of a directory without a sweep" "holds no sweep" \
  merge never empty
bad "merge with points missing (says which)" \
  "2 of 6 points of sweep [0-9a-f]* (slow.ini) are in none of host0, host1: 2, 5" \
  merge never host0 host1
bad "merge of another experiment" "no common sweep" merge never host0 q1
run_ok "one point of the slow sweep with another --set" run slow.ini \
  --set training.iterations=3 --out other --quiet &&
  bad "merge of the same experiment with another --set" "no common sweep" \
    merge never ref other
# ---- the inputs besides the keys: an edited model file is run again ------------
mkdir models
cp "$SRC"/models/*.model "$SRC"/models/*.conf models/
cat >inputs.ini <<'EOF'
[platform]
nodes = 2
ideal = true
[model]
name = mnist-mlp
[exchange]
algorithm = ring
payload = none
[training]
iterations = 2
EOF
if GRADSIM_MODELS_DIR=$W/models run_ok "a run on a copy of the models" \
    run inputs.ini --out inputs --quiet; then
  touch -d '2001-01-01' inputs/points/*.row
  touch -d '2001-01-02' "$L/mark"
  GRADSIM_MODELS_DIR=$W/models run_ok "the same run again" \
    run inputs.ini --out inputs --quiet &&
    check "unchanged inputs: the finished point is reused" \
      "$([ -z "$(find inputs/points -name '*.row' -newer "$L/mark")" ]; echo $?)"
  build=$("$G" --version | sed 's/^gradsim //')
  check "config.txt records the build and the models' digest" \
    "$(grep -qxF "gradsim = $build" inputs/config.txt &&
      grep -q '^models = [0-9a-f]\{16\}$' inputs/config.txt; echo $?)"
  echo "# an edit" >>models/devices.conf
  GRADSIM_MODELS_DIR=$W/models run_ok "the run after an edit of devices.conf" \
    run inputs.ini --out inputs --quiet &&
    check "an edited input file: the point is run again" \
      "$([ -n "$(find inputs/points -name '*.row' -newer "$L/mark")" ]; echo $?)"
fi

cp -r host0 tampered
r=$(ls tampered/points/*.row | head -1)
sed -i 's/,na,/,pass,/' "$r"
bad "merge of a point that differs between directories" "differs between" \
  merge never tampered ref
cp -r host1 corrupt
sed -i 's/^nodes = 64/nodes = 65/' corrupt/points/*.sweep
bad "merge of a corrupted manifest" "does not match" merge never corrupt
bad "merge into a file" "not a directory" merge slow.ini ref

finish
