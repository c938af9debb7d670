#!/usr/bin/env bash
# tests/cli/test_cli_codec.sh: command-line behaviour of `gradsim codec`.
#
#   test_cli_codec.sh GRADSIM SOURCE_ROOT
#
# Checks help and listing, roundtrip outputs (files, sizes, statistics,
# state carried between steps, determinism, .npy = .f32), encode/decode
# through a container (and its rejection when damaged), bench and compare
# output shapes, and that every kind of bad input exits with status 2,
# prints exactly one "gradsim: ..." line on stderr and writes nothing.
#
# Inputs are generated here (bash arithmetic and printf; no numpy). python3,
# when present, validates stats.json and reads its fields; without it the
# JSON validity checks are skipped (with a note) and fields are read with
# awk.
#
# SOURCE_ROOT is accepted for meson's interface; the inputs are made in a
# temporary directory, so it is not needed.
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

# ---- helpers: vectors on disk --------------------------------------------

# gen_f32 FILE N SEED [INDEX HEXBITS]...: N pseudo-random float32 values
# (both signs, magnitudes about 2^-27 .. 2^4, no zeros), little-endian;
# each INDEX HEXBITS pair overrides one value with raw bits.
gen_f32() {
  local file=$1 n=$2 s=$3
  shift 3
  declare -A over=()
  while [ $# -ge 2 ]; do
    over[$1]=$2
    shift 2
  done
  local i bits e m sign buf="" esc
  for ((i = 0; i < n; i++)); do
    if [ -n "${over[$i]+x}" ]; then
      bits=$((16#${over[$i]}))
    else
      s=$(((s * 1103515245 + 12345) & 0x7fffffff))
      sign=$(((s >> 17) & 1))
      s=$(((s * 1103515245 + 12345) & 0x7fffffff))
      e=$((100 + (s >> 8) % 31))
      s=$(((s * 1103515245 + 12345) & 0x7fffffff))
      m=$((s & 0x7fffff))
      bits=$(((sign << 31) | (e << 23) | m))
    fi
    printf -v esc '\\x%02x\\x%02x\\x%02x\\x%02x' $((bits & 255)) \
      $(((bits >> 8) & 255)) $(((bits >> 16) & 255)) $(((bits >> 24) & 255))
    buf+=$esc
  done
  printf "$buf" >"$file"
}

# npy_write OUT DESCR SHAPE DATAFILE: a version 1.0 .npy by hand.
npy_write() {
  local out=$1 descr=$2 shape=$3 data=$4
  local hdr="{'descr': '$descr', 'fortran_order': False, 'shape': $shape, }"
  local len=$((10 + ${#hdr} + 1))
  local pad=$(((64 - len % 64) % 64))
  local hlen=$((${#hdr} + pad + 1))
  {
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((hlen & 255)))\\x$(printf %02x $((hlen >> 8)))"
    printf '%s%*s\n' "$hdr" "$pad" ""
    cat "$data"
  } >"$out"
}

# f32 words of a file, one hex word (host order) per line.
words() { od -An -v -tx4 "$1" | tr -s ' ' '\n' | sed '/^$/d'; }
fsize() { wc -c <"$1" | tr -d ' '; }

# flip_bit FILE OFFSET: xor the low bit of the byte at OFFSET.
flip_bit() {
  local b
  b=$(od -An -v -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\x$(printf %02x $((b ^ 1)))" |
    dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# ---- helpers: stats.json -------------------------------------------------

# jflat FILE: the members of every object of the JSON array in FILE, one
# "INDEX<TAB>KEY<TAB>VALUE" line each (strings without their quotes).
jflat() {
  if [ -n "$PY" ]; then
    $PY -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
for i, o in enumerate(d if isinstance(d, list) else []):
    if isinstance(o, dict):
        for k, v in o.items():
            print("%d\t%s\t%s" % (i, k, v))
    else:
        print("%d\t\t" % i)' "$1" 2>/dev/null
  else
    tr -d '\n\r\t' <"$1" | awk '
      BEGIN { RS = "}"; idx = 0 }
      {
        i = index($0, "{"); if (!i) next
        obj = substr($0, i + 1); printed = 0
        while (match(obj, /"[^"]*"[ ]*:[ ]*/)) {
          key = substr(obj, RSTART + 1, RLENGTH - 1); sub(/"[ ]*:[ ]*$/, "", key)
          obj = substr(obj, RSTART + RLENGTH)
          if (substr(obj, 1, 1) == "\"") {
            obj = substr(obj, 2); v = obj; sub(/".*/, "", v)
            obj = substr(obj, length(v) + 2)
          } else { v = obj; sub(/[ ,].*/, "", v); obj = substr(obj, length(v) + 1) }
          print idx "\t" key "\t" v; printed = 1
        }
        if (!printed) print idx "\t\t"
        idx++
      }'
  fi
}
JSRC= JSUM=
jcache() {
  local sum
  sum=$(cksum <"$1")
  if [ "$JSRC" != "$1" ] || [ "$JSUM" != "$sum" ]; then
    jflat "$1" >"$L/jflat"
    JSRC=$1 JSUM=$sum
  fi
}
# jget FILE INDEX KEY: the value of KEY in object INDEX of the array
# ("MISSING" when absent).
jget() {
  jcache "$1"
  awk -F '\t' -v i="$2" -v k="$3" '$1 == i && $2 == k { print $3; f = 1; exit }
    END { if (!f) print "MISSING" }' "$L/jflat"
}
jcount() { # number of objects in the array
  jcache "$1"
  cut -f1 "$L/jflat" | sort -u | wc -l | tr -d ' '
}
json_valid() { # FILE: 0 valid, 1 invalid, 2 cannot tell
  [ -n "$PY" ] || return 2
  $PY -m json.tool "$1" >/dev/null 2>&1 && return 0
  return 1
}
# stats.json without the "file" member of each step (for comparing runs on
# different input files).
stats_nofile() {
  if [ -n "$PY" ]; then
    $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
for o in d: o.pop("file", None)
print(json.dumps(d, sort_keys=True))' "$1"
  else
    sed 's/"file": *"[^"]*", *//' "$1"
  fi
}
# num_eq A B [TOL]: numbers equal within relative TOL (default 1e-6).
num_eq() {
  awk -v a="$1" -v b="$2" -v t="${3:-1e-6}" 'BEGIN {
    if (a !~ /^-?[0-9.eE+-]+$/ || b !~ /^-?[0-9.eE+-]+$/) exit 1
    d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); if (m < 1) m = 1
    exit !(d <= t * m) }'
}

# ---- inputs ---------------------------------------------------------------

N=1001
IN=$W/in
gen_f32 "$IN/a.f32" $N 11
gen_f32 "$IN/b.f32" $N 22
gen_f32 "$IN/c.f32" $N 33
gen_f32 "$IN/short.f32" 500 44
gen_f32 "$IN/nan.f32" $N 11 3 7fc00000
gen_f32 "$IN/inf.f32" $N 11 5 7f800000
npy_write "$IN/a.npy" '<f4' "($N,)" "$IN/a.f32"
head -c $((8 * N)) /dev/zero >"$L/f8data"
npy_write "$IN/f8.npy" '<f8' "($N,)" "$L/f8data"
head -c 20 "$IN/a.npy" >"$IN/trunc_header.npy"
head -c $(($(fsize "$IN/a.npy") - 6)) "$IN/a.npy" >"$IN/trunc_data.npy"
: >"$L/empty"
npy_write "$IN/zero.npy" '<f4' "(0,)" "$L/empty"
: >"$IN/empty.f32"
printf 'abcdef' >"$IN/six.f32"
cp "$IN/a.f32" "$IN/a.bin"
cp "$IN/a.f32" "$IN/a.txt"
printf 'not a regular directory\n' >"$W/plainfile"
mkdir -p "$W/pre" # an existing, empty out dir that bad input must not touch

if [ "$(fsize "$IN/a.f32")" != $((4 * N)) ] ||
  [ $(($(fsize "$IN/a.npy") % 64)) -ne $((4 * N % 64)) ]; then
  echo "FAIL: could not generate the test inputs"
  exit 1
fi

CODECS="fp32 fp16 bf16 trunc q8 inceptionn 3lc terngrad qsgd onebit topk rgc powersgd"

# ---- help and list --------------------------------------------------------

if run_ok "gradsim --help exits 0" --help; then
  grep -qw codec "$L/out"
  check "gradsim --help lists the codec command" $? "stdout: $(head -c 300 "$L/out")"
fi
if run_ok "gradsim codec --help exits 0" codec --help; then
  miss=
  for s in list roundtrip encode decode bench compare; do
    grep -qw "$s" "$L/out" || miss+=" $s"
  done
  check "gradsim codec --help lists the six subcommands" "$(isempty "$miss")" \
    "missing:$miss"
fi
for s in list roundtrip encode decode bench compare; do
  if run_ok "gradsim codec $s --help exits 0" codec "$s" --help; then
    grep -q -- '--' "$L/out"
    check "gradsim codec $s --help prints usage" $?
  fi
done

if run_ok "codec list exits 0" codec list; then
  cp "$L/out" "$L/list"
  names=$(grep -o '^[a-z0-9]\+' "$L/list" | sort | tr '\n' ' ')
  want=$(printf '%s\n' $CODECS | sort | tr '\n' ' ')
  [ "$names" = "$want" ]
  check "codec list lists exactly the codecs of CODECS" $? "want: $want" "got:  $names"
  # Each parameterized codec's block names its keys with a range.
  block() { awk -v c="$1" '/^[a-z0-9]/ { on = ($1 == c) } on' "$L/list"; }
  bad=
  for spec in "trunc:bits" "inceptionn:eb" "3lc:s 3lc:zre" "topk:ratio" \
    "rgc:ratio rgc:select rgc:asq" "qsgd:levels qsgd:bucket"; do
    for ck in $spec; do
      c=${ck%%:*} k=${ck#*:}
      b=$(block "$c")
      printf '%s' "$b" | grep -q "$k=" || bad+=" $c($k= missing)"
    done
  done
  for r in "trunc:1..31" "inceptionn:-126..-1" "3lc:[1, 2)" "topk:(0, 1]" \
    "rgc:(0, 1]" "rgc:exact|trimmed|binsearch|sampled" "qsgd:1..32768" \
    "qsgd:1..1048576"; do
    c=${r%%:*} k=${r#*:}
    block "$c" | grep -qF -- "$k" || bad+=" $c(range '$k' missing)"
  done
  for c in fp32 fp16 bf16 q8 terngrad onebit; do
    [ -n "$(block "$c")" ] || bad+=" $c(no entry)"
  done
  check "codec list gives parameters with their ranges" "$(isempty "$bad")" \
    "problems:$bad"
fi

# ---- roundtrip ------------------------------------------------------------

OK=$W/ok

# rt DIR SPEC INPUTS... [-- EXTRA ARGS]: roundtrip into $OK/DIR.
rt() {
  local dir=$1 spec=$2
  shift 2
  local args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    args+=(--in "$1")
    shift
  done
  [ $# -gt 0 ] && shift
  run_ok "roundtrip $spec -> $dir exits 0" codec roundtrip --codec "$spec" \
    "${args[@]}" --out-dir "$OK/$dir" "$@"
}

# rt_files DIR K: the out dir holds exactly step-0..K-1.f32 and stats.json.
rt_files() {
  local want got k
  want=$( (for ((k = 0; k < $2; k++)); do echo "step-$k.f32"; done
    echo stats.json) | sort | tr '\n' ' ')
  got=$(ls -A "$OK/$1" 2>/dev/null | sort | tr '\n' ' ')
  [ "$want" = "$got" ]
  check "roundtrip $1: writes exactly ${want% }" $? "got: $got"
}

# rt_stats DIR K: stats.json valid, K objects with the required members,
# step numbering, n, bits_per_value and ratio consistent with bytes.
rt_stats() {
  local d=$OK/$1 k key v bad= n bytes
  json_valid "$d/stats.json"
  case $? in
  0) pass "roundtrip $1: stats.json is valid JSON" ;;
  1) fail "roundtrip $1: stats.json is valid JSON" \
    "python3 -m json.tool rejects it: $($PY -m json.tool "$d/stats.json" 2>&1 | tail -1)"
    return ;;
  2) echo "note - roundtrip $1: python3 not found, JSON validity not checked" ;;
  esac
  jcache "$d/stats.json"
  bad=$(awk -F '\t' -v K="$2" -v N="$N" '
    { v[$1, $2] = $3; if ($1 + 1 > cnt) cnt = $1 + 1 }
    function near(a, b) { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; return d <= 1e-6 * (m < 1 ? 1 : m) }
    END {
      if (cnt != K) printf " %d objects (want %d)", cnt, K
      split("step n bytes bits_per_value ratio max_abs_err rmse", keys, " ")
      for (k = 0; k < K; k++) {
        for (j = 1; j <= 7; j++) if (!((k, keys[j]) in v)) printf " step%d.%s missing", k, keys[j]
        if (v[k, "step"] != k "") printf " step%d.step=%s", k, v[k, "step"]
        if (v[k, "n"] != N "") printf " step%d.n=%s(want %d)", k, v[k, "n"], N
        b = v[k, "bytes"]
        if (b !~ /^[0-9]+$/ || b == 0) { printf " step%d.bytes=%s", k, b; continue }
        if (!near(v[k, "bits_per_value"] + 0, 8 * b / N)) printf " step%d.bits_per_value=%s!=8*bytes/n", k, v[k, "bits_per_value"]
        if (!near(v[k, "ratio"] + 0, 4 * N / b)) printf " step%d.ratio=%s!=4n/bytes", k, v[k, "ratio"]
      }
    }' "$L/jflat")
  check "roundtrip $1: stats.json has $2 steps with step,n,bytes,bits_per_value,ratio,max_abs_err,rmse" \
    "$(isempty "$bad")" "problems:$bad"
}

# fp32 is lossless: outputs equal inputs byte for byte.
if rt fp32 fp32 "$IN/a.f32" "$IN/b.f32"; then
  rt_files fp32 2
  rt_stats fp32 2
  cmp -s "$IN/a.f32" "$OK/fp32/step-0.f32" && cmp -s "$IN/b.f32" "$OK/fp32/step-1.f32"
  check "roundtrip fp32: step files are byte-identical to the inputs" $?
  e=$(jget "$OK/fp32/stats.json" 0 max_abs_err) r=$(jget "$OK/fp32/stats.json" 0 rmse)
  num_eq "$e" 0 && num_eq "$r" 0
  check "roundtrip fp32: max_abs_err and rmse are 0" $? "max_abs_err=$e rmse=$r"
fi

# Payload sizes (n = 1001, so the ceilings matter).
for sz in "fp32:$((4 * N))" "fp16:$((2 * N))" "q8:$((N + 4))" \
  "trunc:bits=22:$(((10 * N + 7) / 8))" "onebit:$(((N + 7) / 8 + 8))" \
  "topk:ratio=0.5:$(((N + 7) / 8 + 4 * ((N + 1) / 2)))"; do
  spec=${sz%:*} want=${sz##*:}
  dir=size-${spec//[:=.]/_}
  if rt "$dir" "$spec" "$IN/a.f32" "$IN/b.f32"; then
    b0=$(jget "$OK/$dir/stats.json" 0 bytes) b1=$(jget "$OK/$dir/stats.json" 1 bytes)
    [ "$b0" = "$want" ] && [ "$b1" = "$want" ]
    check "roundtrip $spec: bytes = $want for n = $N" $? "got bytes $b0, $b1"
    [ "$(fsize "$OK/$dir/step-0.f32")" = $((4 * N)) ]
    check "roundtrip $spec: step-0.f32 holds $N float32" $? \
      "size $(fsize "$OK/$dir/step-0.f32")"
  fi
done
rt_files size-q8 2
rt_stats size-q8 2

# topk: state carries (error accumulation) across identical steps.
if rt topk topk:ratio=0.5 "$IN/a.f32" "$IN/a.f32"; then
  rt_stats topk 2
  ! cmp -s "$OK/topk/step-0.f32" "$OK/topk/step-1.f32"
  check "roundtrip topk:ratio=0.5: identical steps decode differently" $?
  paste <(words "$IN/a.f32") <(words "$OK/topk/step-0.f32") \
    <(words "$OK/topk/step-1.f32") >"$L/topk.tsv"
  sent0=$(awk '$2 != "00000000" && $2 != "80000000"' "$L/topk.tsv" | wc -l)
  exact0=$(awk '$2 != "00000000" && $2 != "80000000" && $1 == $2' "$L/topk.tsv" | wc -l)
  new1=$(awk '($2 == "00000000" || $2 == "80000000") && $3 != "00000000" && $3 != "80000000"' "$L/topk.tsv" | wc -l)
  [ "$sent0" -eq $(((N + 1) / 2)) ] && [ "$exact0" -eq "$sent0" ]
  check "roundtrip topk:ratio=0.5: step 0 sends exactly ceil(n/2) input values" $? \
    "sent $sent0, of which $exact0 equal to the input"
  [ "$new1" -gt 0 ]
  check "roundtrip topk:ratio=0.5: step 1 sends values held back in step 0 (residual carried)" $? \
    "positions zero in step 0 and nonzero in step 1: $new1"
fi

# 3lc: state carries.
if rt 3lc 3lc:s=1.5 "$IN/a.f32" "$IN/a.f32" "$IN/a.f32"; then
  rt_files 3lc 3
  rt_stats 3lc 3
  ! cmp -s "$OK/3lc/step-0.f32" "$OK/3lc/step-1.f32"
  check "roundtrip 3lc:s=1.5: identical steps decode differently (residual carried)" $?
fi

# inceptionn: class counts sum to n.
if rt inc inceptionn:eb=-10 "$IN/a.f32" "$IN/b.f32"; then
  rt_stats inc 2
  bad=
  for k in 0 1; do
    s=0
    for c in 0 8 16 32; do
      v=$(jget "$OK/inc/stats.json" $k class_${c}bit)
      case $v in '' | *[!0-9]*) bad+=" step$k.class_${c}bit=$v" ; v=0 ;; esac
      s=$((s + v))
    done
    [ "$s" -eq "$N" ] || bad+=" step$k sum=$s"
  done
  check "roundtrip inceptionn: class_0bit+class_8bit+class_16bit+class_32bit = n" \
    "$(isempty "$bad")" "problems:$bad (n = $N)"
fi

# Determinism: the same command twice gives byte-identical outputs.
for spec in terngrad "rgc:ratio=0.01,select=sampled" "3lc:s=1.75" \
  "inceptionn:eb=-8" onebit "qsgd:levels=7,bucket=100"; do
  d=det-${spec//[:=.,]/_}
  rt "$d-1" "$spec" "$IN/a.f32" "$IN/b.f32" "$IN/c.f32" -- --seed 7 &&
    rt "$d-2" "$spec" "$IN/a.f32" "$IN/b.f32" "$IN/c.f32" -- --seed 7 || continue
  diff -r "$OK/$d-1" "$OK/$d-2" >/dev/null
  check "roundtrip $spec --seed 7 twice: byte-identical outputs" $? \
    "$(diff -rq "$OK/$d-1" "$OK/$d-2" 2>&1 | head -3)"
done
# --seed drives the random choices of a stochastic codec.
for spec in terngrad qsgd; do
  if rt "seed-1-$spec" "$spec" "$IN/a.f32" -- --seed 1 &&
    rt "seed-2-$spec" "$spec" "$IN/a.f32" -- --seed 2; then
    ! cmp -s "$OK/seed-1-$spec/step-0.f32" "$OK/seed-2-$spec/step-0.f32"
    check "roundtrip $spec: --seed 1 and --seed 2 differ" $?
  fi
done

# .npy and .f32 inputs give the same result.
for spec in q8 terngrad "topk:ratio=0.25"; do
  d=npy-${spec//[:=.,]/_}
  rt "$d-f32" "$spec" "$IN/a.f32" "$IN/b.f32" &&
    rt "$d-npy" "$spec" "$IN/a.npy" "$IN/b.f32" || continue
  cmp -s "$OK/$d-f32/step-0.f32" "$OK/$d-npy/step-0.f32" &&
    cmp -s "$OK/$d-f32/step-1.f32" "$OK/$d-npy/step-1.f32" &&
    [ "$(stats_nofile "$OK/$d-f32/stats.json")" = "$(stats_nofile "$OK/$d-npy/stats.json")" ]
  check "roundtrip $spec: .npy input gives the same outputs as .f32" $?
done

# File names that need escaping in JSON.
odd='we"ird\name.f32'
cp "$IN/a.f32" "$IN/$odd"
if rt oddname q8 "$IN/$odd"; then
  json_valid "$OK/oddname/stats.json"
  case $? in
  0) pass "roundtrip: stats.json is valid JSON for an input named $odd" ;;
  1) fail "roundtrip: stats.json is valid JSON for an input named $odd" \
    "the \"file\" member is not escaped: $(grep -o '"file": "[^,]*,' "$OK/oddname/stats.json" | head -1)" ;;
  2) echo "note - python3 not found, JSON validity not checked" ;;
  esac
fi

# ---- encode / decode --------------------------------------------------------

for spec in fp32 fp16 bf16 trunc:bits=22 q8 inceptionn:eb=-8 3lc:s=1.5 \
  terngrad "qsgd:levels=12,bucket=100" onebit topk:ratio=0.25 \
  "rgc:ratio=0.01" "rgc:ratio=0.01,select=exact,asq=1"; do
  t=${spec//[:=.,]/_}
  rt "ed-$t" "$spec" "$IN/a.f32" || continue
  C=$OK/ed-$t.gscd
  run_ok "encode $spec exits 0" codec encode --codec "$spec" --in "$IN/a.f32" --out "$C" || continue
  canon=$(jget "$OK/ed-$t/stats.json" 0 codec)
  bytes=$(jget "$OK/ed-$t/stats.json" 0 bytes)
  case $bytes in '' | *[!0-9]*) bytes=0 ;; esac
  [ "$(head -c 4 "$C")" = GSCD ] && [ "$(fsize "$C")" = $((28 + ${#canon} + bytes)) ]
  check "encode $spec: container is GSCD + 28 + |spec| + payload bytes" $? \
    "size $(fsize "$C"), want 28 + ${#canon} ('$canon') + $bytes"
  if run_ok "decode $spec to .f32 exits 0" codec decode --in "$C" --out "$OK/ed-$t.f32"; then
    cmp -s "$OK/ed-$t.f32" "$OK/ed-$t/step-0.f32"
    check "decode $spec: .f32 equals roundtrip step-0.f32" $?
  fi
  if run_ok "decode $spec to .npy exits 0" codec decode --in "$C" --out "$OK/ed-$t.npy"; then
    f=$OK/ed-$t.npy
    hl=$(od -An -v -tu2 -j 8 -N 2 "$f" | tr -d ' ')
    tail -c +$((11 + hl)) "$f" >"$L/npydata"
    [ "$(head -c 6 "$f" | tail -c 5)" = NUMPY ] && [ $(((10 + hl) % 64)) -eq 0 ] &&
      head -c $((10 + hl)) "$f" | grep -q "'<f4'" &&
      head -c $((10 + hl)) "$f" | grep -q "($N,)" &&
      cmp -s "$L/npydata" "$OK/ed-$t/step-0.f32"
    check "decode $spec: .npy is a float32 ($N,) array equal to roundtrip step-0" $? \
      "header: $(head -c $((10 + hl)) "$f" | tail -c +11 | tr -d '\n')"
    if [ "$spec" = q8 ] && rt "ed-npyback" fp32 "$f"; then
      cmp -s "$OK/ed-npyback/step-0.f32" "$OK/ed-$t/step-0.f32"
      check "decode q8 .npy reads back through roundtrip fp32 unchanged" $?
    fi
  fi
done

# Damaged containers (built from the q8 one).
C=$OK/ed-q8.gscd
BADC=$W/in/containers
mkdir -p "$BADC"
if [ -f "$C" ]; then
  sz=$(fsize "$C")
  head -c $((sz - 1)) "$C" >"$BADC/trunc1.gscd"
  head -c 20 "$C" >"$BADC/trunc20.gscd"
  cp "$C" "$BADC/flip_payload.gscd"
  flip_bit "$BADC/flip_payload.gscd" $((sz - 10))
  cp "$C" "$BADC/flip_n.gscd"
  flip_bit "$BADC/flip_n.gscd" 12  # in n (spec "q8" is 2 bytes)
  cp "$C" "$BADC/flip_spec.gscd"
  flip_bit "$BADC/flip_spec.gscd" 9
  cp "$C" "$BADC/flip_crc.gscd"
  flip_bit "$BADC/flip_crc.gscd" 27
  { cat "$C"; printf 'x'; } >"$BADC/extra.gscd"
else
  fail "damaged containers: no q8 container to damage (encode failed)"
fi

# ---- bench and compare ----------------------------------------------------

BH="codec,n,encode_gbps,decode_gbps,memcpy_gbps,encode_x_memcpy,decode_x_memcpy,bits_per_value,bound_gbps,encode_x_bound"
num_re='^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$'
# csv_tsv FILE: the CSV records (RFC 4180 quoting) as tab-separated lines.
csv_tsv() {
  awk '{
    n = 0; f = ""; q = 0; out = ""
    for (i = 1; i <= length($0); i++) {
      c = substr($0, i, 1)
      if (q) {
        if (c == "\"") { if (substr($0, i + 1, 1) == "\"") { f = f c; i++ } else q = 0 }
        else f = f c
      } else if (c == "\"") q = 1
      else if (c == ",") { out = out (n++ ? "\t" : "") f; f = "" }
      else f = f c
    }
    print out (n ? "\t" : "") f
  }' "$1"
}
if run_ok "bench --codec q8 --n 100000 --runs 5 --format csv exits 0" \
  codec bench --codec q8 --n 100000 --runs 5 --format csv; then
  csv_tsv "$L/out" >"$L/bench1"
  [ "$(head -1 "$L/out")" = "$BH" ]
  check "bench csv: header line" $? "got: $(head -1 "$L/out")"
  [ "$(nlines "$L/bench1")" -eq 2 ]
  check "bench csv --codec q8: exactly one row" $? "got $(($(nlines "$L/bench1") - 1)) rows"
  awk -F '\t' -v re="$num_re" 'NR == 2 { ok = NF == 10 && $1 == "q8" && $2 == 100000
      for (i = 3; i <= 10; i++) if ($i !~ re) ok = 0
      d = $8 - 8 * 100004 / 100000; if (d < 0) d = -d; if (d > 1e-3) ok = 0
      d = $10 - $3 / $9; if (d < 0) d = -d; if (d > 0.01 * $10 + 2e-3) ok = 0 }
    END { exit !ok }' "$L/bench1"
  check "bench csv --codec q8: row is q8,100000,<8 numbers>, bits_per_value = 8(n+4)/n, encode_x_bound = encode / bound (q8 reads x twice)" $? \
    "row: $(sed -n 2p "$L/out")"
fi
if run_ok "bench --codec all --n 2000 --runs 5 --format csv exits 0" \
  codec bench --codec all --n 2000 --runs 5 --format csv; then
  cp "$L/out" "$L/bench2.csv"
  csv_tsv "$L/out" >"$L/bench2"
  rows=$(($(nlines "$L/bench2") - 1))
  miss=
  for c in $CODECS; do
    awk -F '\t' -v c="$c" 'NR > 1 { split($1, a, ":"); if (a[1] == c) f = 1 } END { exit !f }' \
      "$L/bench2" || miss+=" $c"
  done
  # The bound columns: numbers for the codecs whose encoder passes twice
  # over memory (codec_encode_passes), empty for the others.
  bad=$(awk -F '\t' -v re="$num_re" 'NR > 1 { ok = NF == 10 && $2 == 2000
      for (i = 3; i <= 8; i++) if ($i !~ re) ok = 0
      split($1, a, ":"); two = a[1] ~ /^(q8|3lc|terngrad|onebit)$/
      for (i = 9; i <= 10; i++) if (two ? $i !~ re : $i != "") ok = 0
      if (!ok) print NR ": " $0 }' "$L/bench2" | head -3)
  dups=$(awk -F '\t' 'NR > 1 { print $1 }' "$L/bench2" | sort | uniq -d | head -3)
  [ "$(head -1 "$L/bench2.csv")" = "$BH" ] && [ "$rows" -ge 10 ] && [ -z "$miss" ] &&
    [ -z "$bad" ] && [ -z "$dups" ]
  check "bench csv --codec all: header and one well-formed row per setting, every codec" $? \
    "rows $rows; codecs missing:$miss; duplicates: $dups" \
    "rows without 10 fields (codec,2000,6 numbers, the bound: 2 numbers or empty) after CSV parsing:" "$bad"
fi
if run_ok "bench (table) --codec fp16 --n 1000 exits 0" codec bench --codec fp16 --n 1000; then
  grep -q fp16 "$L/out"
  check "bench table names the codec" $?
fi
if run_ok "bench (table) --codec onebit --n 1000 --warm exits 0" codec bench --codec onebit --n 1000 --warm; then
  grep -q "bound GB/s" "$L/out" && grep -q "^onebit " "$L/out" && grep -q "warm" "$L/out"
  check "bench table --warm: onebit's row, the bound column, says warm" $? "got: $(cat "$L/out")"
fi

if run_ok "compare --n 10000 --steps 3 exits 0" codec compare --n 10000 --steps 3; then
  cp "$L/out" "$L/cmp1"
  miss=
  for c in $CODECS; do grep -q "^$c" "$L/cmp1" || miss+=" $c"; done
  [ -z "$miss" ] && [ "$(nlines "$L/cmp1")" -ge 11 ]
  check "compare: table has a line for each codec" $? "missing:$miss"
fi
if run_ok "compare --n 10000 --steps 3 --format csv exits 0" \
  codec compare --n 10000 --steps 3 --format csv; then
  cp "$L/out" "$L/cmp2.csv"
  csv_tsv "$L/out" >"$L/cmp2"
  rows=$(($(nlines "$L/cmp2") - 1))
  miss=
  for c in $CODECS; do
    awk -F '\t' -v c="$c" 'NR > 1 { split($1, a, ":"); if (a[1] == c) f = 1 } END { exit !f }' \
      "$L/cmp2" || miss+=" $c"
  done
  nf=$(awk -F '\t' '{ print NF }' "$L/cmp2" | sort -u | tr '\n' ' ')
  bad=$(awk -F '\t' -v re="$num_re" 'NR > 1 { ok = NF == 9 && $2 == 10000 && $3 == 3
      for (i = 4; i <= NF; i++) if ($i !~ re) ok = 0; if (!ok) print NR ": " $0 }' "$L/cmp2" | head -3)
  dups=$(awk -F '\t' 'NR > 1 { print $1 }' "$L/cmp2" | sort | uniq -d | head -3)
  [ "$rows" -ge 10 ] && [ -z "$miss" ] && [ "$(echo $nf)" = 9 ] &&
    [ -z "$bad" ] && [ -z "$dups" ]
  check "compare csv: header and one row per codec setting, every codec, n and steps columns" $? \
    "rows $rows; codecs missing:$miss; field counts seen: $nf; duplicates: $dups" \
    "rows without 9 fields (codec,10000,3,6 numbers) after CSV parsing:" "$bad"
  awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "rmse") r = i; if ($1 != "codec") exit 1 }
    NR > 1 && $1 == "fp32" { f = 1; if ($r + 0 != 0) exit 1 } END { exit !f }' "$L/cmp2"
  check "compare csv: fp32 row has rmse 0" $? "$(grep '^fp32' "$L/cmp2")"
fi
if run_ok "compare --codec q8 --codec fp16 --format csv exits 0" \
  codec compare --n 1000 --steps 2 --codec q8 --codec fp16 --format csv; then
  [ "$(csv_tsv "$L/out" | awk -F '\t' 'NR > 1 { print $1 }' | tr '\n' ' ')" = "q8 fp16 " ]
  check "compare csv with two --codec: exactly those two rows" $? "$(cat "$L/out")"
fi

# ---- bad input --------------------------------------------------------------

snap() {
  (cd "$W" && find . -print | sort && find . -type f -exec cksum {} + | sort)
}
# bad NAME ARGS...: exit 2, one stderr line starting "gradsim:", no change
# at all under the workspace (no new, removed or modified file).
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

B=$W/bad
A=$IN/a.f32
RT=(codec roundtrip)
bad "unknown codec" "${RT[@]}" --codec nosuch --in "$A" --out-dir "$B/o"
bad "unknown codec (existing out dir)" "${RT[@]}" --codec nosuch --in "$A" --out-dir "$W/pre"
bad "unknown key inceptionn:foo=1" "${RT[@]}" --codec inceptionn:foo=1 --in "$A" --out-dir "$B/o"
bad "inceptionn:eb=1" "${RT[@]}" --codec inceptionn:eb=1 --in "$A" --out-dir "$B/o"
bad "inceptionn:eb=-200" "${RT[@]}" --codec inceptionn:eb=-200 --in "$A" --out-dir "$B/o"
bad "inceptionn:eb=abc" "${RT[@]}" --codec inceptionn:eb=abc --in "$A" --out-dir "$B/o"
bad "inceptionn:eb= (empty value)" "${RT[@]}" --codec inceptionn:eb= --in "$A" --out-dir "$B/o"
bad "inceptionn:eb=-10x" "${RT[@]}" --codec inceptionn:eb=-10x --in "$A" --out-dir "$B/o"
bad "3lc:s=2" "${RT[@]}" --codec 3lc:s=2 --in "$A" --out-dir "$B/o"
bad "3lc:s=0.9" "${RT[@]}" --codec 3lc:s=0.9 --in "$A" --out-dir "$B/o"
bad "3lc:zre=2" "${RT[@]}" --codec 3lc:zre=2 --in "$A" --out-dir "$B/o"
bad "topk:ratio=0" "${RT[@]}" --codec topk:ratio=0 --in "$A" --out-dir "$B/o"
bad "topk:ratio=1.5" "${RT[@]}" --codec topk:ratio=1.5 --in "$A" --out-dir "$B/o"
bad "topk:ratio=nan" "${RT[@]}" --codec topk:ratio=nan --in "$A" --out-dir "$B/o"
bad "trunc:bits=0" "${RT[@]}" --codec trunc:bits=0 --in "$A" --out-dir "$B/o"
bad "trunc:bits=32" "${RT[@]}" --codec trunc:bits=32 --in "$A" --out-dir "$B/o"
bad "rgc:select=fast" "${RT[@]}" --codec rgc:select=fast --in "$A" --out-dir "$B/o"
bad "rgc:select=sampled,asq=1" "${RT[@]}" --codec rgc:select=sampled,asq=1 --in "$A" --out-dir "$B/o"
bad "duplicate key 3lc:s=1,s=1.5" "${RT[@]}" --codec 3lc:s=1,s=1.5 --in "$A" --out-dir "$B/o"
bad "duplicate key topk:ratio=0.1,ratio=0.1" "${RT[@]}" --codec topk:ratio=0.1,ratio=0.1 --in "$A" --out-dir "$B/o"
bad "empty param list q8:" "${RT[@]}" --codec q8: --in "$A" --out-dir "$B/o"
bad "parameter on a codec without any (q8:x=1)" "${RT[@]}" --codec q8:x=1 --in "$A" --out-dir "$B/o"
bad "empty parameter (topk:ratio=0.1,)" "${RT[@]}" --codec topk:ratio=0.1, --in "$A" --out-dir "$B/o"
bad "missing --codec" "${RT[@]}" --in "$A" --out-dir "$B/o"
bad "missing --in" "${RT[@]}" --codec q8 --out-dir "$B/o"
bad "missing --out-dir" "${RT[@]}" --codec q8 --in "$A"
bad "--codec without a value" "${RT[@]}" --in "$A" --out-dir "$B/o" --codec
bad "nonexistent input" "${RT[@]}" --codec q8 --in "$IN/nosuch.f32" --out-dir "$B/o"
bad "input is a directory" "${RT[@]}" --codec q8 --in "$IN" --out-dir "$B/o"
bad "empty input file" "${RT[@]}" --codec q8 --in "$IN/empty.f32" --out-dir "$B/o"
bad ".npy with zero values" "${RT[@]}" --codec q8 --in "$IN/zero.npy" --out-dir "$B/o"
bad ".f32 size not a multiple of 4" "${RT[@]}" --codec q8 --in "$IN/six.f32" --out-dir "$B/o"
bad ".npy with dtype <f8" "${RT[@]}" --codec q8 --in "$IN/f8.npy" --out-dir "$B/o"
bad ".npy truncated header" "${RT[@]}" --codec q8 --in "$IN/trunc_header.npy" --out-dir "$B/o"
bad ".npy truncated data" "${RT[@]}" --codec q8 --in "$IN/trunc_data.npy" --out-dir "$B/o"
bad "unknown file extension .bin" "${RT[@]}" --codec q8 --in "$IN/a.bin" --out-dir "$B/o"
bad "unknown file extension .txt" "${RT[@]}" --codec q8 --in "$IN/a.txt" --out-dir "$B/o"
bad "steps of different lengths" "${RT[@]}" --codec q8 --in "$A" --in "$IN/short.f32" --out-dir "$B/o"
bad "steps of different lengths (existing out dir)" "${RT[@]}" --codec q8 --in "$A" --in "$IN/short.f32" --out-dir "$W/pre"
for c in q8 3lc topk rgc; do
  bad "NaN input with $c" "${RT[@]}" --codec $c --in "$IN/nan.f32" --out-dir "$B/o"
done
bad "infinite input with q8" "${RT[@]}" --codec q8 --in "$IN/inf.f32" --out-dir "$B/o"
bad "NaN in step 2 of 3 (q8)" "${RT[@]}" --codec q8 --in "$A" --in "$IN/b.f32" --in "$IN/nan.f32" --out-dir "$B/o"
bad "NaN in step 2 of 3 (topk, existing out dir)" "${RT[@]}" --codec topk --in "$A" --in "$IN/b.f32" --in "$IN/nan.f32" --out-dir "$W/pre"
bad "NaN in step 1 of 3 (3lc)" "${RT[@]}" --codec 3lc --in "$A" --in "$IN/nan.f32" --in "$IN/b.f32" --out-dir "$B/o"
bad "unknown option" "${RT[@]}" --codec q8 --in "$A" --out-dir "$B/o" --bogus
bad "extra positional argument" "${RT[@]}" --codec q8 --in "$A" --out-dir "$B/o" extra
bad "--seed not a number" "${RT[@]}" --codec q8 --in "$A" --out-dir "$B/o" --seed x
bad "--out-dir is an existing regular file" "${RT[@]}" --codec q8 --in "$A" --out-dir "$W/plainfile"
bad "unknown subcommand" codec frobnicate
bad "unknown command" frobnicate
bad "codec list with an extra argument" codec list extra

bad "encode: unknown codec" codec encode --codec nosuch --in "$A" --out "$B/c.gscd"
bad "encode: missing --out" codec encode --codec q8 --in "$A"
bad "encode: NaN input with q8" codec encode --codec q8 --in "$IN/nan.f32" --out "$B/c.gscd"
bad "encode: empty input" codec encode --codec q8 --in "$IN/empty.f32" --out "$B/c.gscd"
bad "decode: --out with a bad extension" codec decode --in "$C" --out "$B/g.txt"
bad "decode: missing --in" codec decode --out "$B/g.f32"
bad "decode: nonexistent container" codec decode --in "$B/nosuch.gscd" --out "$B/g.f32"
bad "decode: non-container file (.f32)" codec decode --in "$A" --out "$B/g.f32"
bad "decode: non-container file (.npy)" codec decode --in "$IN/a.npy" --out "$B/g.npy"
bad "decode: empty file" codec decode --in "$IN/empty.f32" --out "$B/g.f32"
for f in trunc1 trunc20 flip_payload flip_n flip_spec flip_crc extra; do
  [ -f "$BADC/$f.gscd" ] || continue
  bad "decode: damaged container ($f)" codec decode --in "$BADC/$f.gscd" --out "$B/g.f32"
done

bad "bench --runs 2" codec bench --codec q8 --n 1000 --runs 2
bad "bench --format xml" codec bench --codec q8 --n 1000 --format xml
bad "bench --n 0" codec bench --codec q8 --n 0
bad "bench unknown codec" codec bench --codec nosuch --n 1000
bad "compare --steps 0" codec compare --n 1000 --steps 0
bad "compare --format xml" codec compare --n 1000 --steps 1 --format xml
bad "compare unknown codec" codec compare --n 1000 --steps 1 --codec nosuch

# cli.h: "2 bad input of any kind (one line on stderr ...)".
bad "no command at all" 
bad "codec without a subcommand" codec

# ---- summary ----------------------------------------------------------------

echo
echo "$npass passed, $nfail failed"
if [ "$nfail" -gt 0 ]; then
  printf '  failed: %s\n' "${FAILED[@]}"
  exit 1
fi
exit 0
