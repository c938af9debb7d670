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
. "$SRC/tests/cli/lib.sh"
workdir repro
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
  for o in --quick --jobs --out --off --ablation; do
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
      "$(grep -q '^| claim | kind | paper | gradsim | ratio | within tolerance? |$' \
        "$d/$n.md"; echo $?)"
    # claims.csv: `within` (before the last column, kind) says yes or no
    # for every claim but those the experiment marks not evaluable.
    bad=$(awk -F, 'NR > 1 && $(NF-1) != "yes" && $(NF-1) != "no"' \
      "$d/claims.csv" | wc -l)
    ne=$(grep -c '^not_evaluable' "$SRC/experiments/$n.ini")
    rows=$(csv_rows "$d/claims.csv")
    check "$n: all $rows claims evaluate ($ne not evaluable)" \
      "$([ "$bad" = "$ne" ] && [ "$rows" -gt 0 ]; echo $?)" \
      "$(grep -A5 '^Not evaluated' "$d/$n.md")"
    check "$n.md has one table row per claim" \
      "$([ "$(grep -c '^| .* | \(yes\|\*\*no\*\*\|no\|not evaluated\|not evaluable\) (' \
        "$d/$n.md")" = "$rows" ]; echo $?)"
    # --quick cuts sizes, never designs: every variant is in runs.csv.
    miss=
    while IFS= read -r v; do
      [ -n "$v" ] || continue
      awk -F, -v v="$v" 'NR > 1 && $1 == v { f = 1 } END { exit !f }' \
        "$d/runs.csv" || miss+=" [$v]"
    done < <(sed -n 's/^\[reproduce\.variant \([^]#]*\).*\]$/\1/p' \
      "$SRC/experiments/$n.ini" | sort -u)
    check "$n: the quick run simulates every variant" "$(isempty "$miss")" \
      "missing:$miss"
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
    "$(awk -F, '$1 == "ring" { exit !($(NF-1) == "yes") }' q/formulas/claims.csv; echo $?)"
  check "inceptionn-fig14: truncation ratios are exact" \
    "$(awk -F, '$1 ~ /^trunc/ && $(NF-1) != "yes" { f = 1 } END { exit f }' \
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
kind = check
text = ring on 4 workers equals its formula
source = here
value = exchange_s{variant=ring, nodes=4} / formula_exchange_s{variant=ring, nodes=4}
paper = 1
tolerance = rel 1e-9
[reproduce.claim by]
kind = validation
text = rdb over ring
source = here
value = exchange_s{variant=rdb} / exchange_s{variant=ring}
by = nodes: 2, 4
paper = 1..2, >0
[reproduce.claim agg]
kind = validation
text = max over min
source = here
value = max(exchange_s) / min(exchange_s{nodes=min}) + 0 * count(exchange_s) - abs(-1) + 1
paper = <100
[reproduce.claim derived]
kind = check
text = derived columns
source = here
value = double{variant=rdb, nodes=max} / exchange_s{variant=rdb, nodes=4} + vs_ring{variant=ring, nodes=2}
paper = 3
tolerance = abs 1e-12
[reproduce.claim missing]
kind = validation
text = a claim on a column that does not exist
source = here
value = no_such_column{variant=ring}
paper = 1
[reproduce.claim many]
kind = validation
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
    "$(awk -F, '$1 == "exact" { exit !($(NF-1) == "yes") }' t/toy/claims.csv; echo $?)"
  check "by: one row per group, each with its paper value" \
    "$([ "$(grep -c '^by,' t/toy/claims.csv)" = 2 ] &&
      grep -q '^by,2,.*,1\.\.2,' t/toy/claims.csv &&
      grep -q '^by,4,.*,>0,' t/toy/claims.csv; echo $?)"
  check "aggregates and derived columns evaluate" \
    "$(awk -F, '($1 == "agg" || $1 == "derived") && $(NF-1) != "yes" { f = 1 } END { exit f }' \
      t/toy/claims.csv; echo $?)"
  check "an unknown column is reported, not fatal" \
    "$(grep -q "^- missing: no column 'no_such_column'" t/toy/toy.md; echo $?)"
  check "a term matching several rows is reported" \
    "$(grep -q '^- many: .*matches 2 rows where one is needed' t/toy/toy.md; echo $?)"
  check "no plot script: a warning, no plot" \
    "$(grep -q 'no plot script' "$L/err" && ! ls t/toy/*.png >/dev/null 2>&1; echo $?)"
fi

# bad input: status 2, one "gradsim: " line, nothing on stdout, nothing
# written.
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

# ---- claim kinds and calibration ----------------------------------------------
# A toy cluster whose latency is "unknown": the calibration claim is the
# ring's exchange time at 4 workers as simulated with latency = 7 us;
# gradsim must find 7 us again by bisection between 1 and 50 us. A
# validation claim that holds and a calibration claim far off (never
# scored) sit beside it.
mkdir -p "$E/cal" "$E/cal2" "$E/cal3"
cat >"$E/cal/known.ini" <<'EOF'
[platform]
nodes = 4
bandwidth = 10Gbps
latency = 7us
ideal = true
[model]
name = synthetic
params = 250000
[exchange]
algorithm = ring
payload = none
[training]
iterations = 1
EOF
if run_ok "the toy cluster at the known latency" run "$E/cal/known.ini" \
  --out known --quiet; then
  col=$(head -1 known/runs.csv | tr , '\n' | grep -nx exchange_s | cut -d: -f1)
  known_s=$(awk -F, -v c="$col" 'NR == 2 { print $c }' known/runs.csv)
  sed -e 's/^latency = 7us/latency = 20us/' "$E/cal/known.ini" >"$E/cal/fit.ini"
  cat >>"$E/cal/fit.ini" <<EOF
[reproduce]
title = calibration toy
source = nowhere
[reproduce.variant ring]
exchange.algorithm = ring
[reproduce.variant rdb]
exchange.algorithm = rdb
[reproduce.calibrate latency]
fit = platform.latency
claim = ring-time
range = 1e-6..5e-5
variants = ring
precision = 1e-6
[reproduce.claim ring-time]
kind = calibration
text = the ring's exchange at 4 workers
source = the known run
value = exchange_s{variant=ring}
paper = $known_s
[reproduce.claim far]
kind = calibration
text = a calibration number far off
source = nowhere
value = exchange_s{variant=ring}
paper = 1000
[reproduce.claim rdb-slower]
kind = validation
text = rdb at least half the ring's time
source = nowhere
value = exchange_s{variant=rdb} / exchange_s{variant=ring}
paper = >0.5
EOF
  if GRADSIM_EXPERIMENTS_DIR=$E/cal GRADSIM_PLOTS_DIR=$E/cal run_ok \
    "a reproduction with a calibration runs" reproduce fit --out c; then
    v=$(awk -F, 'NR == 2 { print $3 }' c/fit/calibration.csv)
    check "calibration finds the known latency (7e-06, got $v)" \
      "$(awk -v v="$v" 'BEGIN { exit !(v > 6.99e-6 && v < 7.01e-6) }'; echo $?)"
    check "the fitted value is used for every variant" \
      "$(awk -F, 'NR > 1 { n++; if ($0 !~ /,7\.0[0-9]*e-06,/) f = 1 }
        END { exit f || n != 2 }' c/fit/runs.csv; echo $?)"
    check "NAME.md lists the fitted parameter and its paper number" \
      "$(grep -q '^| platform.latency = 7' c/fit/fit.md &&
        grep -q '^## Calibrated parameters' c/fit/fit.md; echo $?)"
    check "a calibration claim is never scored (1 of 1 validation)" \
      "$(grep -q '^1 of 1 validation claims within tolerance' c/fit/fit.md &&
        grep -q "^fit  *1 / 1 " "$L/out"; echo $?)" "$(cat "$L/out" c/fit/claims.csv)"
    check "claims.csv gives each claim's kind" \
      "$(grep -q '^far,.*,no,calibration$' c/fit/claims.csv; echo $?)"
  fi
  # apply: the fitted value for the listed variants only.
  sed 's/^variants = ring$/variants = ring\napply = ring/' "$E/cal/fit.ini" \
    >"$E/cal3/fit.ini"
  if GRADSIM_EXPERIMENTS_DIR=$E/cal3 GRADSIM_PLOTS_DIR=$E/cal3 run_ok \
    "a calibration applied to one variant runs" reproduce fit --out c3; then
    check "apply: ring at the fitted latency, rdb at the file's 20 us" \
      "$(grep -q '^ring,.*,7\.0[0-9]*e-06,' c3/fit/runs.csv &&
        grep -q '^rdb,.*,2e-05,' c3/fit/runs.csv; echo $?)" \
      "$(cut -c1-120 c3/fit/runs.csv)"
  fi
  # A key fitted again by a later section takes the later value: the
  # second section's claim is the ring's time at 9 us.
  mkdir -p "$E/cal4"
  sed 's/^latency = 7us/latency = 9us/' "$E/cal/known.ini" >"$E/cal4/known9.ini"
  if run_ok "the toy cluster at 9 us" run "$E/cal4/known9.ini" --out known9 \
    --quiet; then
    known9_s=$(awk -F, -v c="$col" 'NR == 2 { print $c }' known9/runs.csv)
    cat "$E/cal/fit.ini" - >"$E/cal4/fit.ini" <<EOF
[reproduce.calibrate latency again]
fit = platform.latency
claim = ring-time-9
range = 1e-6..5e-5
variants = ring
precision = 1e-6
[reproduce.claim ring-time-9]
kind = calibration
text = the ring's exchange at 4 workers and 9 us
source = the known run
value = exchange_s{variant=ring}
paper = $known9_s
EOF
    if GRADSIM_EXPERIMENTS_DIR=$E/cal4 GRADSIM_PLOTS_DIR=$E/cal4 run_ok \
      "a key fitted twice runs" reproduce fit --out c4; then
      check "a key fitted again takes the later value (9 us in every run)" \
        "$(awk -F, 'NR > 1 { n++; if ($0 !~ /,9\.0[0-9]*e-06,/) f = 1 }
          END { exit f || n != 2 }' c4/fit/runs.csv; echo $?)" \
        "$(cut -c1-120 c4/fit/runs.csv)"
    fi
  fi
  # Mechanisms: --off turns one off (its calibration not fitted, the
  # claim it was fitted to then scored; its overrides applied), and
  # --ablation runs each off and all off beside the full run.
  mkdir -p "$E/mech"
  cat "$E/cal/fit.ini" - >"$E/mech/fit.ini" <<'EOF'
[reproduce.mechanism fitted-latency]
text = the latency fitted to the known run
source = nowhere
calibrate = latency
[reproduce.mechanism fast-link]
text = a 10 Gbps link (off: 12 Gbps)
source = nowhere
off = platform.bandwidth = 12Gbps
EOF
  if GRADSIM_EXPERIMENTS_DIR=$E/mech GRADSIM_PLOTS_DIR=$E/mech run_ok \
    "--off one mechanism runs" reproduce fit --off fitted-latency --out m; then
    check "--off: its calibration is not fitted (the file's 20 us)" \
      "$(awk -F, 'NR > 1 { n++; if ($0 !~ /,2e-05,/) f = 1 }
        END { exit f || n != 2 }' m/fit/runs.csv && [ ! -e m/fit/calibration.csv ]
        echo $?)" "$(cut -c1-120 m/fit/runs.csv)"
    check "--off: the claim it was fitted to is scored" \
      "$(grep -q '^ring-time,.*,validation$' m/fit/claims.csv &&
        grep -q "^fit  *2 / 2 " "$L/out"; echo $?)" "$(cat "$L/out")"
    check "--off: NAME.md says which mechanism is off, and the command" \
      "$(grep -q '^| `fitted-latency` | .* | off |$' m/fit/fit.md &&
        grep -q '^| `fast-link` | .* | on |$' m/fit/fit.md &&
        grep -q 'gradsim reproduce fit --off fitted-latency' m/fit/fit.md
        echo $?)"
  fi
  if GRADSIM_EXPERIMENTS_DIR=$E/mech GRADSIM_PLOTS_DIR=$E/mech run_ok \
    "--ablation runs" reproduce fit --ablation --out a; then
    check "--ablation: each mechanism off and all off, in ablation/" \
      "$([ -s a/fit/ablation/without-fitted-latency/claims.csv ] &&
        [ -s a/fit/ablation/without-fast-link/claims.csv ] &&
        [ -s a/fit/ablation/all-off/claims.csv ]; echo $?)"
    check "--ablation: the link's override applied when it is off" \
      "$(grep -q ',1.2e+10,' a/fit/ablation/without-fast-link/runs.csv &&
        ! grep -q ',1.2e+10,' a/fit/runs.csv; echo $?)"
    check "--ablation: NAME.md and REPORT.md give the scores" \
      "$(grep -q '^| all on | 1 of 1 |$' a/fit/fit.md &&
        grep -q '^| `fitted-latency` off | 2 of 2 |$' a/fit/fit.md &&
        grep -q '^| all off | 2 of 2 |$' a/fit/fit.md &&
        grep -q '^| fit | 1 of 1 | fitted-latency: 2 of 2; fast-link: 1 of 1; all: 2 of 2 |$' a/REPORT.md
        echo $?)" "$(grep -A8 '^Ablation' a/fit/fit.md; grep -A4 '^## Ablation' a/REPORT.md)"
  fi
  GRADSIM_EXPERIMENTS_DIR=$E/mech bad "--off an unknown mechanism" \
    "--off nosuch: none of the reproductions" reproduce fit --off nosuch \
    --out never
  GRADSIM_EXPERIMENTS_DIR=$E/mech bad "--off with --ablation" \
    "give it without --off" reproduce fit --off fast-link --ablation --out never
  sed 's/^calibrate = latency$/calibrate = nosuch/' "$E/mech/fit.ini" \
    >"$E/mech/bad.ini"
  GRADSIM_EXPERIMENTS_DIR=$E/mech bad "a mechanism's unknown calibration" \
    "calibrate: no \[reproduce.calibrate nosuch\]" reproduce bad --out never
  sed 's/^off = platform.bandwidth = 12Gbps$/off = bandwidth = 12Gbps/' \
    "$E/mech/fit.ini" >"$E/mech/bad.ini"
  GRADSIM_EXPERIMENTS_DIR=$E/mech bad "a mechanism's override outside the simulation" \
    "off = bandwidth = 12Gbps: expected NAME = VALUE" reproduce bad --out never
  rm -f "$E/mech/bad.ini"
  # The value must be reachable within the range.
  sed 's/^range = 1e-6..5e-5/range = 2e-5..5e-5/' "$E/cal/fit.ini" \
    >"$E/cal2/fit.ini"
  # (found only by simulating: progress lines come first, the message
  # last, and nothing stays written)
  rm -rf never
  GRADSIM_EXPERIMENTS_DIR=$E/cal2 run reproduce fit --out never
  check "a calibration out of its range: status 2, one message, no files" \
    "$([ "$RC" = 2 ] && [ ! -e never ] && [ ! -s "$L/out" ] &&
      [ "$(grep -c '^gradsim: ' "$L/err")" = 1 ] &&
      tail -1 "$L/err" | grep -q 'both on one side of the paper'; echo $?)" \
    "$(err_head)"
fi

# A measured reproduction (codec-ratio) calibrates on its measurement: the
# gradients' scale that gives INCEPTIONN's ratio at scale 1e-3 is found
# again from between 1e-4 and 1e-2.
mkdir -p "$E/calr" "$E/calr2"
cat >"$E/calr/ratio.ini" <<'EOF'
[platform]
nodes = 4
[model]
name = hdc
[exchange]
algorithm = ring
[gradients]
scale = 1e-3
[reproduce]
kind = codec-ratio
title = codec-ratio calibration toy
source = nowhere
codecs = inceptionn
labels = inc
sample = 4096
steps = 1
[reproduce.claim ratio]
kind = check
text = the ratio at the known scale
source = nowhere
value = ratio{label=inc}
paper = >0
EOF
if GRADSIM_EXPERIMENTS_DIR=$E/calr GRADSIM_PLOTS_DIR=$E/calr run_ok \
  "a codec-ratio toy at the known scale" reproduce ratio --out r0; then
  col=$(head -1 r0/ratio/runs.csv | tr , '\n' | grep -nx ratio | cut -d: -f1)
  known_r=$(awk -F, -v c="$col" 'NR == 2 { print $c }' r0/ratio/runs.csv)
  sed -e 's/^scale = 1e-3/scale = 5e-3/' -e '/^\[reproduce.claim ratio\]/,$d' \
    "$E/calr/ratio.ini" >"$E/calr2/ratio.ini"
  cat >>"$E/calr2/ratio.ini" <<EOF
[reproduce.calibrate scale]
fit = gradients.scale
claim = ratio
range = 1e-4..1e-2
precision = 1e-5
[reproduce.claim ratio]
kind = calibration
text = the ratio at the known scale
source = the known run
value = ratio{label=inc}
paper = $known_r
EOF
  if GRADSIM_EXPERIMENTS_DIR=$E/calr2 GRADSIM_PLOTS_DIR=$E/calr2 run_ok \
    "a codec-ratio reproduction with a calibration runs" reproduce ratio \
    --out r1; then
    v=$(awk -F, 'NR == 2 { print $3 }' r1/ratio/calibration.csv)
    check "calibration on a measurement finds the known scale (1e-3, got $v)" \
      "$(awk -v v="$v" 'BEGIN { exit !(v > 0.99e-3 && v < 1.01e-3) }'; echo $?)"
    check "the measurement uses the fitted value (ratio $known_r again)" \
      "$(awk -F, -v c="$col" -v k="$known_r" 'NR == 2 {
        d = ($c - k) / k; exit !(d < 1e-4 && d > -1e-4) }' r1/ratio/runs.csv
        echo $?)" "$(cat r0/ratio/runs.csv r1/ratio/runs.csv)"
  fi
  # Beside a bound the figure shows the digits that tell it from the
  # bound: the known ratio against itself rounded to 3 digits.
  b=$(awk -v k="$known_r" 'BEGIN { printf "%.3g", k }')
  mkdir -p "$E/bound"
  sed "s/^paper = >0\$/paper = >$b/" "$E/calr/ratio.ini" >"$E/bound/ratio.ini"
  if [ "$b" != "$known_r" ] &&
    GRADSIM_EXPERIMENTS_DIR=$E/bound GRADSIM_PLOTS_DIR=$E/bound run_ok \
      "a bound claim near its figure" reproduce ratio --out rb; then
    row=$(grep '^| the ratio at the known scale' rb/ratio/ratio.md)
    check "a figure beside a bound is not printed as the bound ($b)" \
      "$(echo "$row" | grep -q "| $b |"; [ $? = 1 ]; echo $?)" "$row"
  fi
fi

# warmup: uncounted steps before the measured ones change an
# error-feedback codec's ratio (3LC from a zero residual), and a bad
# count is refused.
mkdir -p "$E/warm"
sed -e 's/^codecs = inceptionn$/codecs = 3lc:s=1.5/' \
  -e 's/^steps = 1$/steps = 2/' "$E/calr/ratio.ini" >"$E/warm/ratio.ini"
sed 's/^steps = 2$/steps = 2\nwarmup = 20/' "$E/warm/ratio.ini" \
  >"$E/warm/warm.ini"
if GRADSIM_EXPERIMENTS_DIR=$E/warm GRADSIM_PLOTS_DIR=$E/warm run_ok \
  "codec-ratio with and without warmup" reproduce ratio warm --out w; then
  # (the claim's figure is claims.csv's 7th column; runs.csv's codec
  # column holds a quoted comma)
  check "warmup = 20 changes 3LC's ratio and is in runs.csv" \
    "$(a=$(awk -F, 'NR == 2 { print $7 }' w/ratio/claims.csv)
      b=$(awk -F, 'NR == 2 { print $7 }' w/warm/claims.csv)
      [ -n "$a" ] && [ "$a" != "$b" ] &&
        grep -q ',4096,20,2,' w/warm/runs.csv; echo $?)" \
    "$(cat w/ratio/claims.csv w/warm/claims.csv w/warm/runs.csv)"
fi
sed 's/^warmup = 20$/warmup = -3/' "$E/warm/warm.ini" >"$E/warm/bad.ini"
GRADSIM_EXPERIMENTS_DIR=$E/warm bad "codec-ratio warmup = -3" "warmup = -3" \
  reproduce bad --out never

# end_to_end = yes (3LC Table 2): three workers' pushes and the server's
# shared pull of their sum. q8's payload has a fixed size, so pushes and
# pull compress alike; 3LC's pull (the sum of three decoded pushes) does
# not, and the end-to-end ratio is the harmonic mean of the two, whatever
# the number of threads.
mkdir -p "$E/e2e"
sed -e 's/^nodes = 4$/nodes = 3/' -e 's/^algorithm = ring$/algorithm = ps-shared/' \
  -e 's/^codecs = inceptionn$/codecs = q8; 3lc:s=1.5/' \
  -e 's/^labels = inc$/labels = q8; 3lc/' -e 's/^steps = 1$/steps = 3\nwarmup = 2\nend_to_end = yes/' \
  -e 's/^value = ratio{label=inc}$/value = ratio{label=3lc}/' \
  "$E/calr/ratio.ini" >"$E/e2e/e2e.ini"
if GRADSIM_EXPERIMENTS_DIR=$E/e2e GRADSIM_PLOTS_DIR=$E/e2e run_ok \
  "codec-ratio end_to_end = yes" reproduce e2e --jobs 1 --out e1 &&
  GRADSIM_EXPERIMENTS_DIR=$E/e2e GRADSIM_PLOTS_DIR=$E/e2e run_ok \
    "codec-ratio end_to_end = yes, two threads" reproduce e2e --jobs 2 \
    --out e2; then
  # (the codec column holds a quoted comma: fields counted from the end)
  check "end_to_end: q8's pushes, pull and whole exchange compress alike" \
    "$(awk -F, 'function near(a, b) { return a - b < 1e-6 * b && b - a < 1e-6 * b }
        NR == 2 { exit !($(NF-2) == 3 && near($NF, $(NF-1)) &&
          near($(NF-7), $NF)) }' e1/e2e/runs.csv; echo $?)" \
    "$(cat e1/e2e/runs.csv)"
  check "end_to_end: 3LC's ratio is the harmonic mean of its push and pull" \
    "$(awk -F, 'NR == 3 { h = 2 / (1 / $(NF-1) + 1 / $NF)
        d = ($(NF-7) - h) / h
        exit !($(NF-1) != $NF && d < 1e-6 && d > -1e-6) }' e1/e2e/runs.csv
      echo $?)" "$(cat e1/e2e/runs.csv)"
  check "end_to_end: the same results with one thread or two" \
    "$(cmp -s e1/e2e/runs.csv e2/e2e/runs.csv; echo $?)"
fi
# pull_momentum: the server's momentum changes what 3LC's pull compresses,
# not the pushes, nor q8's fixed sizes.
sed 's/^end_to_end = yes$/end_to_end = yes\npull_momentum = 0.9/' \
  "$E/e2e/e2e.ini" >"$E/e2e/mom.ini"
if [ -s e1/e2e/runs.csv ] &&
  GRADSIM_EXPERIMENTS_DIR=$E/e2e GRADSIM_PLOTS_DIR=$E/e2e run_ok \
    "codec-ratio pull_momentum = 0.9" reproduce mom --out e3; then
  check "pull_momentum changes 3LC's pull, not its pushes nor q8" \
    "$(paste -d, e1/e2e/runs.csv e3/mom/runs.csv | awk -F, '
        NR == 1 { next }
        { n = NF / 2; same_push = $(n-1) == $(NF-1); same_pull = $n == $NF }
        NR == 2 && !(same_push && same_pull) { f = 1 }
        NR == 3 && !(same_push && !same_pull) { f = 1 }
        END { exit f || NR != 3 }'; echo $?)" \
    "$(cat e1/e2e/runs.csv e3/mom/runs.csv)"
fi
sed 's/^end_to_end = yes$/pull_momentum = 0.9/' "$E/e2e/e2e.ini" \
  >"$E/e2e/bad.ini"
GRADSIM_EXPERIMENTS_DIR=$E/e2e bad "codec-ratio pull_momentum without end_to_end" \
  "needs end_to_end = yes" reproduce bad --out never
sed 's/^end_to_end = yes$/end_to_end = maybe/' "$E/e2e/e2e.ini" \
  >"$E/e2e/bad.ini"
GRADSIM_EXPERIMENTS_DIR=$E/e2e bad "codec-ratio end_to_end = maybe" \
  "end_to_end = maybe: must be yes or no" reproduce bad --out never
sed 's/^algorithm = ps-shared$/algorithm = ring/' "$E/e2e/e2e.ini" \
  >"$E/e2e/bad.ini"
GRADSIM_EXPERIMENTS_DIR=$E/e2e bad "codec-ratio end_to_end without ps-shared" \
  "algorithm = ring" reproduce bad --out never

# ---- bad input: status 2, one line, nothing written ------------------------
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
broken "claim without paper" "needs kind, text, source, value and paper" \
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
broken "claim without a kind" "needs kind" '/^kind = check$/d'
broken "unknown claim kind" "kind = guess: must be validation" \
  's/^kind = check$/kind = guess/'
broken "a wide validation tolerance without a reason" "says why" \
  's/^paper = 1\.\.2, >0$/paper = 1..2, >0\ntolerance = rel 0.5/'
broken "--quick changes a design" "--quick may not change exchange.algorithm" \
  's/^\[reproduce.derive\]/[reproduce.quick]\nexchange.algorithm = rdb\n[reproduce.derive]/'
broken "a variant's quick key changes a schedule" "--quick may not change training.mode" \
  's/^exchange.algorithm = rdb$/exchange.algorithm = rdb\nquick.training.mode = pipe/'
broken "calibration of a validation claim" "no claim of kind calibration" \
  's/^\[reproduce.derive\]/[reproduce.calibrate x]\nfit = platform.latency\nclaim = agg\nrange = 1..2\n[reproduce.derive]/'
broken "calibration with a bad range" "range = 2..1" \
  's/^\[reproduce.derive\]/[reproduce.calibrate x]\nfit = platform.latency\nclaim = agg\nrange = 2..1\n[reproduce.derive]/'
finish
