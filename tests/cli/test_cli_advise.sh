#!/usr/bin/env bash
# tests/cli/test_cli_advise.sh: `gradsim advise`.
#
#   test_cli_advise.sh GRADSIM SOURCE_ROOT
#
# Checks, on a space small enough to simulate whole, that the pruned
# search finds the exhaustive search's best configuration while
# simulating fewer candidates; that the best.ini it writes reproduces its
# results to the byte under `gradsim run`; that the search is
# deterministic across runs and --jobs; that --max-error excludes what
# errs more; that on ResNet-50 over 16 V100s behind 10 GbE it recommends
# a codec faster than every configuration without one it simulated; and
# that bad input of every kind exits 2 with one line and writes nothing.
set -u
export LC_ALL=C
G=$1
SRC=${2:-.}
case $G in /*) ;; *) G=$PWD/$G ;; esac
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
. "$SRC/tests/cli/lib.sh"
workdir advise

# A synthetic model on 8 workers behind 1 Gb/s: 62 candidates, 42 of
# which the engine runs, each in a few milliseconds.
cat >space.ini <<'EOF'
# A small space, small enough to simulate whole.
[exchange]
codec = none, q8, topk:ratio=0.01, onebit, terngrad
algorithm = ring, rabenseifner, allgather-rdb
compression = per-hop, per-bucket
[training]
fusion_bytes = 1MB, 4MB
EOF
SMALL=(--model synthetic --platform nodes=8,bandwidth=1Gbps,ideal=true
  --set model.params=4800000 --set model.tensors=8 --set model.compute=0.02
  --space space.ini)
# state_count DIR STATE: candidates.csv's rows in that state.
state_count() { awk -F, -v s="$2" 'NR > 1 && $2 == s { n++ } END { print n + 0 }' "$1/candidates.csv"; }
# column DIR NAME [STATE] [CODEC]: the column NAME of candidates.csv's rows
# (in STATE; with [exchange] codec CODEC), one a line (fields unquoted).
column() {
  awk -F, -v c="$2" -v s="${3:-}" -v k="${4:-}" '
    NR == 1 { for (i = 1; i <= NF; i++) { if ($i == c) n = i; if ($i == "exchange.codec") q = i }; next }
    (s == "" || $2 == s) && (k == "" || $q == k) { print $n }' "$1/candidates.csv"
}
best_of() { head -1 "$1/best.ini"; }

if run_ok "advise: a small space, pruned" advise "${SMALL[@]}" --out pruned; then
  run_ok "advise: the same space, exhaustive" advise "${SMALL[@]}" \
    --exhaustive --out whole
  sp=$(state_count pruned simulated) pp=$(state_count pruned pruned)
  sw=$(state_count whole simulated) pw=$(state_count whole pruned)
  [ "$pp" -gt 0 ] && [ "$sp" -lt "$sw" ] && [ "$pw" -eq 0 ]
  check "advise: pruning simulates fewer ($sp of $sw; $pp pruned)" $?
  [ "$(best_of pruned)" = "$(best_of whole)" ]
  check "advise: the pruned search's best is the exhaustive one's" $? \
    "pruned: $(best_of pruned)" "exhaustive: $(best_of whole)"
  # The exhaustive search's fastest simulated row is its recommendation.
  least=$(column whole simulated_s simulated | sort -g | head -1)
  abs_le "$(csv_get whole/runs.csv 1 iteration_s)" "$least" "$least" 1e-5
  check "advise: best.ini's runs.csv is the fastest simulated ($least s)" $? \
    "runs.csv: $(csv_get whole/runs.csv 1 iteration_s)"
  # best.ini reproduces the results byte for byte.
  run_ok "advise: gradsim run best.ini" run pruned/best.ini --out rerun -q
  same=0
  for f in runs.csv iterations.csv links.csv nccl.csv; do
    cmp -s "pruned/$f" "rerun/$f" || same=1
  done
  check "advise: gradsim run of best.ini gives its results to the byte" $same
  # Deterministic: again, with one process.
  run_ok "advise: again with --jobs 1" advise "${SMALL[@]}" --jobs 1 --out again
  cmp -s pruned/candidates.csv again/candidates.csv &&
    cmp -s pruned/best.ini again/best.ini
  check "advise: the same space and seed give the same candidates.csv" $?
  # Every row has a state; simulated ones a time and a residual.
  nsim=$(column pruned simulated_s simulated | grep -c .)
  nres=$(column pruned simulated_over_predicted simulated | grep -c .)
  [ "$(column pruned state | grep -c .)" -eq "$(csv_rows pruned/candidates.csv)" ] &&
    [ "$nsim" -eq "$sp" ] && [ "$nres" -eq "$sp" ]
  check "advise: candidates.csv rows complete" $?
  [ -s pruned/advice.dat ] && [ -s pruned/advice.gp ]
  check "advise: advice.dat and advice.gp written" $?
  if command -v gnuplot >/dev/null 2>&1; then
    [ -s pruned/advice.png ] && [ -s pruned/advice.svg ]
    check "advise: advice.png and .svg drawn" $?
  fi
fi

# --max-error: nothing simulated errs more.
if run_ok "advise: --max-error 0.05" advise "${SMALL[@]}" --max-error 0.05 --out tight -q; then
  worst=$(column tight relative_error simulated | sort -g | tail -1)
  awk -v w="$worst" 'BEGIN { exit !(w <= 0.05) }' &&
    [ "$(state_count tight excluded)" -gt "$(state_count pruned excluded)" ]
  check "advise: --max-error excludes what errs more (worst simulated $worst)" $?
fi

# A codec's error is measured on each candidate's own gradients: INCEPTIONN's
# absolute bound loses every value of gradients at scale 5e-4, few at 0.1.
printf '[exchange]\ncodec = inceptionn\nalgorithm = ring\n[gradients]\nscale = 5e-4, 1e-1\n' >scales.ini
if run_ok "advise: a space of gradient scales" advise --model resnet18 \
  --platform nodes=4,bandwidth=1Gbps --space scales.ini --max-error inf --out scales -q; then
  small=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "gradients.scale") g = i; if ($i == "relative_error") e = i }; next }
    $g == "5e-4" { print $e; exit }' scales/candidates.csv)
  large=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "gradients.scale") g = i; if ($i == "relative_error") e = i }; next }
    $g == "1e-1" { print $e; exit }' scales/candidates.csv)
  awk -v a="$small" -v b="$large" 'BEGIN { exit !(a > 0.9 && b < 0.1) }'
  check "advise: each candidate's codec error from its own gradients ($small at 5e-4, $large at 0.1)" $?
fi

# ResNet-50 over 16 V100s behind 10 GbE (the default space): a codec
# that beats every configuration without one.
if run_ok "advise: ResNet-50, 16 V100, 10 GbE" advise --model resnet50 \
  --platform nodes=16,bandwidth=10Gbps --set model.device=V100 --out resnet -q; then
  codec=$(csv_get resnet/runs.csv 1 codec)
  t=$(csv_get resnet/runs.csv 1 iteration_s)
  plain=$(column resnet simulated_s simulated none | sort -g | head -1)
  [ "$codec" != none ] && [ -n "$plain" ] && awk -v a="$t" -v b="$plain" 'BEGIN { exit !(a < b) }'
  check "advise: ResNet-50 recommends a codec ($codec, $t s) over no codec ($plain s)" $?
  grep -q "the speed of the best configuration without a codec" "$L/out"
  check "advise: the recommendation gives its reason" $? "$(head -c 400 "$L/out")"
  run_ok "advise: gradsim run of ResNet-50's best.ini" run resnet/best.ini --out resnet-run -q
  same=0
  for f in runs.csv iterations.csv links.csv nccl.csv; do
    cmp -s "resnet/$f" "resnet-run/$f" || same=1
  done
  check "advise: ResNet-50's best.ini reproduces its results to the byte" $same
fi

# Bad input: one line, status 2, nothing written.
printf '[exchange]\nnosuch = 1, 2\n' >unknown.ini
printf '# no keys\n' >empty.ini
printf '[exchange]\ncodec = none, nosuch\n' >badvalue.ini
printf '[exchange]\ncodec =\n' >novalue.ini
printf '[exchange]\ncodec = none, q8\ncodec = topk\n' >twice.ini
bad() { # NAME PATTERN ARGS...
  local name=$1 pat=$2
  shift 2
  rm -rf badout
  run advise "$@" --out badout
  [ "$RC" -eq 2 ] && [ "$(nlines "$L/err")" -eq 1 ] && grep -q -- "$pat" "$L/err" &&
    [ ! -e badout ]
  check "advise: bad input: $name" $? "status $RC" "$(err_head)"
}
bad "no model" "name a model" --platform nodes=4
bad "no platform" "name the cluster" --model resnet50
bad "budget 0" "budget 0 must be" --model resnet50 --platform nodes=4 --budget 0
bad "negative max-error" "max-error -1" --model resnet50 --platform nodes=4 --max-error -1
bad "unknown key in the space" "unknown key 'nosuch'" --model resnet50 --platform nodes=4 --space unknown.ini
bad "empty space" "the space is empty" --model resnet50 --platform nodes=4 --space empty.ini
bad "bad value in the space" "unknown codec 'nosuch'" --model resnet50 --platform nodes=4 --space badvalue.ini
bad "key without values" "empty value" --model resnet50 --platform nodes=4 --space novalue.ini
bad "a key twice in the space" "twice.ini:3: \[exchange\] codec is given twice" --model resnet50 --platform nodes=4 --space twice.ini
bad "missing space file" "nofile.ini" --model resnet50 --platform nodes=4 --space nofile.ini
bad "unknown model" "unknown model 'nosuch'" --model nosuch --platform nodes=4
bad "platform item without a value" "no such file" --model resnet50 --platform nodes
bad "platform key with a section" "is not KEY=VALUE" --model resnet50 --platform 'model.name=x,nodes=4'
bad "a swept --set" "searches a space" --model resnet50 --platform nodes=4 --set exchange.codec=q8,none
bad "unknown --set section" "unknown section" --model resnet50 --platform nodes=4 --set nosuch.key=1
bad "extra argument" "unexpected argument" --model resnet50 --platform nodes=4 extra
bad "a model that fits nowhere" "does not fit the GPU in any configuration" \
  --model gpt-18b --platform nodes=4 --set model.device=A100-40GB
printf '[exchange]\ncodec = 3lc\ncompression = per-hop\n' >refused.ini
bad "every candidate refused" "no candidate of the space can run" \
  --model resnet50 --platform nodes=4 --set exchange.algorithm=ring --space refused.ini
touch afile
run advise --model resnet50 --platform nodes=4 --out afile
[ "$RC" -eq 2 ] && [ "$(nlines "$L/err")" -eq 1 ] && grep -q "not a directory" "$L/err" && [ ! -s afile ]
check "advise: bad input: --out a file" $? "status $RC" "$(err_head)"

finish
