#!/bin/sh
# tests/valgrind.sh GRADSIM OUTDIR: representative `gradsim run`s under
# valgrind's memcheck. Every process (gradsim and the simulation process it
# forks per point) must report no invalid read or write, no use of
# uninitialised values and no definitely lost block; then the script prints
# "valgrind: clean" and exits 0, else it names the log and exits 1.
#
# Use a build without sanitizers, preferably unoptimised, e.g.
#   meson setup build-valgrind -Dbuildtype=debug -Dallocator=system &&
#     ninja -C build-valgrind
#   tests/valgrind.sh build-valgrind/gradsim /tmp/vg
# (about a minute and a half on the development machine.)
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 GRADSIM OUTDIR" >&2
  exit 2
fi
gradsim=$1
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null 2>&1 || {
  echo "valgrind: not installed (Debian: apt-get install valgrind)" >&2
  exit 77
}
rm -rf "$out"
mkdir -p "$out"

failed=""
vg() { # vg NAME ARGS...: one gradsim command under memcheck
  name=$1
  shift
  if valgrind --quiet --leak-check=full --show-leak-kinds=definite \
      --errors-for-leak-kinds=definite --error-exitcode=99 \
      --log-file="$out/$name.%p.log" "$gradsim" "$@" \
      >"$out/$name.out" 2>&1; then
    echo "valgrind: $name: clean"
  else
    echo "valgrind: $name: FAILED; logs $out/$name.*.log, output $out/$name.out"
    failed="$failed $name"
  fi
}

# The main job on 4 workers: the worker-aggregator baseline, the ring and
# INCEPTIONN's ring, without and with the codec, on sampled payloads.
vg default run "$src/experiments/default.ini" --set platform.nodes=4 \
  --out "$out/default"
# Every value carried and checked by the oracle, with an error-feedback
# codec (3LC) through an aggregator, and the overlapped schedule.
vg oracle run "$src/experiments/default.ini" --set platform.nodes=4 \
  --set model.name=mnist-mlp --set exchange.algorithm=ps,allgather-rdb \
  --set exchange.codec=3lc --set exchange.payload=full \
  --set training.mode=overlap --set training.iterations=2 \
  --out "$out/oracle"
# The NIC engine, with packets.
vg nic run "$src/experiments/nic-placement.ini" \
  --set platform.bandwidth=40Gbps --set nic.mtu=1500 \
  --set exchange.placement=nic --out "$out/nic"
# A codec round trip through the container.
"$gradsim" gradients --model mnist-mlp --out "$out/g.npy" >/dev/null 2>&1
vg codec codec roundtrip --codec inceptionn:eb=-10 --in "$out/g.npy" \
  --out-dir "$out/codec"

if [ -n "$failed" ]; then
  echo "valgrind: failed:$failed"
  exit 1
fi
echo "valgrind: clean"
exit 0
