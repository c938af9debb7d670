#!/usr/bin/env bash
# tests/cli/test_cli_reproduce.sh: command-line behaviour of
# `gradsim reproduce`.
#
#   test_cli_reproduce.sh GRADSIM SOURCE_ROOT
#
# Runs every shipped reproduction with --quick (the same files the full
# run uses, fewer iterations and smaller sizes) and checks per experiment
# runs.csv, claims.csv, NAME.md with its claims table, the PNG and SVG
# plots, and that every claim evaluates; REPORT.md links them all; the
# simulated results are byte-identical when run again; the expression
# language and the [reproduce] sections on small experiments of their own;
# and that bad input exits with status 2, one "gradsim: ..." line, nothing
# written.
set -u
export LC_ALL=C
G=$1
SRC=${2:-.}
case $G in /*) ;; *) G=$PWD/$G ;; esac
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/gradsim-repro.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM
W=$T/w
L=$T/log
mkdir -p "$W" "$L"
cd "$W" || exit 1
. "$SRC/tests/cli/lib.sh"
TIMEOUT=
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 600"; fi
have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

NAMES=$(cd "$SRC/experiments" && grep -l '^\[reproduce\]' ./*.ini |
  sed 's|^\./||; s|\.ini$||' | sort)
N=$(echo "$NAMES" | wc -l)

# ---- help -------------------------------------------------------------------
if run_ok "reproduce --help exits 0" reproduce --help; then
  miss=
  for o in --quick --jobs --out; do
    grep -q -- "$o" "$L/out" || miss+=" $o"
  done
  check "reproduce --help lists its options" "$(isempty "$miss")" \
    "missing:$miss"
fi
run_ok "gradsim --help lists reproduce" --help &&
  check "gradsim --help lists reproduce" \
    "$(grep -q '^  reproduce ' "$L/out"; echo $?)"

# ---- every reproduction, quick ---------------------------------------------
t0=$(date +%s)
if run_ok "reproduce all --quick runs" reproduce all --quick --out q \
  --jobs 2; then
  t1=$(date +%s)
  echo "     (reproduce all --quick: $((t1 - t0)) s)"
  for n in $NAMES; do
    d=q/$n
    miss=
    for f in runs.csv claims.csv "$n.md"; do
      [ -s "$d/$f" ] || miss+=" $f"
    done
    if [ "$have_gnuplot" = 1 ]; then
      for f in "$d"/*.png; do [ -s "$f" ] || miss+=" PNG"; done
      ls "$d"/*.svg >/dev/null 2>&1 || miss+=" SVG"
    fi
    check "$n: runs.csv, claims.csv, $n.md and plots" "$(isempty "$miss")" \
      "missing:$miss"
    check "$n.md holds the claims table" \
      "$(grep -q '^| claim | paper | gradsim | ratio | within tolerance? |$' \
        "$d/$n.md"; echo $?)"
    # claims.csv: the last column says yes or no for every claim.
    bad=$(awk -F, 'NR > 1 && $NF != "yes" && $NF != "no"' "$d/claims.csv" |
      wc -l)
    rows=$(csv_rows "$d/claims.csv")
    check "$n: all $rows claims evaluate" \
      "$([ "$bad" = 0 ] && [ "$rows" -gt 0 ]; echo $?)" \
      "$(grep -A5 '^Not evaluated' "$d/$n.md")"
    check "$n.md has one table row per claim" \
      "$([ "$(grep -c '^| .* | \(yes\|\*\*no\*\*\|not evaluated\) (' \
        "$d/$n.md")" = "$rows" ]; echo $?)"
    check "$n.md says it is a quick run" \
      "$(grep -q '^\*\*Quick run\*\*' "$d/$n.md"; echo $?)"
  done
  check "REPORT.md links all $N reproductions" \
    "$([ "$(grep -c '^| \[.*\](.*\.md) |' q/REPORT.md)" = "$N" ]; echo $?)"
  check "the summary on stdout names every experiment" \
    "$([ "$(grep -cE '^[a-z0-9-]+ +[0-9]+ / [0-9]+ ' "$L/out")" = "$N" ]; echo $?)"
  # A simulated reproduction is deterministic.
  if run_ok "reproduce formulas pipesgd-fig4 --quick again" reproduce \
    formulas pipesgd-fig4 --quick --out q2; then
    check "simulated runs.csv are byte-identical across runs" \
      "$(cmp -s q/formulas/runs.csv q2/formulas/runs.csv &&
        cmp -s q/pipesgd-fig4/runs.csv q2/pipesgd-fig4/runs.csv; echo $?)"
    check "claims.csv too" \
      "$(cmp -s q/pipesgd-fig4/claims.csv q2/pipesgd-fig4/claims.csv; echo $?)"
  fi
  # Claims hold where the simulator is exact.
  check "formulas: the ring equals its formula (claim within tolerance)" \
    "$(awk -F, '$1 == "ring" { exit !($NF == "yes") }' q/formulas/claims.csv; echo $?)"
  check "inceptionn-fig14: truncation ratios are exact" \
    "$(awk -F, '$1 ~ /^trunc/ && $NF != "yes" { f = 1 } END { exit f }' \
      q/inceptionn-fig14/claims.csv; echo $?)"
fi

# ---- the [reproduce] sections and the expression language -------------------
E=$T/exp
mkdir -p "$E"
cat >"$E/toy.ini" <<'EOF'
[platform]
nodes = 2, 4
bandwidth = 10Gbps
latency = 5us
ideal = true
[model]
name = synthetic
params = 250000
[exchange]
algorithm = ring
payload = none
[training]
iterations = 1
[reproduce]
title = a toy
source = nowhere, p. 1
[reproduce.derive]
double = 2 * exchange_s
vs_ring = exchange_s / exchange_s{variant=ring, nodes=$}
[reproduce.variant ring]
exchange.algorithm = ring
[reproduce.variant rdb]
exchange.algorithm = rdb
[reproduce.claim exact]
text = ring on 4 workers equals its formula
source = here
value = exchange_s{variant=ring, nodes=4} / formula_exchange_s{variant=ring, nodes=4}
paper = 1
tolerance = rel 1e-9
[reproduce.claim by]
text = rdb over ring
source = here
value = exchange_s{variant=rdb} / exchange_s{variant=ring}
by = nodes: 2, 4
paper = 1..2, >0
[reproduce.claim agg]
text = max over min
source = here
value = max(exchange_s) / min(exchange_s{nodes=min}) + 0 * count(exchange_s) - abs(-1) + 1
paper = <100
[reproduce.claim derived]
text = derived columns
source = here
value = double{variant=rdb, nodes=max} / exchange_s{variant=rdb, nodes=4} + vs_ring{variant=ring, nodes=2}
paper = 3
tolerance = abs 1e-12
[reproduce.claim missing]
text = a claim on a column that does not exist
source = here
value = no_such_column{variant=ring}
paper = 1
[reproduce.claim many]
text = a term matching several rows
source = here
value = exchange_s{variant=ring}
paper = 1
EOF
if GRADSIM_EXPERIMENTS_DIR=$E GRADSIM_PLOTS_DIR=$E run_ok "a toy reproduction runs" \
  reproduce toy --out t; then
  check "runs.csv: variant first, derived columns last" \
    "$(head -1 t/toy/runs.csv | grep -q '^variant,point,.*,batch,model_params,model_tensors,.*double,vs_ring$'; echo $?)"
  check "runs.csv: one row per variant and point" \
    "$([ "$(csv_rows t/toy/runs.csv)" = 4 ]; echo $?)"
  check "claim on an exact simulation holds" \
    "$(awk -F, '$1 == "exact" { exit !($NF == "yes") }' t/toy/claims.csv; echo $?)"
  check "by: one row per group, each with its paper value" \
    "$([ "$(grep -c '^by,' t/toy/claims.csv)" = 2 ] &&
      grep -q '^by,2,.*,1\.\.2,' t/toy/claims.csv &&
      grep -q '^by,4,.*,>0,' t/toy/claims.csv; echo $?)"
  check "aggregates and derived columns evaluate" \
    "$(awk -F, '($1 == "agg" || $1 == "derived") && $NF != "yes" { f = 1 } END { exit f }' \
      t/toy/claims.csv; echo $?)"
  check "an unknown column is reported, not fatal" \
    "$(grep -q "^- missing: no column 'no_such_column'" t/toy/toy.md; echo $?)"
  check "a term matching several rows is reported" \
    "$(grep -q '^- many: .*matches 2 rows where one is needed' t/toy/toy.md; echo $?)"
  check "no plot script: a warning, no plot" \
    "$(grep -q 'no plot script' "$L/err" && ! ls t/toy/*.png >/dev/null 2>&1; echo $?)"
fi

# ---- bad input: status 2, one line, nothing written ------------------------
bad() { # NAME EXPECT-IN-MESSAGE ARGS...
  local name=$1 want=$2
  shift 2
  rm -rf never
  run "$@"
  local lines
  lines=$(nlines "$L/err")
  if [ "$RC" = 2 ] && [ "$lines" = 1 ] && [ ! -s "$L/out" ] &&
    [ ! -e never ] && grep -q '^gradsim: ' "$L/err" &&
    grep -q -- "$want" "$L/err"; then
    pass "$name"
  else
    fail "$name" "command: gradsim $(quote "$@")" \
      "status $RC (want 2), $lines stderr lines (want 1), want '$want'" \
      "$(err_head)"
  fi
}
bad "unknown experiment" "unknown experiment 'nope'" reproduce nope --out never
bad "unknown experiment lists the valid ones" "inceptionn-fig12" \
  reproduce nope --out never
bad "a known and an unknown experiment" "unknown experiment 'nope'" \
  reproduce formulas nope --out never
bad "all with other names" "'all' takes no other names" \
  reproduce all formulas --out never
bad "--jobs out of range" "--jobs" reproduce formulas --jobs -1 --out never
bad "unknown option" "reproduce" reproduce --frobnicate --out never
touch afile
bad "--out is a file" "not a directory" reproduce formulas --out afile

# Broken [reproduce] sections (each in an experiments directory of its own).
broken() { # NAME EXPECT SED-EXPRESSION-ON-toy.ini
  local name=$1 want=$2 expr=$3
  rm -rf "$E/b"
  mkdir -p "$E/b"
  sed "$expr" "$E/toy.ini" >"$E/b/toy.ini"
  GRADSIM_EXPERIMENTS_DIR=$E/b bad "$name" "$want" reproduce toy --out never
}
broken "unknown [reproduce] key" "unknown key 'colour'" 's/^title = a toy/colour = red/'
broken "unknown reproduce section" "unknown section \[reproduce.bogus\]" \
  's/^\[reproduce.derive\]/[reproduce.bogus]/'
broken "bad kind" "kind = dance" 's/^title = a toy/title = a toy\nkind = dance/'
broken "claim without paper" "needs text, source, value and paper" \
  '/^paper = 3$/d'
broken "bad paper value" "paper = about 3" 's/^paper = 3$/paper = about 3/'
broken "paper values against groups" "2 values for 3 groups" \
  's/^by = nodes: 2, 4$/by = nodes: 2, 4, 8/'
broken "bad tolerance" "tolerance = loose" 's/^tolerance = abs 1e-12$/tolerance = loose/'
broken "expression syntax" "expected ',' or ')'" \
  's/^value = max(exchange_s) .*/value = max(exchange_s/'
broken "unknown function" "unknown function" \
  's/^value = max(exchange_s) .*/value = median(exchange_s)/'
broken "bad derived expression" "double" 's/^double = 2 \* exchange_s/double = 2 */'
broken "variant key outside the simulation" "must be section.key" \
  's/^exchange.algorithm = rdb/algorithm = rdb/'
broken "variant value the simulation refuses" "variant rdb" \
  's/^exchange.algorithm = rdb/exchange.algorithm = butterfly/'
broken "no claims" "no \[reproduce.claim ID\]" '/^\[reproduce.claim exact\]/,$d'
finish
