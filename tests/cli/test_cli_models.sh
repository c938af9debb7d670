#!/usr/bin/env bash
# tests/cli/test_cli_models.sh: command-line behaviour of `gradsim formula`,
# `gradsim model` and `gradsim gradients`.
#
#   test_cli_models.sh GRADSIM SOURCE_ROOT
#
# Checks help and listings, the numbers of the analytic formulas (by hand,
# with awk, to 1e-9 relative), --p lists and ranges, units, the model
# table (names, tensor counts, parameter sums, timing by hand, device,
# precision and batch), the synthetic gradients (.npy header, sizes,
# determinism, seeds, workers, iterations, correlation, scale and decay,
# distributions, tensor-by-tensor = whole model), and that every kind of
# bad input exits with status 2, prints exactly one "gradsim: ..." line on
# stderr, nothing on stdout, and writes nothing.
#
# Inputs (small model files, good and malformed) are written here. python3,
# when present, reads the .npy header as a dict; without it the header is
# checked with od and grep only (with a note).
#
# SOURCE_ROOT is accepted for meson's interface; gradsim reads its model
# files from the directory built into it, so it is not needed.
#
# Exit status: 0 all checks passed, 1 some check failed (each failure is
# printed as "FAIL - NAME" with the command, what was expected and what
# happened; a summary lists them at the end).

set -u
export LC_ALL=C

if [ $# -lt 1 ]; then
  echo "usage: $0 GRADSIM [SOURCE_ROOT]" >&2
  exit 1
fi
G=$1
SRC=${2:-.}
case $G in /*) ;; *) G=$PWD/$G ;; esac
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
if [ ! -x "$G" ]; then
  echo "FAIL: $G is not an executable file"
  exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/gradsim-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM
W=$T/w   # everything gradsim may write goes here (and it runs from here)
L=$T/log # captured stdout/stderr, outside W
mkdir -p "$W/in" "$W/ok" "$W/bad" "$L"
cd "$W" || exit 1

PY=
# (GRADSIM_TEST_NO_PYTHON=1 exercises the fallbacks used without python3.)
if [ -z "${GRADSIM_TEST_NO_PYTHON:-}" ] && command -v python3 >/dev/null 2>&1; then
  PY=python3
fi
TIMEOUT=
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 120"; fi

npass=0
nfail=0
FAILED=()
isempty() { [ -z "$1" ]; echo $?; }
pass() { npass=$((npass + 1)); echo "ok   - $1"; }
fail() {
  nfail=$((nfail + 1))
  FAILED+=("$1")
  echo "FAIL - $1"
  shift
  local line
  for line in "$@"; do printf '%s\n' "$line" | sed 's/^/       /'; done
}
check() { # NAME COND-STATUS [details...]: pass when the status is 0
  local name=$1 st=$2
  shift 2
  if [ "$st" -eq 0 ]; then pass "$name"; else fail "$name" "$@"; fi
}

# run ARGS...: run gradsim; RC, $L/out, $L/err.
run() {
  $TIMEOUT "$G" "$@" >"$L/out" 2>"$L/err"
  RC=$?
}
quote() { [ $# -eq 0 ] || printf '%q ' "$@"; }
err_head() { head -c 600 "$L/err" | sed 's/^/stderr| /'; }
nlines() { awk 'END { print NR }' "$1"; }
fsize() { wc -c <"$1" | tr -d ' '; }

# run_ok NAME ARGS...: expect status 0.
run_ok() {
  local name=$1
  shift
  run "$@"
  if [ "$RC" -eq 0 ]; then
    return 0
  fi
  fail "$name" "command: gradsim $(quote "$@")" "expected exit 0, got $RC" \
    "$(err_head)"
  return 1
}

# rel_eq A B [TOL]: numbers equal within relative TOL (default 1e-9) of the
# larger magnitude (both zero is equal).
rel_eq() {
  awk -v a="$1" -v b="$2" -v t="${3:-1e-9}" 'BEGIN {
    re = "^-?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?$"
    if (a !~ re || b !~ re) exit 1
    a += 0; b += 0
    d = a - b; if (d < 0) d = -d
    m = a < 0 ? -a : a; n = b < 0 ? -b : b; if (n > m) m = n
    exit !(d <= t * m) }'
}
# calc EXPR: EXPR evaluated by awk, printed with 17 digits.
calc() { awk "BEGIN { printf \"%.17g\\n\", $1 }"; }

# csv_get FILE ROW COLUMN: the field under header COLUMN in data row ROW
# (1 = the first line after the header); "MISSING" when there is none.
csv_get() {
  awk -F ',' -v r="$2" -v c="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
    NR == r + 1 { if (k) { print $k; f = 1 } exit }
    END { if (!f) print "MISSING" }' "$1"
}
# csv_find FILE KEY COLUMN: the field under COLUMN in the row whose first
# field is KEY.
csv_find() {
  awk -F ',' -v key="$2" -v c="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
    $1 == key { if (k) { print $k; f = 1 } exit }
    END { if (!f) print "MISSING" }' "$1"
}
csv_rows() { echo $(($(nlines "$1") - 1)); }

# ---- help -----------------------------------------------------------------

if run_ok "gradsim --help exits 0" --help; then
  miss=
  for c in formula gradients model; do grep -qw "$c" "$L/out" || miss+=" $c"; done
  check "gradsim --help lists formula, gradients and model" "$(isempty "$miss")" \
    "missing:$miss" "stdout: $(head -c 400 "$L/out")"
fi
for c in formula gradients model; do
  if run_ok "gradsim $c --help exits 0" "$c" --help; then
    grep -q -- '--' "$L/out"
    check "gradsim $c --help prints usage with options" $?
  fi
done
if run_ok "gradsim model --help (options) exits 0" model --help; then
  grep -qw list "$L/out" && grep -qw show "$L/out"
  check "gradsim model --help names list and show" $?
fi

# ---- formula ----------------------------------------------------------------

FORMULAS="inceptionn-wa inceptionn-ring ring-lr nccl-ring nccl-rings nccl-tree nccl-rail ring rdb rabenseifner bcast-binomial
reduce-binomial allgather-rdb hierarchical ps ps-direct redsync-sparse redsync-dense
pipesgd-sync pipesgd-ideal pipesgd-pipe pipesgd-seq pipesgd-pipelined
pipesgd-efficiency"

if run_ok "formula --list exits 0" formula --list; then
  got=$(grep -o '^[a-z][a-z0-9-]*' "$L/out" | sort | tr '\n' ' ')
  want=$(printf '%s\n' $FORMULAS | sort | tr '\n' ' ')
  [ "$got" = "$want" ]
  check "formula --list lists exactly the 24 formulas" $? "want: $want" "got:  $got"
  bad=
  for f in $FORMULAS; do
    awk -v f="$f" '/^[a-z]/ { on = ($1 == f) } on && /needs:/ { ok = 1 } END { exit !ok }' \
      "$L/out" || bad+=" $f"
  done
  check "formula --list gives each formula's needed parameters" "$(isempty "$bad")" \
    "no 'needs:' line for:$bad"
fi

NET=(--n 64MB --alpha 5us --bandwidth 10Gbps)
# fcsv NAME FILE ARGS...: formula csv into $L/FILE.
fcsv() {
  local name=$1 file=$2
  shift 2
  run_ok "$name exits 0" formula "$@" --format csv || return 1
  cp "$L/out" "$L/$file"
}

# ring-lr at p = 3 on 10 values (40 B) by hand: blocks of b = 3 values
# (12 B) around the ring, the r = 1 value left (4 B) by a linear reduce,
# alpha + (p-1) 4 (beta + gamma), and a binomial broadcast of ceil(lg 3) = 2
# rounds, 2 (alpha + 4 beta); beta = 8e-10 s/B, gamma = 1e-9 s/B. nccl-ring
# on the same: 2(p-1) steps of the larger block, 4 values (16 B).
if fcsv "formula ring-lr --p 3 --n 40B csv" lr3 ring-lr --p 3 --n 40B \
  --alpha 5us --bandwidth 10Gbps --gamma 1e-9; then
  want=$(calc "4 * (5e-6 + 12 * 8e-10) + 2 * 12 * 1e-9 + 5e-6 + 2 * 4 * (8e-10 + 1e-9) + 2 * (5e-6 + 4 * 8e-10)")
  got=$(csv_get "$L/lr3" 1 total_s)
  rel_eq "$got" "$want"
  check "formula ring-lr p=3 n=40B: ring on 12 B blocks + linear reduce + binomial broadcast of 4 B = $want" \
    $? "got total_s $got"
fi
if fcsv "formula nccl-ring --p 3 --n 40B csv" nccl3 nccl-ring --p 3 --n 40B \
  --alpha 5us --bandwidth 10Gbps --gamma 1e-9; then
  want=$(calc "4 * (5e-6 + 16 * 8e-10) + 2 * 16 * 1e-9")
  got=$(csv_get "$L/nccl3" 1 total_s)
  rel_eq "$got" "$want"
  check "formula nccl-ring p=3 n=40B: 2(p-1) steps of 16 B = $want" $? "got total_s $got"
fi

# ring at p = 4 by hand: 2(p-1) alpha + 2((p-1)/p) n beta + ((p-1)/p) n gamma.
if fcsv "formula ring --p 4 csv" ring4 ring --p 4 "${NET[@]}" --gamma 0; then
  hdr=$(head -1 "$L/ring4")
  case $hdr in
  formula,p,n_bytes,alpha_s,beta_s_per_byte,gamma_s_per_byte,total_s,*) st=0 ;;
  *) st=1 ;;
  esac
  check "formula csv: header starts formula,p,n_bytes,alpha_s,beta_s_per_byte,gamma_s_per_byte,total_s" \
    $st "got: $hdr"
  [ "$(csv_rows "$L/ring4")" = 1 ]
  check "formula ring --p 4: one row" $? "$(cat "$L/ring4")"
  want=$(calc "6 * 5e-6 + 2 * (3 / 4) * 64e6 * 8 / 10e9")
  got=$(csv_get "$L/ring4" 1 total_s)
  rel_eq "$got" "$want"
  check "formula ring p=4 n=64MB alpha=5us 10Gbps gamma=0: total = 6*5e-6 + 1.5*64e6*8/10e9 = $want" \
    $? "got total_s $got"
  lat=$(csv_get "$L/ring4" 1 latency) bw=$(csv_get "$L/ring4" 1 bandwidth)
  rel_eq "$lat" 3e-5 && rel_eq "$bw" "$(calc "1.5 * 64e6 * 8e-10")"
  check "formula ring p=4: latency 3e-5, bandwidth 0.0768" $? "got latency $lat, bandwidth $bw"
  [ "$(csv_get "$L/ring4" 1 n_bytes)" = 64000000 ] &&
    rel_eq "$(csv_get "$L/ring4" 1 beta_s_per_byte)" 8e-10 &&
    rel_eq "$(csv_get "$L/ring4" 1 alpha_s)" 5e-6
  check "formula csv: n_bytes 64000000, alpha_s 5e-6, beta_s_per_byte 8e-10 (10Gbps)" $? \
    "row: $(sed -n 2p "$L/ring4")"
fi

# --p forms.
pcol() { awk -F ',' 'NR > 1 { printf "%s ", $2 }' "$1"; }
for spec in "2,4,8:2 4 8 " "2..5:2 3 4 5 " "2..1024x2:2 4 8 16 32 64 128 256 512 1024 " \
  "7:7 " "3..3:3 " "1..10x3:1 3 9 "; do
  p=${spec%%:*} want=${spec#*:}
  if fcsv "formula ring --p $p" plist ring --p "$p" "${NET[@]}" --gamma 0; then
    got=$(pcol "$L/plist")
    [ "$got" = "$want" ]
    check "formula --p $p: one row per p ($want)" $? "got p column: $got"
  fi
done
if run_ok "formula ring --p 2..1024x2 (table) exits 0" formula ring --p 2..1024x2 "${NET[@]}" --gamma 0; then
  n=$(awk '$1 ~ /^[0-9]+$/ && NF == 5' "$L/out" | wc -l | tr -d ' ')
  [ "$n" = 10 ]
  check "formula table --p 2..1024x2: 10 rows" $? "got $n rows" "$(head -c 600 "$L/out")"
fi

# Units.
fcsv "formula ring --bandwidth 1.25GBps" ringB ring --p 4 --n 64MB --alpha 5us --bandwidth 1.25GBps --gamma 0 &&
  if [ -f "$L/ring4" ]; then
    a=$(csv_get "$L/ring4" 1 total_s) b=$(csv_get "$L/ringB" 1 total_s)
    rel_eq "$a" "$b" 1e-12 && rel_eq "$(csv_get "$L/ringB" 1 beta_s_per_byte)" 8e-10
    check "units: 10Gbps == 1.25GBps (same beta, same total)" $? "totals $a vs $b"
  fi
fcsv "formula ring --beta 8e-10" ringbeta ring --p 4 --n 64MB --alpha 5us --beta 8e-10 --gamma 0 &&
  if [ -f "$L/ring4" ]; then
    a=$(csv_get "$L/ring4" 1 total_s) b=$(csv_get "$L/ringbeta" 1 total_s)
    rel_eq "$a" "$b" 1e-12
    check "--beta 8e-10 gives the same total as --bandwidth 10Gbps" $? "totals $b vs $a"
  fi
if fcsv "formula ring --n 64MiB" ringMi ring --p 4 --n 64MiB --alpha 5us --bandwidth 10Gbps --gamma 0; then
  nb=$(csv_get "$L/ringMi" 1 n_bytes) bw=$(csv_get "$L/ringMi" 1 bandwidth)
  [ "$nb" = 67108864 ] && rel_eq "$bw" "$(calc "1.5 * 67108864 * 8e-10")"
  check "units: 64MiB = 67108864 bytes (vs 64MB = 64000000) and bandwidth term scales" $? \
    "n_bytes $nb, bandwidth $bw"
fi
fcsv "formula ring --n 512Mb (bits)" ringbits ring --p 4 --n 512Mb --alpha 5us --bandwidth 10Gbps --gamma 0 &&
  { [ "$(csv_get "$L/ringbits" 1 n_bytes)" = 64000000 ]
    check "units: --n 512Mb (bits) = 64000000 bytes" $? "n_bytes $(csv_get "$L/ringbits" 1 n_bytes)"; }
fcsv "formula ring --alpha 0.005ms" ringms ring --p 4 --n 64MB --alpha 0.005ms --bandwidth 10Gbps --gamma 0 &&
  { rel_eq "$(csv_get "$L/ringms" 1 alpha_s)" 5e-6
    check "units: --alpha 0.005ms = 5e-6 s" $? "alpha_s $(csv_get "$L/ringms" 1 alpha_s)"; }
if fcsv "formula ring --gamma 2.5e-10" ringg ring --p 4 "${NET[@]}" --gamma 2.5e-10 &&
  fcsv "formula ring --reduce-rate 4GBps" ringr ring --p 4 "${NET[@]}" --reduce-rate 4GBps; then
  a=$(csv_get "$L/ringg" 1 reduction) b=$(csv_get "$L/ringr" 1 reduction)
  rel_eq "$a" "$b" 1e-12 && rel_eq "$a" "$(calc "0.75 * 64e6 * 2.5e-10")" &&
    rel_eq "$(csv_get "$L/ringg" 1 total_s)" "$(csv_get "$L/ringr" 1 total_s)" 1e-12
  check "--reduce-rate 4GBps == --gamma 2.5e-10 (reduction 0.012)" $? \
    "reduction $a (gamma) vs $b (reduce-rate)"
fi

# inceptionn-wa at p = 4 by hand: (1 + lg p) alpha + (p + lg p) n beta +
# (p - 1) n gamma.
if fcsv "formula inceptionn-wa --p 4" incwa inceptionn-wa --p 4 "${NET[@]}" --gamma 1e-10; then
  l=$(csv_get "$L/incwa" 1 latency) b=$(csv_get "$L/incwa" 1 bandwidth)
  r=$(csv_get "$L/incwa" 1 reduction) t=$(csv_get "$L/incwa" 1 total_s)
  rel_eq "$l" 1.5e-5 && rel_eq "$b" "$(calc "6 * 64e6 * 8e-10")" &&
    rel_eq "$r" "$(calc "3 * 64e6 * 1e-10")" &&
    rel_eq "$t" "$(calc "3 * 5e-6 + 6 * 64e6 * 8e-10 + 3 * 64e6 * 1e-10")"
  check "formula inceptionn-wa p=4: 3 alpha + 6 n beta + 3 n gamma by hand" $? \
    "got latency $l bandwidth $b reduction $r total $t"
fi
# rdb at p = 6: lg 4 = 2 rounds plus the fold (2 alpha + 2 n beta + n gamma).
if fcsv "formula rdb --p 6" rdb6 rdb --p 6 "${NET[@]}" --gamma 1e-10; then
  t=$(csv_get "$L/rdb6" 1 total_s)
  rel_eq "$t" "$(calc "2 * (5e-6 + 64e6 * 8e-10 + 64e6 * 1e-10) + 2 * 5e-6 + 2 * 64e6 * 8e-10 + 64e6 * 1e-10")"
  check "formula rdb p=6: 2 rounds + fold by hand" $? "got total $t"
fi

# Every formula: the terms add up to the total in every row.
ALL=(--n 64MB --alpha 5us --bandwidth 10Gbps --gamma 1e-10 --aggregators 2
  --group 4 --alpha-intra 1us --bandwidth-intra 100Gbps --density 0.01
  --t-select 1ms --iterations 100 --k 2 --t-up 1ms --t-for 10ms --t-back 20ms
  --t-b 5ms --segments 4 --sync 10us --t-comp 30ms --t-comm 25ms
  --nics 2 --channels 4 --chunk 512KiB)
for f in $FORMULAS; do
  case $f in
  allgather-rdb) p=1..1024x2 ;;
  hierarchical | nccl-rings | nccl-tree | nccl-rail) p=4..64x2 ;;
  *) p=1..17 ;;
  esac
  fcsv "formula $f --p $p (all parameters)" fall "$f" --p "$p" "${ALL[@]}" || continue
  bad=$(awk -F ',' -v f="$f" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^total/) k = i; nf = NF; next }
    { s = 0; for (i = k + 1; i <= NF; i++) s += $i
      d = s - $k; if (d < 0) d = -d; m = $k < 0 ? -$k : $k
      if (NF != nf || $1 != f || d > 1e-9 * (m > 1e-300 ? m : 1e-300)) print NR ": " $0 }
    END { if (!k || NR < 2) print "no total column or no rows" }' "$L/fall" | head -3)
  check "formula $f: every csv row's terms add up to its total" "$(isempty "$bad")" \
    "rows where they do not:" "$bad"
done

# ---- model ----------------------------------------------------------------

MODELS="alexnet cifar100-cnn cifar100-convex hdc lstm-ptb lstm-wiki2 mnist-mlp
resnet101 resnet110 resnet18 resnet44 resnet50 vgg16 vgg16-cifar
bert-large gpt2 gpt2-xl llama-2-7b llama-2-13b llama-3-8b mistral-7b
qwen2-7b gemma-7b gemma-2-9b phi-3-mini-4k mixtral-8x7b gpt-18b"
num_re='^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$'

if run_ok "model list exits 0" model list; then
  # the rows: between the header and the first empty line
  got=$(awk 'NR > 1 && NF == 0 { exit } NR > 1 { print $1 }' "$L/out" | sort | tr '\n' ' ')
  want=$(printf '%s\n' $MODELS | sort | tr '\n' ' ')
  [ "$got" = "$want" ]
  check "model list lists exactly the 27 models" $? "want: $want" "got:  $got"
fi
if run_ok "model list --format csv exits 0" model list --format csv; then
  cp "$L/out" "$L/list.csv"
  H=model,dataset,params,mbytes,tensors,batch,forward_s,backward_s,update_s
  bad=$(awk -F ',' -v re="$num_re" 'NR == 1 { next }
    { ok = NF == 9 && $1 != ""; for (i = 3; i <= 9; i++) if ($i !~ re) ok = 0
      if ($3 !~ /^[0-9]+$/ || $5 !~ /^[0-9]+$/ || $6 !~ /^[0-9]+$/) ok = 0
      if (!ok) print NR ": " $0 }' "$L/list.csv" | head -3)
  got=$(awk -F ',' 'NR > 1 { print $1 }' "$L/list.csv" | sort | tr '\n' ' ')
  [ "$(head -1 "$L/list.csv")" = "$H" ] && [ "$got" = "$want" ] && [ -z "$bad" ]
  check "model list csv: header, 27 rows of 9 fields (names, then numbers)" $? \
    "header: $(head -1 "$L/list.csv")" "models: $got" "bad rows: $bad"
  bad=
  for m in $MODELS; do
    run model show "$m" --format csv
    if [ "$RC" -ne 0 ]; then
      bad+=" $m(show exit $RC)"
      continue
    fi
    nt=$(csv_rows "$L/out")
    sum=$(awk -F ',' 'NR > 1 { s += $2 } END { printf "%.0f", s }' "$L/out")
    [ "$nt" = "$(csv_find "$L/list.csv" "$m" tensors)" ] || bad+=" $m(tensors $nt vs list $(csv_find "$L/list.csv" "$m" tensors))"
    [ "$sum" = "$(csv_find "$L/list.csv" "$m" params)" ] || bad+=" $m(sum of elements $sum vs params $(csv_find "$L/list.csv" "$m" params))"
    [ "$(head -1 "$L/out")" = "tensor,elements,layer,backward_s,shape" ] || bad+=" $m(header)"
    # Every shipped tensor has a shape whose product is its elements.
    awk -F ',' -v re="$num_re" 'NR > 1 { n = split($5, d, "x"); p = 1
        for (i = 1; i <= n; i++) p *= d[i]
        if (NF != 5 || $2 !~ /^[1-9][0-9]*$/ || $4 !~ re || $5 !~ /^[1-9][0-9]*(x[1-9][0-9]*)*$/ || p != $2) exit 1 }' \
      "$L/out" || bad+=" $m(malformed row)"
  done
  check "model show --format csv of every model: its tensor rows (with shapes) match the list's tensors and params" \
    "$(isempty "$bad")" "problems:$bad"
  # alexnet on P100 fp32 is measured (1670 img/s): forward + backward =
  # batch / rate; update = 20 bytes per parameter at 732e9 B/s.
  f=$(csv_find "$L/list.csv" alexnet forward_s) b=$(csv_find "$L/list.csv" alexnet backward_s)
  u=$(csv_find "$L/list.csv" alexnet update_s)
  rel_eq "$(calc "$f + $b")" "$(calc "128 / 1670")" 2e-5 && rel_eq "$u" "$(calc "20 * 60967976 / 732e9")" 2e-5 &&
    [ "$(csv_find "$L/list.csv" alexnet batch)" = 128 ]
  check "model list: alexnet on P100 at batch 128: forward+backward = 128/1670 s, update = 20*params/732e9 s" $? \
    "forward $f backward $b update $u"
fi

if run_ok "model show alexnet --format csv exits 0" model show alexnet --format csv; then
  nt=$(csv_rows "$L/out")
  sum=$(awk -F ',' 'NR > 1 { s += $2 } END { printf "%.0f", s }' "$L/out")
  [ "$nt" = 26 ] && [ "$sum" = 60967976 ]
  check "model show alexnet: 26 tensors whose elements sum to 60967976" $? "got $nt tensors, sum $sum"
  first=$(sed -n 2p "$L/out" | cut -d, -f1)
  [ "$first" = fc8.bias ]
  check "model show alexnet: backward order starts with fc8.bias" $? "first tensor $first"
fi
if run_ok "model show alexnet (table) exits 0" model show alexnet; then
  grep -q '60967976' "$L/out" && grep -q '26 gradient tensors' "$L/out" &&
    grep -q 'on P100 fp32 at batch 128' "$L/out"
  check "model show alexnet table: params, 26 gradient tensors, P100 fp32 batch 128" $? \
    "$(head -3 "$L/out")"
fi

# Device, precision, batch.
if run_ok "model list --device V100 --precision mixed --batch 256 --format csv exits 0" \
  model list --device V100 --precision mixed --batch 256 --format csv && [ -f "$L/list.csv" ]; then
  cp "$L/out" "$L/listv.csv"
  f=$(csv_find "$L/listv.csv" alexnet forward_s) b=$(csv_find "$L/listv.csv" alexnet backward_s)
  u=$(csv_find "$L/listv.csv" alexnet update_s)
  rel_eq "$(calc "$f + $b")" "$(calc "256 / 3700")" 2e-5 &&
    rel_eq "$u" "$(calc "20 * 60967976 / 900e9")" 2e-5 &&
    [ "$(csv_find "$L/listv.csv" alexnet batch)" = 256 ]
  check "model list: alexnet on V100 mixed at batch 256: forward+backward = 256/3700 s, update at 900e9 B/s" $? \
    "forward $f backward $b update $u batch $(csv_find "$L/listv.csv" alexnet batch)"
  bad=
  for m in $MODELS; do
    for c in forward_s backward_s update_s; do
      [ "$(csv_find "$L/listv.csv" "$m" "$c")" != "$(csv_find "$L/list.csv" "$m" "$c")" ] ||
        bad+=" $m.$c"
    done
  done
  check "model list: --device V100 --precision mixed --batch 256 changes every model's times" \
    "$(isempty "$bad")" "unchanged:$bad"
fi
if run_ok "model show alexnet --device V100 --precision mixed --batch 256 exits 0" \
  model show alexnet --device V100 --precision mixed --batch 256; then
  grep -q 'on V100 mixed at batch 256' "$L/out"
  check "model show: table names V100 mixed batch 256" $? "$(sed -n 2p "$L/out")"
fi
# vgg16 has no measurement on TitanXp: its time is FLOPs-based, linear in
# the batch; the update does not depend on the batch.
ok=1 rows=
for b in 32 64 128; do
  run_ok "model list --device TitanXp --batch $b exits 0" model list --device TitanXp --batch "$b" --format csv || { ok=0; break; }
  rows+="$(grep '^vgg16,' "$L/out")"$'\n'
done
if [ $ok = 1 ]; then
  bad=$(printf '%s' "$rows" | awk -F ',' '
    function near(a, b) { d = a - b; if (d < 0) d = -d; return d <= 2e-5 * (b < 0 ? -b : b) }
    { f[NR] = $7; k[NR] = $8; u[NR] = $9; bt[NR] = $6 }
    END {
      if (NR != 3) { print "rows: " NR; exit }
      for (i = 2; i <= 3; i++) {
        r = bt[i] / bt[1]
        if (!near(f[i], r * f[1]) || !near(k[i], r * k[1]) || !near(u[i], u[1]))
          print "batch " bt[i] ": forward " f[i] " backward " k[i] " update " u[i] " (batch " bt[1] ": " f[1] " " k[1] " " u[1] ")"
      }
    }')
  check "model vgg16 on TitanXp: forward and backward times linear in --batch (32, 64, 128), update constant" \
    "$(isempty "$bad")" "$bad" "rows:" "$rows"
fi
run model show vgg16 --device TitanXp
grep -q 'efficiency' "$L/out"
check "model show vgg16 --device TitanXp: timing from a FLOPs-based efficiency (no measurement)" $? \
  "$(sed -n 3p "$L/out")"

# ---- model files by path ------------------------------------------------------

IN=$W/in
cat >"$IN/good.model" <<'EOF'
# a tiny valid model
model tiny
dataset "toy data"
batch 8
layer fc1 1000
layer fc2 200
tensor fc2.bias 10 fc2
tensor fc2.weight 100 fc2
tensor fc1.bias 20 fc1
tensor fc1.weight 5000 fc1
EOF
# Each malformed file differs from good.model in one line (NAME:LINE).
sed '/^model /d' "$IN/good.model" >"$IN/nomodel.model"               # line 2: dataset first
sed 's/^batch 8/frobnicate 8/' "$IN/good.model" >"$IN/unknown.model" # line 4
sed 's/^tensor fc1.bias 20 fc1/tensor fc1.bias 20 fc9/' "$IN/good.model" >"$IN/undeclared.model" # line 9
sed 's/^dataset "toy data"/dataset "toy data/' "$IN/good.model" >"$IN/quote.model" # line 3
sed 's/^layer fc2 200/layer fc1 200/' "$IN/good.model" >"$IN/twice.model" # line 6
sed 's/^tensor fc2.weight 100 fc2/tensor fc2.weight 0 fc2/' "$IN/good.model" >"$IN/zero.model" # line 8
sed 's/^batch 8/batch 0/' "$IN/good.model" >"$IN/batch0.model" # line 4
BADFILES="nomodel:2 unknown:4 undeclared:9 quote:3 twice:6 zero:8 batch0:4"

if run_ok "model show FILE.model (a valid file by path) exits 0" model show "$IN/good.model" --format csv; then
  [ "$(awk -F ',' 'NR > 1 { printf "%s:%s ", $1, $2 }' "$L/out")" = \
    "fc2.bias:10 fc2.weight:100 fc1.bias:20 fc1.weight:5000 " ]
  check "model show FILE.model: its four tensors in file order" $? "$(cat "$L/out")"
fi
if run_ok "gradients --model FILE.model exits 0" gradients --model "$IN/good.model" --out "$W/ok/tiny.f32"; then
  [ "$(fsize "$W/ok/tiny.f32")" = $((4 * 5130)) ]
  check "gradients --model FILE.model: 5130 float32" $? "size $(fsize "$W/ok/tiny.f32")"
fi

# "synthetic" is named as valid by the unknown-model message: it should
# then be accepted.
run model show nosuchmodel
if grep -q 'synthetic' "$L/err"; then
  said=$(head -c 300 "$L/err")
  run model show synthetic
  [ "$RC" -eq 0 ]
  check "model show: every name the unknown-model message lists as valid is accepted (synthetic)" $? \
    "gradsim model show nosuchmodel says: $said" \
    "but gradsim model show synthetic exits $RC: $(head -c 200 "$L/err")"
fi

# ---- gradients --------------------------------------------------------------

OK=$W/ok
HDC_N=648010
# npy_check FILE N: a version 1.0 .npy of N float32 values, shape (N,).
npy_check() {
  local f=$1 n=$2 hl why=
  hl=$(od -An -v -tu2 -j 8 -N 2 "$f" | tr -d ' ')
  case $hl in '' | *[!0-9]*) hl=0 ;; esac
  [ "$(head -c 6 "$f" | tail -c 5)" = NUMPY ] || why+=" no NUMPY magic;"
  [ "$(od -An -tx1 -N 1 "$f" | tr -d ' ')" = 93 ] || why+=" first byte not 0x93;"
  [ "$(od -An -tu1 -j 6 -N 2 "$f" | tr -s ' ')" = " 1 0" ] || why+=" version not 1.0;"
  [ $(((10 + hl) % 64)) -eq 0 ] || why+=" header length $hl: data not 64-aligned;"
  head -c $((10 + hl)) "$f" | grep -q "'descr': '<f4'" || why+=" descr not '<f4';"
  head -c $((10 + hl)) "$f" | grep -q "'fortran_order': False" || why+=" fortran_order not False;"
  head -c $((10 + hl)) "$f" | grep -q "'shape': ($n,)" || why+=" shape not ($n,);"
  [ "$(head -c $((10 + hl)) "$f" | tail -c 1 | od -An -tx1 | tr -d ' ')" = 0a ] || why+=" header not ending in newline;"
  [ "$(fsize "$f")" = $((10 + hl + 4 * n)) ] || why+=" size $(fsize "$f") != 10 + $hl + 4*$n;"
  if [ -n "$PY" ]; then
    $PY - "$f" "$n" <<'EOF' || why+=" python3 could not read the header as a dict of descr <f4, fortran_order False, shape (N,);"
import ast, os, struct, sys
f, n = sys.argv[1], int(sys.argv[2])
b = open(f, "rb").read(4096)
assert b[:6] == b"\x93NUMPY" and b[6:8] == b"\x01\x00"
hl = struct.unpack("<H", b[8:10])[0]
d = ast.literal_eval(b[10:10 + hl].decode("latin1"))
assert d == {"descr": "<f4", "fortran_order": False, "shape": (n,)}, d
assert os.path.getsize(f) == 10 + hl + 4 * n
EOF
  fi
  NPY_HL=$hl
  [ -z "$why" ] && return 0
  NPY_WHY=$why
  return 1
}
[ -n "$PY" ] || echo "note - python3 not found: .npy headers checked with od and grep only"

if run_ok "gradients --model hdc --out X.npy exits 0" gradients --model hdc --out "$OK/hdc.npy"; then
  NPY_WHY=
  npy_check "$OK/hdc.npy" $HDC_N
  check "gradients hdc .npy: valid version 1.0 header, '<f4', shape ($HDC_N,), size" $? \
    "problems:$NPY_WHY" "header: $(head -c 128 "$OK/hdc.npy" | tail -c +11 | tr -d '\n')"
  left=$(find "$OK" -mindepth 1 ! -name hdc.npy ! -name tiny.f32 -print | sed 's|.*/||' | tr '\n' ' ')
  [ -z "$left" ]
  check "gradients: no temporary file left beside the output" $? "found: $left"
  : >"$OK/umask-ref"
  ref=$(ls -l "$OK/umask-ref" | cut -c1-10) got=$(ls -l "$OK/hdc.npy" | cut -c1-10)
  rm -f "$OK/umask-ref"
  um=$(umask)
  [ "$ref" = "$got" ]
  check "gradients: the output file gets the usual permissions (umask $um), like the codec command's outputs" $? \
    "new file by the shell: $ref; gradsim gradients --out: $got"
fi
if run_ok "gradients --model hdc --out X.f32 exits 0" gradients --model hdc --out "$OK/hdc.f32"; then
  [ "$(fsize "$OK/hdc.f32")" = $((4 * HDC_N)) ]
  check "gradients hdc .f32: 4 x $HDC_N bytes" $? "size $(fsize "$OK/hdc.f32")"
  if [ -f "$OK/hdc.npy" ]; then
    tail -c +$((11 + NPY_HL)) "$OK/hdc.npy" | cmp -s - "$OK/hdc.f32"
    check "gradients hdc: .npy data equals the .f32 output" $?
  fi
fi
g2() { # NAME OUT ARGS...: gradients into $OK/OUT
  local name=$1 out=$2
  shift 2
  run_ok "$name exits 0" gradients "$@" --out "$OK/$out"
}
same() { cmp -s "$OK/$1" "$OK/$2"; }
if g2 "gradients hdc (again)" hdc2.f32 --model hdc && [ -f "$OK/hdc.f32" ]; then
  same hdc.f32 hdc2.f32
  check "gradients: the same command twice gives identical bytes" $?
fi
if g2 "gradients hdc --seed 1 --worker 0 --iteration 0 (explicit defaults)" hdcdef.f32 \
  --model hdc --seed 1 --worker 0 --iteration 0; then
  same hdc.f32 hdcdef.f32
  check "gradients: explicit defaults (--seed 1 --worker 0 --iteration 0) give the default output" $?
fi
for v in "--seed 2" "--worker 1" "--iteration 1"; do
  t=${v#--}
  t=${t// /}
  if g2 "gradients hdc $v" "hdc-$t.f32" --model hdc $v; then
    ! same hdc.f32 "hdc-$t.f32" && [ "$(fsize "$OK/hdc-$t.f32")" = $((4 * HDC_N)) ]
    check "gradients: $v gives different bytes (same size)" $?
  fi
done
if g2 "gradients hdc --corr 1 --worker 0" c1w0.f32 --model hdc --corr 1 --worker 0 &&
  g2 "gradients hdc --corr 1 --worker 3" c1w3.f32 --model hdc --corr 1 --worker 3; then
  same c1w0.f32 c1w3.f32
  check "gradients: --corr 1 gives identical bytes on workers 0 and 3" $?
  ! same c1w0.f32 hdc.f32
  check "gradients: --corr 1 differs from --corr 0 (shared vs private stream)" $?
fi
if g2 "gradients hdc --corr 0.5 --worker 0" c5w0.f32 --model hdc --corr 0.5 --worker 0 &&
  g2 "gradients hdc --corr 0.5 --worker 3" c5w3.f32 --model hdc --corr 0.5 --worker 3; then
  ! same c5w0.f32 c5w3.f32
  check "gradients: --corr 0.5 gives different bytes on workers 0 and 3" $?
fi
# Concatenating every tensor, written one by one in `model show` order,
# gives the whole-model output.
if run_ok "model show hdc --format csv exits 0" model show hdc --format csv && [ -f "$OK/hdc.f32" ]; then
  awk -F ',' 'NR > 1 { print $1, $2 }' "$L/out" >"$L/hdc.tensors"
  : >"$L/concat"
  bad=
  while read -r name elems; do
    if g2 "gradients hdc --tensor $name" "t-$name.f32" --model hdc --tensor "$name"; then
      [ "$(fsize "$OK/t-$name.f32")" = $((4 * elems)) ] ||
        bad+=" $name($(fsize "$OK/t-$name.f32") bytes, want $((4 * elems)))"
      cat "$OK/t-$name.f32" >>"$L/concat"
    else
      bad+=" $name(failed)"
    fi
  done <"$L/hdc.tensors"
  check "gradients --tensor NAME: each hdc tensor's .f32 holds 4 x its elements" "$(isempty "$bad")" \
    "problems:$bad"
  cmp -s "$L/concat" "$OK/hdc.f32"
  check "gradients: the hdc tensors written one by one, concatenated in model show order, equal the whole model" $? \
    "sizes: concatenation $(fsize "$L/concat"), whole $(fsize "$OK/hdc.f32")"
fi
if g2 "gradients hdc --tensor fc2.weight .npy" fc2w.npy --model hdc --tensor fc2.weight; then
  NPY_WHY=
  npy_check "$OK/fc2w.npy" 250000
  check "gradients --tensor fc2.weight .npy: shape (250000,), exactly that tensor's elements" $? \
    "problems:$NPY_WHY"
fi
if g2 "gradients --tensor fc2.weight --worker 2 --iteration 5" fc2w-w2i5.f32 --model hdc --tensor fc2.weight --worker 2 --iteration 5 &&
  g2 "gradients (whole) --worker 2 --iteration 5" w2i5.f32 --model hdc --worker 2 --iteration 5; then
  # fc2.weight is the 4th tensor: offset 4 * (10 + 5000 + 500) bytes.
  tail -c +$((4 * 5510 + 1)) "$OK/w2i5.f32" | head -c $((4 * 250000)) | cmp -s - "$OK/fc2w-w2i5.f32"
  check "gradients --tensor fc2.weight at worker 2, iteration 5 equals its slice of the whole model" $?
fi

# Scale and decay act exactly: 4 x the scale adds 2 to every nonzero
# value's binary exponent; decay 0.5 at iteration 1 halves every value.
words() { od -An -v -tu4 "$1" | tr -s ' ' '\n' | sed '/^$/d'; }
# expdiff A B D: every word of B is the word of A with D added to its
# exponent (zeros stay zero).
expdiff() {
  words "$OK/$1" >"$L/wa"
  words "$OK/$2" >"$L/wb"
  paste "$L/wa" "$L/wb" | awk -v d="$3" '
    { a = $1 % 2147483648; b = $2 % 2147483648; sa = ($1 >= 2147483648); sb = ($2 >= 2147483648)
      if (sa != sb || (a == 0 ? b != 0 : b != a + d * 8388608)) { bad++ } n++ }
    END { exit !(n > 0 && bad == 0) }'
}
if g2 "gradients fc3.weight default" s1.f32 --model hdc --tensor fc3.weight &&
  g2 "gradients fc3.weight --scale 2e-3" s4.f32 --model hdc --tensor fc3.weight --scale 2e-3; then
  expdiff s1.f32 s4.f32 2
  check "gradients --scale 2e-3 = 4 x the default scale 5e-4, value by value" $?
fi
if g2 "gradients fc3.weight --iteration 1" i1.f32 --model hdc --tensor fc3.weight --iteration 1 &&
  g2 "gradients fc3.weight --iteration 1 --decay 0.5" i1d.f32 --model hdc --tensor fc3.weight --iteration 1 --decay 0.5; then
  expdiff i1.f32 i1d.f32 -1
  check "gradients --decay 0.5 at iteration 1 halves every value" $?
fi
# Distributions, over the whole hdc model (648010 values).
stats() { # FILE: "mean|x| rms zero-fraction nonfinite-count"
  od -An -v -tf4 "$1" | awk '
    { for (i = 1; i <= NF; i++) { x = $i + 0; n++
        if ($i ~ /nan|inf/) bad++
        else { a += (x < 0 ? -x : x); s += x * x; if (x == 0) z++ } } }
    END { printf "%.6g %.6g %.6g %d\n", a / n, sqrt(s / n), z / n, bad }'
}
if [ -f "$OK/hdc.f32" ]; then
  read -r ma rms zf nb <<<"$(stats "$OK/hdc.f32")"
  rel_eq "$ma" 5e-4 0.03 && [ "$nb" = 0 ]
  check "gradients default (Laplace, scale 5e-4): mean |x| = 5e-4 within 3%, all finite" $? \
    "mean |x| $ma, rms $rms, zeros $zf, non-finite $nb"
fi
if g2 "gradients hdc --dist normal --scale 1e-3" norm.f32 --model hdc --dist normal --scale 1e-3; then
  read -r ma rms zf nb <<<"$(stats "$OK/norm.f32")"
  rel_eq "$rms" 1e-3 0.03 && [ "$nb" = 0 ]
  check "gradients --dist normal --scale 1e-3: rms = 1e-3 within 3%" $? "mean |x| $ma, rms $rms"
fi
if g2 "gradients hdc --dist spike --zeros 0.3" spike.f32 --model hdc --dist spike --zeros 0.3; then
  read -r ma rms zf nb <<<"$(stats "$OK/spike.f32")"
  rel_eq "$zf" 0.3 0.05 && [ "$nb" = 0 ]
  check "gradients --dist spike --zeros 0.3: 30% exact zeros (within 5%)" $? "zero fraction $zf"
fi
if g2 "gradients hdc --dist student --nu 5" student.npy --model hdc --dist student --nu 5; then
  NPY_WHY=
  npy_check "$OK/student.npy" $HDC_N
  check "gradients --dist student --nu 5 .npy: valid, $HDC_N values" $? "problems:$NPY_WHY"
fi

# ---- bad input --------------------------------------------------------------

snap() {
  (cd "$W" && find . -print | sort && find . -type f -exec cksum {} + | sort)
}
# bad NAME ARGS...: exit 2, one stderr line starting "gradsim:", nothing on
# stdout, no change at all under the workspace (no new, removed or
# modified file). With BAD_MSG set, stderr must also contain that string.
BAD_MSG=
bad() {
  local name=$1
  shift
  snap >"$L/before"
  run "$@"
  snap >"$L/after"
  local why=() lines
  lines=$(nlines "$L/err")
  [ "$RC" -eq 2 ] || why+=("expected exit status 2, got $RC")
  [ "$lines" -eq 1 ] || why+=("expected one line on stderr, got $lines")
  head -1 "$L/err" | grep -q '^gradsim:' || why+=("stderr does not start with 'gradsim:'")
  [ -s "$L/out" ] && why+=("expected nothing on stdout, got $(nlines "$L/out") lines: $(head -c 200 "$L/out")")
  if [ -n "$BAD_MSG" ] && ! grep -qF -- "$BAD_MSG" "$L/err"; then
    why+=("stderr does not contain '$BAD_MSG'")
  fi
  if ! cmp -s "$L/before" "$L/after"; then
    why+=("files changed: $(diff "$L/before" "$L/after" | grep '^[<>]' | head -4 | tr '\n' ';')")
    # put the workspace back so later checks start clean
    diff "$L/before" "$L/after" | sed -n 's/^> \.\///p' | grep -v ' ' |
      while read -r p; do [ -e "$W/$p" ] && rm -rf "${W:?}/$p"; done
  fi
  if [ ${#why[@]} -eq 0 ]; then
    pass "bad input: $name"
  else
    fail "bad input: $name" "command: gradsim $(quote "$@")" "${why[@]}" "$(err_head)"
  fi
}
bad_msg() { # NAME SUBSTRING ARGS...
  local name=$1
  BAD_MSG=$2
  shift 2
  bad "$name" "$@"
  BAD_MSG=
}

# model show's memory per GPU (docs/models.md, "Memory per GPU"): the
# ZeRO stages divide what they shard; Llama-3-8B with Adam fits an 80 GB
# H100 only sharded. Stage 3 holds two units gathered (FSDP's prefetch):
# the largest, the embedding's 128256 x 4096 values, 2 x 2 bytes each.
if run_ok "model show llama-3-8b memory" model show llama-3-8b --device H100 \
  --precision bf16 --optimizer adam; then
  grep -q "^memory per GPU (adam, ZeRO stage 0 over 1 GPU): parameters 16.06 GB, gradients 16.06 GB, optimizer states 96.36 GB, activations 292.1 GB, total 420.5 GB of the H100's 80 GB: does not fit$" "$L/out"
  check "model show: replicated Adam does not fit" $? "$(grep memory "$L/out")"
fi
if run_ok "model show llama-3-8b memory sharded" model show llama-3-8b \
  --device H100 --precision bf16 --optimizer adam --stage 3 --gpus 64 \
  --checkpoint --batch 1; then
  grep -q "^memory per GPU (adam, ZeRO stage 3 over 64 GPUs, activation checkpointing): parameters 0.2509 GB, gradients 0.2509 GB, optimizer states 1.506 GB, activations 3.288 GB, gathered units 4.203 GB, total 9.499 GB of the H100's 80 GB: fits$" "$L/out"
  check "model show: FSDP over 64 GPUs with checkpointing fits" $? "$(grep memory "$L/out")"
fi

B=$W/bad
R=(ring --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0)
bad_msg "model show --optimizer lamb" "--optimizer lamb must be one of sgd, momentum, adam, adamw" \
  model show gpt2 --optimizer lamb
bad_msg "model show --stage 4" "--stage 4 must be 0, 1, 2 or 3" model show gpt2 --stage 4
bad_msg "model show --gpus -1" "--gpus -1 must be in 1..1e7" model show gpt2 --gpus -1
bad "formula without a name" formula
bad "formula without a name (with parameters)" formula --p 4 --n 64MB
bad_msg "unknown formula" "nosuch" formula nosuch --p 4
bad_msg "ring without --gamma" "--gamma" formula ring --p 4 --n 64MB --alpha 5us --bandwidth 10Gbps
bad_msg "ring without --p" "--p" formula "${R[@]}"
bad_msg "hierarchical without --group" "--group" formula hierarchical --p 8 --alpha-intra 1us --bandwidth-intra 100Gbps --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0
bad_msg "ps without --aggregators" "--aggregators" formula ps --p 8 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0
bad_msg "pipesgd-sync without --t-comm" "--t-comm" formula pipesgd-sync --iterations 10 --t-up 1ms --t-comp 2ms
for p in 0 2.5 abc 5..2 2..8x1 -3 "" "2," ",4" 2..x2 2..8x 2..8x0.5 4..4x1 1..200000; do
  bad "--p '$p'" formula "${R[@]}" --p "$p"
done
bad "--p 2,4,0 (a bad value in a list)" formula "${R[@]}" --p 2,4,0
bad "--n -1" formula ring --p 4 --n -1 --alpha 5us --bandwidth 10Gbps --gamma 0
bad "--n 64XB" formula ring --p 4 --n 64XB --alpha 5us --bandwidth 10Gbps --gamma 0
bad "--bandwidth 10Gbs" formula ring --p 4 --n 64MB --alpha 5us --bandwidth 10Gbs --gamma 0
bad "--bandwidth 0" formula ring --p 4 --n 64MB --alpha 5us --bandwidth 0 --gamma 0
bad "--bandwidth -1Gbps" formula ring --p 4 --n 64MB --alpha 5us --bandwidth -1Gbps --gamma 0
bad "--beta 0" formula ring --p 4 --n 64MB --alpha 5us --beta 0 --gamma 0
bad "--alpha 5xs" formula ring --p 4 --n 64MB --alpha 5xs --bandwidth 10Gbps --gamma 0
bad "--alpha -5us" formula ring --p 4 --n 64MB --alpha -5us --bandwidth 10Gbps --gamma 0
bad "--gamma abc" formula ring --p 4 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma abc
bad_msg "both --beta and --bandwidth" "not both" formula ring --p 4 --n 64MB --alpha 5us --beta 8e-10 --bandwidth 10Gbps --gamma 0
bad "both --gamma and --reduce-rate" formula ring --p 4 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0 --reduce-rate 4GBps
bad "formula --format xml" formula "${R[@]}" --p 4 --format xml
bad_msg "allgather-rdb with p = 6" "power of two" formula allgather-rdb --p 6 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0
bad "allgather-rdb with p = 2,4,6 (nothing printed for 2 and 4)" formula allgather-rdb --p 2,4,6 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0 --format csv
bad_msg "hierarchical with p not a multiple of --group" "--group" formula hierarchical --p 6 --group 4 --alpha-intra 1us --bandwidth-intra 100Gbps --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0
bad "hierarchical --group 0" formula hierarchical --p 8 --group 0 --alpha-intra 1us --bandwidth-intra 100Gbps --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0
bad_msg "redsync-sparse --density 0" "--density" formula redsync-sparse --p 4 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0 --density 0
bad_msg "redsync-sparse --density 1.5" "--density" formula redsync-sparse --p 4 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0 --density 1.5
bad "ps --aggregators 1.5" formula ps --p 4 --n 64MB --alpha 5us --bandwidth 10Gbps --gamma 0 --aggregators 1.5
bad "formula: extra positional argument" formula "${R[@]}" --p 4 extra
bad "formula --list with an extra argument" formula --list extra
bad "formula: unknown option" formula "${R[@]}" --p 4 --bogus
bad "formula: --p without a value" formula "${R[@]}" --p

# A geometric range is bounded like a plain one (1..200000 is refused): a
# factor barely above 1 must be refused too, not exhaust memory. Run under
# a 1 GB address-space limit so that a failure cannot take the machine.
if (ulimit -v 1000000 2>/dev/null && "$G" --help >/dev/null 2>&1); then
  snap >"$L/before"
  (ulimit -v 1000000; timeout 30 "$G" formula "${R[@]}" --p 1..1000000000x1.0000001 --format csv \
    >"$L/out" 2>"$L/err") 2>/dev/null
  RC=$?
  lines=$(nlines "$L/err")
  [ "$RC" -eq 2 ] && [ "$lines" -eq 1 ] && [ ! -s "$L/out" ]
  check "bad input: --p 1..1000000000x1.0000001 (about 1e9 values) is refused with status 2" $? \
    "command: gradsim formula $(quote "${R[@]}") --p 1..1000000000x1.0000001 --format csv (under ulimit -v 1000000)" \
    "expected exit status 2 and one line on stderr, got status $RC, $lines lines on stderr, $(nlines "$L/out") lines on stdout" \
    "$(err_head)"
else
  echo "note - ulimit -v unusable here: the huge geometric --p range is not checked"
fi

bad_msg "model show: unknown model" "nosuch" model show nosuch
bad "model show: a name with a slash-free odd character" model show 'alex*net'
bad_msg "gradients: unknown model" "nosuch" gradients --model nosuch --out "$B/g.npy"
bad_msg "model show: unknown --device" "K80" model show alexnet --device K80
bad "model list: unknown --device" model list --device K80
bad "model show: --precision fp8" model show alexnet --precision fp8
bad "model list: --precision fp8" model list --precision fp8
bad "model show: --batch -1" model show alexnet --batch -1
bad "model show: --batch 2000000" model show alexnet --batch 2000000
bad "model show: --batch abc" model show alexnet --batch abc
bad "model show --format xml" model show alexnet --format xml
bad "model list --format xml" model list --format xml
bad "model show without a name" model show
bad "model show: extra positional argument" model show alexnet extra
bad "model list: extra positional argument" model list extra
bad "model: unknown option" model show alexnet --bogus
bad "model with no subcommand" model
bad "model frobnicate" model frobnicate
bad "model show: nonexistent .model path" model show "$IN/nosuch.model"

G2=(gradients --model hdc)
bad_msg "gradients: unknown --tensor" "nope" "${G2[@]}" --tensor nope --out "$B/g.npy"
bad "gradients: --out with a bad extension (.txt)" "${G2[@]}" --out "$B/g.txt"
bad "gradients: --out with no extension" "${G2[@]}" --out "$B/g"
bad "gradients: missing --out" "${G2[@]}"
bad "gradients: missing --model" gradients --out "$B/g.npy"
bad "gradients: --dist gauss" "${G2[@]}" --out "$B/g.npy" --dist gauss
bad "gradients: --corr 2" "${G2[@]}" --out "$B/g.npy" --corr 2
bad "gradients: --corr -0.1" "${G2[@]}" --out "$B/g.npy" --corr -0.1
bad_msg "gradients: --persist 1" "persist=1 must be in [0, 1)" "${G2[@]}" --out "$B/g.npy" --persist 1
bad "gradients: --scale 0" "${G2[@]}" --out "$B/g.npy" --scale 0
bad "gradients: --scale abc" "${G2[@]}" --out "$B/g.npy" --scale abc
bad "gradients: --decay 1.5" "${G2[@]}" --out "$B/g.npy" --decay 1.5
bad "gradients: --decay 0" "${G2[@]}" --out "$B/g.npy" --decay 0
bad "gradients: --zeros 1" "${G2[@]}" --out "$B/g.npy" --dist spike --zeros 1
bad "gradients: --nu 0" "${G2[@]}" --out "$B/g.npy" --dist student --nu 0
bad "gradients: --worker -1" "${G2[@]}" --out "$B/g.npy" --worker -1
bad "gradients: --worker 4294967296" "${G2[@]}" --out "$B/g.npy" --worker 4294967296
bad "gradients: --worker x" "${G2[@]}" --out "$B/g.npy" --worker x
bad "gradients: --iteration -1" "${G2[@]}" --out "$B/g.npy" --iteration -1
bad "gradients: --seed -1" "${G2[@]}" --out "$B/g.npy" --seed -1
bad "gradients: extra positional argument" "${G2[@]}" --out "$B/g.npy" extra
bad "gradients: unknown option" "${G2[@]}" --out "$B/g.npy" --bogus
bad "gradients: unknown --tensor (existing output kept)" "${G2[@]}" --tensor nope --out "$OK/hdc.f32"

for spec in $BADFILES; do
  f=${spec%%:*} ln=${spec#*:}
  bad_msg "model show: malformed model file ($f), message names file:line" "$IN/$f.model:$ln:" \
    model show "$IN/$f.model"
  bad_msg "gradients: malformed model file ($f), message names file:line" "$IN/$f.model:$ln:" \
    gradients --model "$IN/$f.model" --out "$B/g.f32"
done

# ---- model import ------------------------------------------------------------

# The shipped transformers are what their configs import to, byte for byte
# (tools/import_catalog.sh wrote them).
miss=
for c in "$SRC"/models/configs/*.json; do
  name=$(basename "$c" .json)
  run model import --config "$c" --out "$W/ok/$name.model"
  if [ "$RC" -ne 0 ] || ! diff -q <(grep -v '^source ' "$W/ok/$name.model") \
      <(grep -v '^source ' "$SRC/models/$name.model") >/dev/null; then
    miss+=" $name"
  fi
done
check "model import --config of every shipped config gives its shipped model file (but the source line)" \
  "$(isempty "$miss")" "differ or fail:$miss"
run model show llama-2-7b --device H100 --precision bf16
grep -q "6738415616 parameters" "$L/out" && grep -q "0.464 of H100's bf16 peak" "$L/out" &&
  grep -q "MosaicML" "$L/out"
check "model show llama-2-7b on H100: 6,738,415,616 parameters, timed at the measured MFU with its source" $? \
  "$(head -3 "$L/out")"
# A list as the README's PyTorch loop prints it.
printf 'wte.weight 50257x768 float32\nwpe.weight 1024x768 float32\n' >"$IN/list.txt"
for i in 0 1; do
  printf 'h.%d.ln_1.weight 768 float32\nh.%d.attn.c_attn.weight 768x2304 float32\nh.%d.mlp.c_fc.weight 768x3072 float32\n' $i $i $i >>"$IN/list.txt"
done
if run_ok "model import --list exits 0" model import --list "$IN/list.txt" --out "$W/ok/tiny.model"; then
  grep -q "^family gpt2" "$W/ok/tiny.model" && grep -q "^tokens_per_sample 1024" "$W/ok/tiny.model" &&
    grep -q "^layer lm_head " "$W/ok/tiny.model" && grep -q "head tied" "$L/out"
  check "model import --list: the GPT-2 family recognised, 1024 tokens from wpe, a tied head" $? "$(cat "$L/out")"
fi
printf 'w 4x4 bf16\n' >"$IN/noseq.txt"
printf 'a 3x4 float32\na 4 float32\n' >"$IN/dup.txt"
printf '{"model_type": "gpt2", "n_layer": 2}' >"$IN/noembd.json"
printf 'abc' >"$IN/short.safetensors"
printf '\100\0\0\0\0\0\0\0{}' >"$IN/long.safetensors"
printf '\002\0\0\0\0\0\0\0{x' >"$IN/badjson.safetensors"
# GPT-2's c_attn holds query, key and value side by side: a width that is
# not three equal parts (found by fuzz_import: it wrote a query width of
# 0 that the model reader refused).
printf 'h.0.attn.c_attn.weight 16x1 float32\n' >"$IN/qkv.txt"
bad_msg "model import: no route" "exactly one of" model import --out "$B/m.model"
bad_msg "model import: two routes" "exactly one of" model import --config "$IN/noembd.json" --list "$IN/dup.txt" --out "$B/m.model"
bad_msg "model import: --out not .model" "--out FILE.model" model import --list "$IN/dup.txt" --out "$B/m.txt"
bad_msg "model import: a repeated tensor, the line named" "dup.txt:2: tensor 'a' is listed twice" model import --list "$IN/dup.txt" --out "$B/m.model"
bad_msg "model import: no sequence length" "--seq-len" model import --list "$IN/noseq.txt" --out "$B/m.model"
bad_msg "model import: a config without n_embd" "no 'n_embd'" model import --config "$IN/noembd.json" --out "$B/m.model"
MOE='"model_type": "mixtral", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100'
printf '{%s}' "$MOE" >"$IN/moe-none.json"
printf '{%s, "num_local_experts": 2, "num_experts_per_tok": 3}' "$MOE" >"$IN/moe-k.json"
printf '{%s, "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 0}' "$MOE" >"$IN/moe-w.json"
bad_msg "model import: a mixture of experts without experts" "no 'num_local_experts'" model import --config "$IN/moe-none.json" --out "$B/m.model"
bad_msg "model import: more experts a token than experts" "num_experts_per_tok 3 is more than num_local_experts 2" model import --config "$IN/moe-k.json" --out "$B/m.model"
bad_msg "model import: a window of 0 tokens" "'sliding_window' must be a whole number in 1..2^40" model import --config "$IN/moe-w.json" --out "$B/m.model"
bad_msg "model import: a truncated safetensors file" "truncated" model import --safetensors "$IN/short.safetensors" --out "$B/m.model"
bad_msg "model import: a header past the end" "past the end" model import --safetensors "$IN/long.safetensors" --out "$B/m.model"
bad_msg "model import: malformed JSON" "malformed JSON" model import --safetensors "$IN/badjson.safetensors" --out "$B/m.model"
bad_msg "model import: a missing file" "noexist" model import --config "$IN/noexist.json" --out "$B/m.model"
bad_msg "model import: a bad --seq-len" "--seq-len" model import --list "$IN/noseq.txt" --seq-len -3 --out "$B/m.model"
bad_msg "model import: a query projection not in three parts" "h.0.attn.c_attn.weight: its 1 columns are not 3 equal parts" model import --list "$IN/qkv.txt" --seq-len 8 --out "$B/m.model"
bad_msg "model: import options on show" "belong to 'model import'" model show gpt2 --config x

bad "no command at all"
bad "unknown command" frobnicate

# ---- summary ----------------------------------------------------------------

echo
echo "$npass passed, $nfail failed"
if [ "$nfail" -gt 0 ]; then
  printf '  failed: %s\n' "${FAILED[@]}"
  exit 1
fi
exit 0
