#!/usr/bin/env bash
# tests/layers.sh: the engine's files are layered (docs/architecture.md):
# no file of sim/ calls a file of a layer above its own, and no files
# call each other in a circle. "Calls" is what the linker sees: a symbol
# that one object file uses and another defines (functions, tables,
# globals, log categories), read with nm from the built objects.
#
#   layers.sh BUILD_DIR
set -u
export LC_ALL=C
OBJ=${1:?build directory}/sim/libgsengine.a.p
[ -d "$OBJ" ] || { echo "no objects in $OBJ"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gradsim-layers.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# The layers, lowest first: a file may call its own layer or those before.
LAYERS="comm_rate.cpp fat_tree_zone.cpp names.c platforms/ platform.c trace.c
ledger.c sim.c payload.c account.c ffwd/ collectives/ bucketwise.c linear.c
schedules/ run.c predict.c"

# The source file of an object: collectives_nccl.c.o -> collectives/nccl.c.
src_of() {
  local f=${1%.o}
  case $f in
  collectives_* | schedules_* | platforms_* | ffwd_*) f=${f/_//} ;;
  esac
  echo "$f"
}
layer_of() {
  local i=0 l
  for l in $LAYERS; do
    case $l in
    */) case $1 in "$l"*) echo $i && return ;; esac ;;
    *) [ "$1" = "$l" ] && echo $i && return ;;
    esac
    i=$((i + 1))
  done
  echo -1
}

for o in "$OBJ"/*.o; do
  s=$(src_of "$(basename "$o")")
  nm --defined-only -g "$o" | awk -v s="$s" 'NF == 3 { print $3, s }' >>"$T/defs"
  nm -u "$o" | awk -v s="$s" '{ print $2, s }' >>"$T/uses"
done
sort -u "$T/defs" >"$T/defs.s"
sort -u "$T/uses" >"$T/uses.s"
# caller callee symbol, one line per use of another file's symbol
join "$T/uses.s" "$T/defs.s" | awk '$2 != $3 { print $2, $3, $1 }' |
  sort -u >"$T/edges"

fail=0
n=$(awk 'END { print NR }' "$T/edges")
while read -r a b sym; do
  la=$(layer_of "$a") lb=$(layer_of "$b")
  if [ "$la" -lt 0 ] || [ "$lb" -lt 0 ]; then
    echo "FAIL - $a or $b is in no layer of tests/layers.sh"
    fail=1
  elif [ "$la" -lt "$lb" ]; then
    echo "FAIL - $a calls $b, a layer above it ($sym)"
    fail=1
  fi
done <"$T/edges"
# A circle inside a layer: tsort names the files in it.
awk '{ print $1, $2 }' "$T/edges" | sort -u | tsort >/dev/null 2>"$T/loops"
if [ -s "$T/loops" ]; then
  echo "FAIL - files call each other in a circle:"
  sed 's/^/       /' "$T/loops"
  fail=1
fi
if [ $fail = 0 ]; then
  echo "ok   - sim/: $n uses of another file's symbols, none upwards, no circle"
fi
exit $fail
