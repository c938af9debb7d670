#!/usr/bin/env bash
# tests/cli/test_cli_sweep.sh: sweeps that stop and resume, and size
# limits.
#
#   test_cli_sweep.sh GRADSIM SOURCE_ROOT
#
# Checks that a sweep killed with SIGKILL resumes with only its missing
# points and ends byte-identical to an uninterrupted one; that SIGINT and
# SIGTERM stop it cleanly (status 128 + signal, the count of finished
# points, no partial files, no half outputs); determinism across runs and
# --jobs; that absurd sizes are refused with the memory or time they would
# need.
set -u
export LC_ALL=C
G=$1
SRC=${2:-.}
case $G in /*) ;; *) G=$PWD/$G ;; esac
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/gradsim-sweep.XXXXXX") || exit 1
BG=
cleanup() {
  [ -n "$BG" ] && kill -9 "$BG" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
W=$T/w
L=$T/log
mkdir -p "$W" "$L"
cd "$W" || exit 1
. "$SRC/tests/cli/lib.sh"
# Background jobs get their own process group and a SIGINT that is not
# ignored (a non-interactive shell ignores it in background jobs, and
# gradsim keeps an ignored SIGINT ignored).
set -m

# Six points of about half a second each: slow enough to stop midway.
cat >slow.ini <<'EOF'
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
# wait_rows DIR N: wait (at most 60 s) until DIR has N finished points.
wait_rows() {
  local i
  for i in $(seq 600); do
    [ "$(nrows "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
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
same_outputs() { # NAME DIR-A DIR-B: the three CSV files and config.txt
  local f bad=
  for f in runs.csv iterations.csv links.csv config.txt; do
    cmp -s "$2/$f" "$3/$f" || bad+=" $f"
  done
  check "$1" "$(isempty "$bad")" "differ:$bad"
}

# ---- the uninterrupted reference -------------------------------------------
run_ok "the slow sweep runs" run slow.ini --out ref --jobs 2 --quiet ||
  { finish; }

# ---- SIGKILL mid-sweep, then resume -------------------------------------------
"$G" run slow.ini --out killed --jobs 2 --quiet >"$L/k.out" 2>"$L/k.err" &
BG=$!
wait_rows killed 1
kill -9 "$BG"
wait "$BG" 2>/dev/null
BG=
n1=$(nrows killed)
sleep 1.5
n2=$(nrows killed)
check "SIGKILL stopped the sweep midway ($n1 of 6 points done)" \
  "$([ "$n1" -ge 1 ] && [ "$n1" -lt 6 ]; echo $?)"
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
  "$G" run slow.ini --out "$dir" --jobs 2 --quiet >"$L/s.out" 2>"$L/s.err" &
  BG=$!
  wait_rows "$dir" 1
  kill -"$sig" "$BG"
  wait "$BG"
  local rc=$?
  BG=
  local n
  n=$(nrows "$dir")
  check "SIG$sig: exit status $want ($rc)" "$([ "$rc" = "$want" ]; echo $?)" \
    "$(cat "$L/s.err")"
  check "SIG$sig: says what is done ($n of 6 points)" \
    "$(grep -qx "gradsim: interrupted: $n of 6 points done; run again to finish" \
      "$L/s.err"; echo $?)" "$(cat "$L/s.err")"
  check "SIG$sig: stopped midway" "$([ "$n" -lt 6 ]; echo $?)"
  local p
  p=$(partial "$dir")
  check "SIG$sig: no partial point files remain" "$(isempty "$p")" "$p"
  check "SIG$sig: no outputs are written" \
    "$([ ! -e "$dir/runs.csv" ] && [ ! -e "$dir/iterations.csv" ]; echo $?)"
  sleep 1
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
finish
