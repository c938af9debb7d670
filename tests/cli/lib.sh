# tests/cli/lib.sh: helpers shared by the command-line test scripts
# (sourced; needs G = the gradsim executable, and L = a log directory
# when its helpers run: workdir makes one).

# workdir NAME: a scratch directory T, removed on exit; W in it, where
# gradsim runs and writes (the working directory from here on), and L,
# where its output is captured.
workdir() {
  T=$(mktemp -d "${TMPDIR:-/tmp}/gradsim-$1.XXXXXX") || exit 1
  trap 'rm -rf "$T"' EXIT
  trap 'exit 1' HUP INT TERM
  W=$T/w
  L=$T/log
  mkdir -p "$W" "$L"
  cd "$W" || exit 1
}
npass=0
nfail=0
FAILED=()
TIMEOUT=
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 300"; fi
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
  [ "$RC" -eq 0 ] && return 0
  fail "$name" "command: gradsim $(quote "$@")" "expected exit 0, got $RC" \
    "$(err_head)"
  return 1
}
# abs_le A B S TOL: |A - B| <= TOL * |S| (all three numbers).
abs_le() {
  awk -v a="$1" -v b="$2" -v s="$3" -v t="$4" 'BEGIN {
    re = "^-?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?$"
    if (a !~ re || b !~ re || s !~ re) exit 1
    d = a - b; if (d < 0) d = -d; m = s < 0 ? -s : s
    exit !(d <= t * m) }'
}
# rel_le A B TOL: |A - B| <= TOL * |B|.
rel_le() { abs_le "$1" "$2" "$2" "$3"; }
# csv_get FILE ROW COLUMN: the field under header COLUMN in data row ROW
# (1 = the first after the header); unquoted fields only.
csv_get() {
  awk -F ',' -v r="$2" -v c="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
    NR == r + 1 { if (k) { print $k; f = 1 } exit }
    END { if (!f) print "MISSING" }' "$1"
}
csv_rows() { echo $(($(nlines "$1") - 1)); }
# finish: the summary and the exit status.
finish() {
  echo
  echo "$npass passed, $nfail failed"
  if [ "$nfail" -gt 0 ]; then
    printf 'failed: %s\n' "${FAILED[@]}"
    exit 1
  fi
  exit 0
}
