#!/usr/bin/env bash
# tests/cli/test_cli_run.sh: command-line behaviour of `gradsim run`.
#
#   test_cli_run.sh GRADSIM SOURCE_ROOT
#
# Checks the outputs and their columns, sweeps, the analytic models in
# runs.csv, determinism (same seed, byte-identical files), resuming,
# --plot and --trace, the shipped experiments' syntax, and that every kind
# of bad input exits with status 2, prints one "gradsim: ..." line on
# stderr and nothing on stdout, and writes nothing.
set -u
export LC_ALL=C
G=$1
SRC=${2:-.}
case $G in /*) ;; *) G=$PWD/$G ;; esac
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
. "$SRC/tests/cli/lib.sh"
workdir run

cat >small.ini <<'EOF'
[platform]
nodes = 4
bandwidth = 10Gbps
latency = 5us
ideal = true
[model]
name = synthetic
params = 480000
tensors = 2
compute = 0.002
[exchange]
algorithm = ring
payload = none
[training]
iterations = 2
EOF

# ---- dev.sh: a set-up machine needs no install ------------------------------
# The test suite runs after ./dev.sh installed everything: `deps` must find
# nothing missing (a virtual package name there would make every
# ./dev.sh call run apt-get, which needs the network and root).
deps=$(sh "$SRC/dev.sh" deps 2>&1)
check "dev.sh deps finds every package installed" "$(isempty "$deps")" \
  "missing: $deps"

# ---- help ------------------------------------------------------------------
if run_ok "run --help exits 0" run --help; then
  miss=
  for o in --set --out --jobs --plot --trace --quiet; do
    grep -q -- "$o" "$L/out" || miss+=" $o"
  done
  check "run --help lists its options" "$(isempty "$miss")" "missing:$miss"
fi

# ---- outputs ----------------------------------------------------------------
if run_ok "a small ring runs" run small.ini --out o1; then
  hdr=$(head -1 o1/runs.csv)
  miss=
  for c in model nodes algorithm codec placement mode iterations exchange_s \
    iteration_s compute_s codec_s comm_s reduce_s idle_s wire_bytes \
    formula_exchange_s formula_rel_err oracle; do
    echo ",$hdr," | grep -q ",$c," || miss+=" $c"
  done
  check "runs.csv has the required columns" "$(isempty "$miss")" \
    "missing:$miss" "header: $hdr"
  check "runs.csv ends with the split, the buckets skipped, the compression and the memory" \
    "$(case $hdr in *,grad_dtype,split_compute_s,exposed_comm_s,exposed_codec_s,exposed_reduce_s,split_idle_s,aggr_reduce_s,fast_forwarded_buckets,compression,implementation,optimizer,activation_checkpointing,sharding,memory_params_bytes,memory_grads_bytes,memory_optimizer_bytes,memory_activations_bytes,memory_residual_bytes,memory_bytes,capacity_bytes,fits,memory_buffers_bytes) echo 0 ;; *) echo 1 ;; esac)" \
    "header: $hdr"
  check "runs.csv has one row" "$([ "$(csv_rows o1/runs.csv)" = 1 ]; echo $?)"
  rel=$(csv_get o1/runs.csv 1 formula_rel_err)
  check "ring on an ideal star equals its formula (rel err $rel)" \
    "$(awk -v r="$rel" 'BEGIN { exit !(r != "" && r + 0 <= 1e-6) }'; echo $?)"
  # wire bytes: 2 (p-1)/p n per worker, 4 workers.
  wb=$(csv_get o1/runs.csv 1 wire_bytes)
  check "wire_bytes = p 2 (p-1)/p 4n ($wb)" \
    "$(rel_le "$wb" 11520000 1e-9; echo $?)"
  check "iterations.csv: one row per iteration and worker" \
    "$([ "$(csv_rows o1/iterations.csv)" = 8 ]; echo $?)"
  # Each host's link carries, each way, what its worker sends and
  # receives over the run: wire_bytes x 2 iterations / 4 workers.
  lb=$(awk -F, 'NR > 1 && $3 != 5760000 { print $2 "=" $3 }' o1/links.csv)
  check "links.csv: 8 host links, 5,760,000 bytes each way on each" \
    "$([ "$(csv_rows o1/links.csv)" = 8 ] && [ -z "$lb" ]; echo $?)" "$lb"
  check "config.txt holds the effective configuration" \
    "$(grep -q '^algorithm *= *ring' o1/config.txt; echo $?)"
  check "the summary names the result directory" \
    "$(grep -q 'results in o1' "$L/out"; echo $?)"
fi

# ---- sweeps -------------------------------------------------------------------
if run_ok "a sweep runs" run small.ini --set platform.nodes=2,3,4 \
  --set exchange.algorithm=ring,rdb --out o2 --jobs 2; then
  check "a 3 x 2 sweep gives 6 rows" \
    "$([ "$(csv_rows o2/runs.csv)" = 6 ]; echo $?)"
  check "the first swept key varies slowest" \
    "$([ "$(cut -d, -f3,8 o2/runs.csv | tr '\n' ' ')" = \
      "nodes,algorithm 2,ring 2,rdb 3,ring 3,rdb 4,ring 4,rdb " ]; echo $?)" \
    "$(cut -d, -f3,8 o2/runs.csv | tr '\n' ' ')"
  bad=$(awk -F, 'NR > 1 && !($27 != "" && $27 + 0 <= 1e-6)' o2/runs.csv)
  check "every point equals its formula" "$(isempty "$bad")" "$bad"
  # Resume: a second run computes nothing and writes the same files.
  touch -d '2001-01-01' o2/points/*.row
  cp o2/runs.csv "$L/runs2.csv"
  run_ok "a finished sweep resumes" run small.ini --set platform.nodes=2,3,4 \
    --set exchange.algorithm=ring,rdb --out o2 --quiet
  fresh=$(find o2/points -name '*.row' -newer small.ini | head -1)
  check "resuming re-runs no finished point" "$(isempty "$fresh")" "$fresh"
  check "resuming writes the same runs.csv" \
    "$(cmp -s o2/runs.csv "$L/runs2.csv"; echo $?)"
fi

# ---- determinism and the oracle --------------------------------------------
# rgc keeps error feedback: inceptionn (re-encoding partial sums) refuses
# it, so the sweep pairs it with ps and allgather-rdb only.
cat >full.ini <<'EOF'
[platform]
nodes = 4
aggregators = 1
bandwidth = 10Gbps
latency = 10us
[model]
name = synthetic
params = 300001
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
if run_ok "payload = full runs" run full.ini --out d1 --jobs 2 --quiet &&
  run_ok "the same experiment again" run full.ini --out d2 --jobs 1 --quiet; then
  for f in runs.csv iterations.csv links.csv nccl.csv config.txt; do
    check "same seed, byte-identical $f" "$(cmp -s d1/$f d2/$f; echo $?)"
  done
  bad=$(awk -F, 'NR > 1 && $28 != "pass"' d1/runs.csv)
  check "the oracle passes for every point" "$(isempty "$bad")" "$bad"
  run_ok "another seed" run full.ini --out d3 --set gradients.seed=7 --quiet
  check "another seed changes the wire bytes of rgc" \
    "$(cmp -s d1/runs.csv d3/runs.csv; [ $? = 1 ]; echo $?)"
fi

# split_adds_up FILE: the rows whose five parts of iteration_s do not add
# up to it within what 9 printed digits lose.
split_adds_up() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
    { s = $h["split_compute_s"] + $h["exposed_comm_s"] + $h["exposed_codec_s"]
      s += $h["exposed_reduce_s"] + $h["split_idle_s"]; it = $h["iteration_s"]
      d = s - it; if (d < 0) d = -d
      if (!(it > 0) || d > 1e-8 * it) print "point " $1 ": parts " s ", iteration_s " it }
    END { if (NR < 2) print "no rows" }' "$1" || echo "awk failed on $1"
}
if [ -s d1/runs.csv ]; then
  bad=$(split_adds_up d1/runs.csv)
  check "the split adds up to iteration_s with codecs, aggregators, overlap" \
    "$(isempty "$bad")" "$bad"
fi

# ---- where the time goes: the split of iteration_s ------------------------
# A 4-worker ring of 8 equal tensors on an ideal network, compute shorter
# and far longer (0.05 s) than the 26 ms exchange, in each schedule, with
# and without a straggler. sync exposes the whole exchange; with compute
# hiding it, overlap exposes only the last bucket's exchange (an eighth),
# pipe only the last exchange, after the last of 10 iterations (a tenth).
cat >split.ini <<'EOF'
[platform]
nodes = 4
bandwidth = 10Gbps
latency = 5us
ideal = true
[model]
name = synthetic
params = 4800000
tensors = 8
compute = 0.002, 0.05
[exchange]
algorithm = ring
payload = none
[training]
iterations = 10
mode = sync, overlap, pipe
stragglers = 0:1, 2:1.5
EOF
# Rows: compute 0.002 then 0.05; in each sync, overlap, pipe; in each no
# straggler, then worker 2 at 1.5 times the compute.
if run_ok "the split sweep runs" run split.ini --out sp --quiet; then
  bad=$(split_adds_up sp/runs.csv)
  check "sync, overlap, pipe: the parts add up to iteration_s" \
    "$(isempty "$bad")" "$bad"
  bad=
  for r in 1 7; do
    exch=$(csv_get sp/runs.csv $r exchange_s)
    x=$(awk -F, -v r=$((r + 1)) 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i }
      NR == r { printf "%.17g", $h["iteration_s"] - $h["split_compute_s"] }' sp/runs.csv)
    rel_le "$x" "$exch" 1e-8 || bad+=" point $((r - 1)): exposed $x, exchange $exch;"
    rel_le "$(csv_get sp/runs.csv $r exposed_comm_s)" \
      "$(csv_get sp/runs.csv $r comm_s)" 1e-8 ||
      bad+=" point $((r - 1)): exposed_comm_s is not comm_s;"
  done
  check "sync: the whole exchange is exposed" "$(isempty "$bad")" "$bad"
  sc=$(csv_get sp/runs.csv 7 exposed_comm_s)
  oc=$(csv_get sp/runs.csv 9 exposed_comm_s)
  pc=$(csv_get sp/runs.csv 11 exposed_comm_s)
  rel_le "$oc" "$(awk -v s="$sc" 'BEGIN { printf "%.17g", s / 8 }')" 1e-6
  check "overlap hides all but the last bucket ($oc s exposed, sync $sc s)" $?
  rel_le "$pc" "$(awk -v s="$sc" 'BEGIN { printf "%.17g", s / 10 }')" 1e-6
  check "pipe hides all but the last exchange ($pc s exposed, sync $sc s)" $?
  c3=$(csv_get sp/runs.csv 3 exposed_comm_s)
  awk -v c="$c3" -v s="$(csv_get sp/runs.csv 1 exposed_comm_s)" \
    'BEGIN { exit !(c > 0.5 * s) }'
  check "overlap with little compute to hide behind exposes most ($c3 s)" $?
  i=$(csv_get sp/runs.csv 8 split_idle_s)
  awk -v i="$i" 'BEGIN { exit !(i >= 0.025 * (1 - 1e-6) && i < 0.03) }'
  check "a straggler's extra 25 ms of compute shows as idle ($i s)" $?
fi

# compress_min: buckets below it travel as fp32. Tensors of 100000 values
# (synthetic splits evenly): compress_min = 100001 sends all three raw,
# exactly the bytes of codec = none; 100000 compresses them all (ps
# compresses the pushes only: 5/8 of fp32's bytes with q8).
if run_ok "compress_min sweep" run full.ini --out cm --quiet \
    --set exchange.algorithm=ps --set training.mode=sync \
    --set exchange.codec=none,q8,3lc --set model.params=300000 \
    --set exchange.compress_min=100000,100001; then
  w() { awk -F, -v c="$1" -v m="$2" 'NR > 1 && $9 == c && ++k[c] == m { print $25 }' cm/runs.csv; }
  check "compress_min above every tensor: q8 sends fp32's bytes" \
    "$([ "$(w q8 2)" = "$(w none 1)" ]; echo $?)" "q8 $(w q8 2), none $(w none 1)"
  check "compress_min above every tensor: 3lc sends fp32's bytes" \
    "$([ "$(w 3lc 2)" = "$(w none 1)" ]; echo $?)" "3lc $(w 3lc 2)"
  check "compress_min at the tensor size: q8 compresses" \
    "$(awk -v a="$(w q8 1)" -v b="$(w none 1)" 'BEGIN { exit !(a < b * 0.7) }'; echo $?)" \
    "q8 $(w q8 1), none $(w none 1)"
  bad=$(awk -F, 'NR > 1 && $28 != "pass"' cm/runs.csv)
  check "compress_min: the oracle passes" "$(isempty "$bad")" "$bad"
fi

# Local steps under pipe: the local step's gradient must not overwrite the
# vector an exchange still uses (a bug the oracle caught once).
if run_ok "pipe with local steps" run full.ini --out ls1 --quiet \
  --set exchange.algorithm=ring,rdb --set exchange.codec=none,fp16 \
  --set training.mode=pipe,overlap --set training.local_steps=2 \
  --set training.iterations=5 --set platform.nodes=3; then
  bad=$(awk -F, 'NR > 1 && $28 != "pass"' ls1/runs.csv)
  check "the oracle passes with local steps under pipe and overlap" \
    "$(isempty "$bad")" "$bad"
fi

# ---- fast-forward: the same times as simulating every step ----------------
# On every kind of platform (the star, an oversubscribed fat tree, a
# dragonfly, a torus, a platform file) and network model, a ring and
# Rabenseifner over several iterations, synchronous and overlapped:
# fast-forward skips ring steps (and, in sync, whole iterations) and
# changes no simulated time.
cat >ffw.ini <<'EOF'
[platform]
topology = star, fat-tree, dragonfly, torus
nodes = 32
leaf = 8
oversubscription = 4
hosts_per_router = 2
ideal = true, false
[model]
name = synthetic
params = 3200000
tensors = 2
compute = 0.002
[exchange]
algorithm = ring, rabenseifner
payload = none
[training]
mode = sync, overlap
iterations = 8
EOF
# Where the run in ON (fast-forwarded) differs from the one in OFF (every
# step simulated) over N points: simulated times and bytes to 1e-9, as
# "point K COLUMN: A vs B;" items. The split of iteration_s (its exposed
# communication and idle parts: one worker's, followed through the run)
# to 1e-9 of iteration_s, as a part may be 0 in one run and a rounding
# residue in the other.
ff_differences() {
  local on=$1 off=$2 n=$3 i c a b it out=
  for i in $(seq 1 "$n"); do
    for c in exchange_s iteration_s comm_s reduce_s wire_bytes; do
      a=$(csv_get "$on/runs.csv" "$i" $c)
      b=$(csv_get "$off/runs.csv" "$i" $c)
      rel_le "$a" "$b" 1e-9 || out+=" point $((i - 1)) $c: $a vs $b;"
    done
    it=$(csv_get "$off/runs.csv" "$i" iteration_s)
    for c in split_compute_s exposed_comm_s exposed_codec_s \
      exposed_reduce_s split_idle_s; do
      a=$(csv_get "$on/runs.csv" "$i" $c)
      b=$(csv_get "$off/runs.csv" "$i" $c)
      abs_le "$a" "$b" "$it" 1e-9 || out+=" point $((i - 1)) $c: $a vs $b;"
    done
  done
  printf '%s' "$out"
}
# Status 0 when both runs' links.csv put the same bytes on the same links.
same_links() {
  cmp -s <(cut -d, -f1-3 "$1/links.csv") <(cut -d, -f1-3 "$2/links.csv")
}
# Runs INI (with the options after N) into ON and, with fast_forward =
# off, into OFF (N points, LABEL in the messages): status 0 when both ran.
ff_runs() {
  local label=$1 ini=$2 on=$3 off=$4 n=$5
  shift 5
  run_ok "$label, fast-forward on ($n points)" run "$ini" "$@" --out "$on" \
    --quiet &&
    run_ok "$label, fast-forward off ($n points)" run "$ini" "$@" \
      --set exchange.fast_forward=off --out "$off" --quiet
}
# LABEL (ON, fast-forwarded) gives the simulated times and bytes of OFF
# (to 1e-9; EXTRA: more differences found, as items) and links.csv's bytes
# exactly, over N points.
check_ff_equal() {
  local label=$1 on=$2 off=$3 n=$4 extra=${5:-} bad
  bad="$(ff_differences "$on" "$off" "$n")$extra"
  check "$label gives the simulated times and bytes (to 1e-9)" \
    "$(isempty "$bad")" "$bad"
  check "$label gives every link's bytes exactly" \
    "$(same_links "$on" "$off"; echo $?)"
}
# The points (0-based, " K" items) of the N in DIR whose COLUMN is 0
# (WHICH = zero) or is not (WHICH = nonzero).
points_where() {
  local dir=$1 n=$2 column=$3 which=$4 i is out=
  for i in $(seq 1 "$n"); do
    is=nonzero
    [ "$(csv_get "$dir/runs.csv" "$i" "$column")" != 0 ] || is=zero
    [ "$is" != "$which" ] || out+=" $((i - 1))"
  done
  printf '%s' "$out"
}
# Checks (as LABEL) that every one of the N points in DIR has a COLUMN
# other than 0.
check_every() {
  local label=$1 dir=$2 n=$3 column=$4 none
  none=$(points_where "$dir" "$n" "$column" zero)
  check "$label" "$(isempty "$none")" "none in:$none"
}
if ff_runs "steps and iterations" ffw.ini f1 f2 32; then
  ffs=0 ffi=0
  for i in $(seq 1 32); do
    ffs=$((ffs + $(csv_get f1/runs.csv "$i" fast_forwarded_steps)))
    ffi=$((ffi + $(csv_get f1/runs.csv "$i" fast_forwarded_iterations)))
  done
  check "fast-forward skipped ring steps ($ffs) and iterations ($ffi)" \
    "$([ "$ffs" -gt 0 ] && [ "$ffi" -gt 0 ]; echo $?)"
  ffoff=0
  for i in $(seq 1 32); do
    ffoff=$((ffoff + $(csv_get f2/runs.csv "$i" fast_forwarded_steps) +
      $(csv_get f2/runs.csv "$i" fast_forwarded_iterations)))
  done
  check "fast_forward = off skips none" "$([ "$ffoff" -eq 0 ]; echo $?)"
  check_ff_equal "fast-forward" f1 f2 32
fi
# Rings of fewer than all workers, many at once (hierarchical's group and
# masters' rings, nccl-rail's machine and rail rings) are simulated step by
# step: a machine's ring of 32 crosses leaves of the fat tree and its rails
# share the oversubscribed spines, so skipping the steps of the members
# ahead would leave their traffic out of the others' (a fast-forward of
# them tried in this tree was off by 4e-3 at group = 32). Groups of 4, 8
# and 32, with and without a codec: the same simulated times and link
# bytes as fast_forward = off, and no ring step skipped.
cat >ffg.ini <<'EOF'
[platform]
topology = fat-tree
nodes = 64
leaf = 8
oversubscription = 2
[model]
name = synthetic
params = 2097152
tensors = 2
compute = 0.0005
[exchange]
algorithm = hierarchical, nccl-rail
group = 4, 8, 32
codec = none, q8
payload = none
[training]
mode = sync, overlap
iterations = 2
EOF
if ff_runs "rings of groups" ffg.ini fg1 fg2 24; then
  skipped=$(points_where fg1 24 fast_forwarded_steps nonzero)
  check "rings of groups skip no step" "$(isempty "$skipped")" \
    "skipped in:$skipped"
  check_ff_equal "rings of groups" fg1 fg2 24
fi
# Bucket fast-forward: 40 identical tensors, a bucket each, are a run of
# 40 one-bucket periods; skipped once periodic, with little compute
# (every bucket posted) and with much (compute-bound overlap, each job
# waited for), on a star and an oversubscribed fat tree, a ring and
# Rabenseifner, sync and overlap: the same simulated times and bytes.
cat >ffb.ini <<'EOF'
[platform]
topology = star, fat-tree
nodes = 32
leaf = 8
oversubscription = 4
ideal = true
[model]
name = synthetic
params = 3200000
tensors = 40
compute = 0.0005, 0.5
[exchange]
algorithm = ring, rabenseifner
payload = none
[training]
mode = sync, overlap
iterations = 3
EOF
if ff_runs "bucket fast-forward" ffb.ini fb1 fb2 16; then
  off=$(points_where fb2 16 fast_forwarded_buckets nonzero)
  check_every "every point skipped buckets" fb1 16 fast_forwarded_buckets
  check_ff_equal "bucket fast-forward" fb1 fb2 16 \
    "${off:+ points$off skipped buckets with fast_forward = off;}"
fi
# Fast-forward by recurrence (sim/recur.c): ResNet-50's repeated tensors
# on 32 workers of an oversubscribed fat tree, the two lockstep ring
# collectives (NCCL's rings run NCCL's kernel, whose fast-forward
# test_sim's nccl tests hold to fast_forward = off), plain and q8, sync
# and overlap (a 100 us latency, so that backward has
# posted every bucket while the exchange still runs): every point skips
# buckets, and gives the simulated times and bytes of fast_forward = off.
# At SimGrid's default timing precision (1 ns) a skip changes which events
# fall within a nanosecond of another and are taken together
# (docs/fast-forward.md); at 1e-15 s the two runs agree.
cat >ffr.ini <<'EOF'
[platform]
topology = fat-tree
nodes = 32
leaf = 8
oversubscription = 2
ideal = true
latency = 100us
timing_precision = 1e-15
[model]
name = resnet50
[exchange]
algorithm = ring, inceptionn
codec = none, q8
payload = none
[training]
mode = sync, overlap
iterations = 2
EOF
if ff_runs "recurrence" ffr.ini fr1 fr2 8; then
  check_every "recurrence: every point skipped buckets" fr1 8 \
    fast_forwarded_buckets
  check_ff_equal "recurrence" fr1 fr2 8
fi
# With a sum that takes no time (reduce_rate = fused) and no codec, a
# ring's allgather steps are its reduce-scatter's less the sum, and the
# two legs are one sequence (collectives/common.c, rings_allreduce): the
# allgather goes on in the reduce-scatter's periodic regime, skipped
# without a transient of its own. The same points: still the simulated
# times and bytes of fast_forward = off, and every point without a codec
# skips more ring steps than at the default reduce_rate (q8's legs differ,
# and skip as many as before).
if ff_runs "one sequence of ring legs" ffr.ini frf1 frf2 8 \
  --set exchange.reduce_rate=fused; then
  fewer= same=
  for i in $(seq 1 8); do
    a=$(csv_get frf1/runs.csv "$i" fast_forwarded_steps)
    b=$(csv_get fr1/runs.csv "$i" fast_forwarded_steps)
    case $(csv_get frf1/runs.csv "$i" codec) in
    none) [ "$a" -gt "$b" ] || fewer+=" $((i - 1)) ($a vs $b)" ;;
    *) [ "$a" -eq "$b" ] || same+=" $((i - 1)) ($a vs $b)" ;;
    esac
  done
  check "fused, no codec: the allgather skipped with the reduce-scatter" \
    "$(isempty "$fewer")" "no more steps skipped in:$fewer"
  check "fused with q8: the legs fast-forwarded apart, as before" \
    "$(isempty "$same")" "different in:$same"
  check_ff_equal "one sequence of ring legs" frf1 frf2 8
fi
# A ring and its remainder (`ring`'s linear reduce into rank 0 of the
# values p does not divide): the members ahead send their remainder while
# the others still run the allgather's last steps, over links the two
# share, so those steps are simulated (ff_keep_tail). ResNet-18 on 24
# workers of a dragonfly was 1e-7 off without them.
cat >fft.ini <<'EOF'
[platform]
topology = dragonfly
nodes = 24
timing_precision = 1e-15
[model]
name = resnet18
[exchange]
algorithm = ring
payload = none
reduce_rate = 5GBps, fused
[training]
mode = sync, overlap
iterations = 2
EOF
if ff_runs "a ring and its remainder" fft.ini ft1 ft2 4; then
  check_every "a ring and its remainder: every point skipped ring steps" \
    ft1 4 fast_forwarded_steps
  check_ff_equal "a ring and its remainder" ft1 ft2 4
fi
# model_of FILE SIZE...: a model file whose tensors, in backward order,
# have these sizes, a layer each.
model_of() {
  local f=$1 k=0 n
  shift
  {
    echo "model $(basename "$f" .model)"
    echo "batch 32"
    for n in "$@"; do echo "layer l$k 1000000" && k=$((k + 1)); done
    for n in "$@"; do k=$((k - 1)) && echo "tensor l$k.w $n l$k $n"; done
  } >"$f"
}
# 4 workers of the recurrence points' fat tree and a dragonfly, `ring`
# without a codec, sync and overlap: a ring leg has too few steps to
# fast-forward, so no ring checkpoint.
small4=(--set platform.nodes=4 --set platform.leaf=2
  --set "platform.topology=fat-tree, dragonfly"
  --set exchange.algorithm=ring --set exchange.codec=none)
# A checkpoint at the end of `ring`'s linear reduce (recur.c,
# recur_gather): buckets smaller than the workers are all that reduce (and
# a broadcast), as ResNet's normalization tensors are at scale. A model of
# four identical blocks (two 2-value tensors before each of two rings,
# one with a remainder): the blocks after the first are skipped from the
# checkpoint in a small bucket, with the simulated times and bytes of
# fast_forward = off.
model_of blocks.model 3 4000 \
  $(for b in 1 2 3 4; do echo 2 2 8000 2 2 4002; done) 1000
if ff_runs "checkpoints in small buckets" ffr.ini fs1 fs2 4 \
  --set "model.name=$W/blocks.model" "${small4[@]}"; then
  check_every "small buckets: every point skipped buckets" fs1 4 \
    fast_forwarded_buckets
  steps=$(points_where fs1 4 fast_forwarded_steps nonzero)
  check "small buckets: no ring step skipped (no ring checkpoint)" \
    "$(isempty "$steps")" "skipped in:$steps"
  check_ff_equal "checkpoints in small buckets" fs1 fs2 4
fi
# A skip goes on from bucket to bucket by the state at a sealed bucket's
# end (recur.c, chain_from): a small bucket's broadcast ends on every
# worker at once, whatever its size, so the ring after it repeats the
# ring of its size after another small bucket. Four blocks whose small
# tensors differ in size (2, 3, 1 and 2 values) before the same
# 8000-value ring: the checkpoints in small buckets alone skip 4 of the
# 30 buckets (no ring follows an earlier pair of the same sizes but
# one), with the states of bucket ends 10.
model_of chain.model 3 4000 2 2 8000 3 3 8000 1 1 8000 2 2 8000 1000
if ff_runs "skips that go on by bucket ends" ffr.ini fc1 fc2 4 \
  --set "model.name=$W/chain.model" "${small4[@]}"; then
  few=
  for i in 1 2 3 4; do
    k=$(csv_get fc1/runs.csv "$i" fast_forwarded_buckets)
    [ "$k" -ge 10 ] || few+=" $((i - 1)) ($k)"
  done
  check "bucket ends: the rings after small buckets of other sizes skipped" \
    "$(isempty "$few")" "fewer than 10 buckets skipped in:$few"
  check_ff_equal "skips that go on by bucket ends" fc1 fc2 4
fi
# With a straggler the others' next bucket would share its links: no skip.
if run_ok "bucket fast-forward with a straggler" run ffb.ini \
    --set platform.topology=star --set model.compute=0.0005 \
    --set exchange.algorithm=ring --set training.mode=overlap \
    --set training.stragglers=3:1.5 --out fb3 --quiet; then
  check "a straggler turns bucket fast-forward off" \
    "$([ "$(csv_get fb3/runs.csv 1 fast_forwarded_buckets)" = 0 ]; echo $?)"
fi

# A platform file: its generated twin, written by gradsim platform.
if run_ok "platform of a fat tree" platform ffw.ini \
    --set platform.topology=fat-tree --set platform.ideal=true \
    --set exchange.algorithm=ring --set training.mode=sync --out ft.xml &&
  run_ok "fast-forward on a platform file" run ffw.ini \
    --set "platform.topology=file:$W/ft.xml" --set platform.ideal=true \
    --set exchange.algorithm=ring --set training.mode=sync --out f3 --quiet &&
  run_ok "the generated fat tree, every step" run ffw.ini \
    --set platform.topology=fat-tree --set platform.ideal=true \
    --set exchange.algorithm=ring --set training.mode=sync \
    --set exchange.fast_forward=off --out f4 --quiet; then
  a=$(csv_get f3/runs.csv 1 exchange_s)
  b=$(csv_get f4/runs.csv 1 exchange_s)
  check "a platform file simulates as its generated point, fast-forwarded ($a vs $b)" \
    "$(rel_le "$a" "$b" 1e-9; echo $?)"
  check "a platform file is fast-forwarded" \
    "$([ "$(csv_get f3/runs.csv 1 fast_forwarded_steps)" -gt 0 ]; echo $?)"
fi

# ---- host order: [platform] hosts, the natural order of a file's names ------
# A 16-host fat tree as a file; ring neighbours on the same leaf (h0..h15
# in numeric order) and scattered over the leaves: the order is what the
# ring's time depends on.
if run_ok "platform of a 16-host fat tree" platform small.ini \
    --set platform.topology=fat-tree --set platform.nodes=16 \
    --set platform.leaf=4 --set platform.oversubscription=4 --out ft16.xml; then
  for i in $(seq 0 15); do echo "h$i"; done >numeric.hosts
  sort numeric.hosts >lexical.hosts
  printf '# comment and blank line\n\n' >mixed.hosts
  for i in $(seq 0 15); do echo "h$(((i % 4) * 4 + i / 4))"; done >>mixed.hosts
  for o in default numeric lexical mixed; do
    set -- --set "platform.topology=file:$W/ft16.xml" --set platform.nodes=16
    [ "$o" = default ] || set -- "$@" --set "platform.hosts=$W/$o.hosts"
    run_ok "a ring on the file, $o order" run small.ini "$@" --out ho-$o --quiet
  done
  d=$(csv_get ho-default/runs.csv 1 exchange_s)
  n=$(csv_get ho-numeric/runs.csv 1 exchange_s)
  x=$(csv_get ho-lexical/runs.csv 1 exchange_s)
  m=$(csv_get ho-mixed/runs.csv 1 exchange_s)
  check "a file's hosts in natural order by default (h2 before h10): $d = $n" \
    "$([ "$d" = "$n" ]; echo $?)"
  check "a hostfile changes the order: lexical $x, mixed $m, numeric $n" \
    "$([ "$x" != "$n" ] && [ "$m" != "$n" ]; echo $?)"
  check "the hostfile's digest is among a point's inputs" \
    "$(grep -q '^hosts_file = ' ho-mixed/config.txt; echo $?)"
fi
printf 'h0\nh1\nh2\nh9999\n' >unknown.hosts
printf 'h0\nh1\nh0\nh3\n' >dup.hosts
printf 'h0\nh1\n' >few.hosts
printf 'h0:4\nh1\nh2\nh3\n' >slots.hosts
# ---- plot and trace --------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
  { echo '# Does Rabenseifner beat the ring as the cluster'
    echo '# grows? Four and eight workers.'
    cat small.ini; } >question.ini
  if run_ok "--plot" run question.ini --set platform.nodes=2,4,8 \
    --set exchange.algorithm=ring,rabenseifner --out p1 --plot --quiet; then
    check "--plot writes plot.png and plot.svg" \
      "$([ -s p1/plot.png ] && [ -s p1/plot.svg ]; echo $?)"
    check "plot.dat has one block per algorithm" \
      "$([ "$(grep -c '^# series' p1/plot.dat)" = 2 ]; echo $?)"
    miss=
    for f in breakdown.png breakdown.svg breakdown.dat breakdown.gp; do
      [ -s "p1/$f" ] || miss+=" $f"
    done
    check "--plot writes the breakdown beside the plot" "$(isempty "$miss")" \
      "missing:$miss"
    check "breakdown.dat: a bar per point, a block per algorithm" \
      "$([ "$(grep -c '^[0-9]' p1/breakdown.dat)" = 6 ] &&
        [ "$(grep -c '^# series' p1/breakdown.dat)" = 2 ]; echo $?)"
    # Its bars are runs.csv's split: parts adding up to iteration_s.
    bad=$(awk '/^[0-9]/ { s = $3 + $4 + $5 + $6 + $7
        d = s - $8; if (d < 0) d = -d; if (!($8 > 0) || d > 1e-8 * $8) print }' \
      p1/breakdown.dat)
    check "breakdown.dat: each bar's parts add up to its iteration" \
      "$(isempty "$bad")" "$bad"
    for g in plot breakdown; do
      bad=
      grep -q 'Does Rabenseifner beat the ring as the cluster grows?' p1/$g.gp ||
        bad+=" no question;"
      grep -q 'question.ini' p1/$g.gp && bad+=" the file path;"
      grep -q 'set xlabel "workers"' p1/$g.gp || bad+=" x not in words;"
      grep -q 'algorithm=\|platform\.nodes' p1/$g.gp && bad+=" key names;"
      grep -q 'title "ring"\|"ring" at first' p1/$g.gp || bad+=" no legend in words;"
      check "$g.gp: the question under the title, axes and legend in words" \
        "$(isempty "$bad")" "$bad"
    done
    check "plot.gp: log x for workers 2, 4, 8; the legend outside the data" \
      "$(grep -q '^set logscale x 2' p1/plot.gp &&
        grep -q '^set key outside' p1/plot.gp; echo $?)"
    # What the user pays: each series' iteration (plot.dat's 4th column),
    # the exchange beside it, the formulas named by their collectives.
    check "plot.gp: each series' iteration and exchange, the formulas' collectives named" \
      "$([ "$(grep -c 'using 1:(\$4\*' p1/plot.gp)" = 4 ] &&
        [ "$(grep -c 'using 1:(\$3\*' p1/plot.gp)" = 4 ] &&
        grep -q 'analytic formula, no codec (ring, rabenseifner)' p1/plot.gp; echo $?)"
    # Exchange times at 1 to 100 Gb/s span more than a decade: log y.
    if run_ok "--plot of a wide sweep" run small.ini --out p2 --plot --quiet \
      --set platform.bandwidth=1Gbps,10Gbps,100Gbps \
      --set exchange.codec=none,fp16 --set exchange.payload=sampled \
      --set training.iterations=1; then
      check "plot.gp: log axes where times span decades, units and codecs in words" \
        "$(grep -q '^set logscale y' p2/plot.gp &&
          grep -q '^set logscale x 10' p2/plot.gp &&
          grep -q 'set xlabel "link bandwidth (Gb/s)"' p2/plot.gp &&
          grep -q 'title "no codec"' p2/plot.gp &&
          grep -q 'title "fp16 codec"' p2/plot.gp; echo $?)"
    fi
  fi
else
  echo "note - gnuplot missing: --plot not checked"
fi
if run_ok "--trace" run small.ini --out t1 --trace --quiet; then
  check "--trace writes a Paje trace" \
    "$(ls t1/points/*.paje >/dev/null 2>&1 && grep -q PajeDefineContainerType t1/points/*.paje; echo $?)"
fi

# The formulas time an exchange alone: runs.csv compares them only in
# mode sync, where the exchange runs alone.
if run_ok "a ring overlapped with backward" run small.ini --out ov --quiet \
  --set training.mode=sync,overlap; then
  check "formula_exchange_s and formula_rel_err only where the exchange runs alone" \
    "$([ -n "$(csv_get ov/runs.csv 1 formula_rel_err)" ] &&
      [ -z "$(csv_get ov/runs.csv 2 formula_exchange_s)" ] &&
      [ -z "$(csv_get ov/runs.csv 2 formula_rel_err)" ]; echo $?)" \
    "$(cut -d, -f1,12,26,27 ov/runs.csv)"
fi

# ---- the shipped experiments load --------------------------------------------
for e in "$SRC"/experiments/*.ini; do
  run run "$e" --set training.iterations=0 --out never
  check "$(basename "$e") parses (only the iterations override is refused)" \
    "$([ $RC = 2 ] && grep -q 'iterations' "$L/err"; echo $?)" "$(err_head)"
done

# ---- the NIC engine: placement = nic ------------------------------------
# INCEPTIONN on the NIC keeps the packet count of the uncompressed ring
# and spends no host time on the codec; on the CPU it sends fewer packets
# and pays the codec; the engine's busy fraction and stalls are reported.
if run_ok "placement sweep with packets runs" run small.ini --out nic \
  --set exchange.algorithm=inceptionn --set exchange.payload=full \
  --set 'exchange.codec=none,inceptionn:eb=-10' \
  --set exchange.placement=cpu,nic --set nic.framing=packets; then
  pk_none=$(csv_get nic/runs.csv 1 packets)
  pk_cpu=$(csv_get nic/runs.csv 3 packets)
  pk_nic=$(csv_get nic/runs.csv 4 packets)
  check "nic keeps the packet count ($pk_nic vs $pk_none)" \
    "$([ "$pk_nic" = "$pk_none" ]; echo $?)"
  check "cpu placement sends fewer packets ($pk_cpu)" \
    "$(awk -v a="$pk_cpu" -v b="$pk_none" 'BEGIN { exit !(a < b / 4) }'; echo $?)"
  check "nic placement: no host codec time, engine busy, oracle passes" \
    "$(awk -F, 'NR == 5 { exit !($21 == 0 && $34 > 0 && $34 <= 1 && $35 > 0 && $28 == "pass") }' nic/runs.csv; echo $?)"
  check "cpu placement: host codec time, engine idle" \
    "$(awk -F, 'NR == 4 { exit !($21 > 0 && $33 == 0) }' nic/runs.csv; echo $?)"
  # The shipped what-if experiment and its table script.
  if run_ok "nic-ratio experiment runs" run "$SRC/experiments/nic-ratio.ini" \
    --out ratio --set model.name=synthetic --set model.params=200000 \
    --set training.iterations=1; then
    awk -f "$SRC/plots/nic_table.awk" ratio/config.txt ratio/runs.csv >table
    check "nic table: one line per point, ratios above 1 for the codecs" \
      "$(awk 'NR > 1 { n++; if ($6 != "none" && !($7 > 1)) bad = 1 } END { exit !(n == 24 && !bad) }' table; echo $?)"
  fi
fi

# ---- bad input: status 2, one line, nothing written -----------------------
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
cp small.ini e.ini
printf '[bogus]\nx = 1\n' >>e.ini
bad "unknown section" "valid: platform" run e.ini --out never
bad "hostfile naming an unknown host" "no host 'h9999'" run small.ini \
  --set "platform.hosts=$W/unknown.hosts" --out never
bad "hostfile listing a host twice" "listed twice" run small.ini \
  --set "platform.hosts=$W/dup.hosts" --out never
bad "hostfile with too few hosts" "need 4" run small.ini \
  --set "platform.hosts=$W/few.hosts" --out never
bad "hostfile with SMPI slots" "not a host name" run small.ini \
  --set "platform.hosts=$W/slots.hosts" --out never
bad "missing hostfile" "no such file" run small.ini \
  --set platform.hosts=nope.hosts --out never
bad "torus dimensions" "4x4" run small.ini --set platform.topology=torus \
  --set platform.torus_dims=4x0 --out never
bad "eager threshold" "must be 0 or a size with its unit" run small.ini \
  --set exchange.eager_bytes=-1 --out never
bad "warm-up with decaying gradients" "decay = 1" run small.ini \
  --set exchange.warmup_steps=10 --set gradients.decay=0.9 --out never
bad "negative warm-up" "warmup_steps" run small.ini \
  --set exchange.warmup_steps=-1 --out never
bad "persistent gradients of correlation 1" "persist = 1: must be" run small.ini \
  --set gradients.persist=1 --out never
# The keys of NCCL's kernels, NVLink SHARP, per-bucket compression and
# GPU codec costs.
printf 'nonsense here\n' >badcosts.conf
bad "a cost table with a bad line, in a sweep" "badcosts.conf:1: " \
  run small.ini --set exchange.costs=badcosts.conf --set exchange.codec=q8 \
  --set exchange.placement=gpu --set platform.nodes=4,8 --out never
bad "NCCL algorithm" "nccl_algo" run small.ini --set exchange.nccl_algo=rings \
  --out never
bad "NCCL protocol" "nccl_proto" run small.ini --set exchange.nccl_proto=LL64 \
  --out never
bad "NCCL version" "2.30" run small.ini --set exchange.nccl_version=2.19 \
  --out never
bad "NCCL tuner plugin" "aws-p5" run small.ini --set exchange.nccl_tuner=aws \
  --out never
bad "NCCL launch" "nccl_launch" run small.ini --set exchange.nccl_launch=-2us \
  --out never
bad "NCCL step" "nccl_step" run small.ini --set exchange.nccl_step=fast \
  --out never
bad "NCCL network latency" "nccl_net_latency" run small.ini \
  --set exchange.nccl_net_latency=-75us --out never
bad "NCCL network latency unit" "nccl_net_latency" run small.ini \
  --set exchange.nccl_net_latency=75 --out never
bad "NVLS tree's chunk" "nccl_nvlstree_max_chunk" run small.ini \
  --set exchange.nccl_nvlstree_max_chunk=3000B --out never
bad "NVLS tree's chunk too large" "nccl_nvlstree_max_chunk" run small.ini \
  --set exchange.nccl_nvlstree_max_chunk=8MiB --out never
# NCCL_NVLSTREE_MAX_CHUNKSIZE (2.20): over four DGX H100 machines it
# lifts NVLS's tree's chunk from 64 KiB to 512 KiB (the call's time
# changes); over two, where 512 KiB is NCCL's own chunk, nothing does.
cat >nvlstree.ini <<'EOF'
[platform]
preset = dgx-h100
nodes = 32, 16
[model]
name = synthetic
params = 67108864
tensors = 1
compute = 0.000001
[exchange]
algorithm = nccl
nccl_algo = nvls-tree
nccl_version = 2.20
nccl_nvlstree_max_chunk = auto, 512KiB
payload = none
[training]
iterations = 1
EOF
if run_ok "NVLS tree's chunk, auto and 512KiB" run nvlstree.ini \
  --out nvlstree --quiet; then
  t=$(awk -F, 'NR > 1 { printf "%s ", $9 }' nvlstree/nccl.csv)
  echo "$t" | awk '{ exit !($1 != $2 && $3 == $4) }'
  check "NVLS tree's chunk: 512KiB changes four machines' call, not two's" \
    $? "time_us: $t"
fi
bad "LL bandwidth" "nccl_ll_bw" run small.ini --set exchange.nccl_ll_bw=0GBps \
  --out never
bad "LL128 bandwidth" "nccl_ll128_bw" run small.ini \
  --set exchange.nccl_ll128_bw=1e20Bps --out never
bad "NVLS efficiency" "nvls_efficiency" run small.ini \
  --set exchange.nvls_efficiency=1.5 --out never
bad "nvls" "nvls" run small.ini --set platform.nvls=maybe --out never
bad "sharp" "sharp" run small.ini --set platform.sharp=2 --out never
bad "sharp = true off nvswitch" "applies to the nvswitch" run small.ini \
  --set platform.sharp=true --out never
bad "compression" "per-bucket" run small.ini \
  --set exchange.compression=per-tensor --out never
bad "implementation" "implementation" run small.ini \
  --set exchange.implementation=cuda --out never

# [model] compute_scale multiplies a model's forward and backward times and
# [training] step_overhead adds a fixed time to every iteration (the
# handles a calibration fits): AlexNet's sync iteration grows by exactly
# the time added, the exchange stays. compute_s holds the update too
# (20 bytes per parameter at the P100's 732 GB/s), which does not scale.
if run_ok "compute_scale and step_overhead sweep runs" run small.ini \
  --set model.name=alexnet --set model.compute_scale=1,2 \
  --set training.step_overhead=0,0.25 --out cal --quiet; then
  c1=$(csv_get cal/runs.csv 1 compute_s) c2=$(csv_get cal/runs.csv 3 compute_s)
  u=$(awk 'BEGIN { printf "%.17g", 20 * 60967976 / 732e9 }')
  rel_le "$c2" "$(awk -v c="$c1" -v u="$u" 'BEGIN { printf "%.17g", 2 * c - u }')" 1e-9
  check "compute_scale = 2 doubles forward and backward" $? "compute_s $c1 and $c2"
  i1=$(csv_get cal/runs.csv 1 iteration_s) i2=$(csv_get cal/runs.csv 2 iteration_s)
  rel_le "$i2" "$(awk -v i="$i1" 'BEGIN { printf "%.17g", i + 0.25 }')" 1e-9
  check "step_overhead = 0.25 adds 0.25 s to the iteration" $? "iteration_s $i1 and $i2"
  e1=$(csv_get cal/runs.csv 1 exchange_s) e4=$(csv_get cal/runs.csv 4 exchange_s)
  rel_le "$e1" "$e4" 1e-9
  check "compute_scale and step_overhead leave the exchange" $? "exchange_s $e1 and $e4"
fi
bad "compute_scale of zero" "(0, 1000]" run small.ini \
  --set model.compute_scale=0 --out never

# [model] update_rate replaces the device's memory bandwidth in the update
# (20 bytes per parameter): at 1 GB/s AlexNet's 60967976 parameters take
# 1.218 s more than at the P100's 732 GB/s, in compute_s (to SimGrid's
# 1e-9 s timing precision).
if run_ok "update_rate sweep runs" run small.ini --set model.name=alexnet \
  --set model.update_rate=device,1GBps --out upd --quiet; then
  c1=$(csv_get upd/runs.csv 1 compute_s) c2=$(csv_get upd/runs.csv 2 compute_s)
  d=$(awk 'BEGIN { printf "%.17g", 20 * 60967976 / 1e9 - 20 * 60967976 / 732e9 }')
  rel_le "$c2" "$(awk -v c="$c1" -v d="$d" 'BEGIN { printf "%.17g", c + d }')" 1e-6
  check "update_rate = 1GBps times the update at 20 bytes a parameter" $? \
    "compute_s $c1 and $c2"
fi
bad "update rate" "must be device or a rate with its unit" run small.ini \
  --set model.update_rate=fast --out never

# Memory per GPU (models/memory.h) and the optimizer: Llama-3-8B
# replicated on an 80 GB H100 does not fit, with momentum or Adam, with
# activation checkpointing or without; each point says so on stderr with
# its figures; Adam's update streams 8 bytes a parameter more than
# momentum's at the H100's 3.35 TB/s; checkpointing recomputes forward.
# GPT-2 fits.
if run_ok "memory sweep runs" run small.ini --set model.name=llama-3-8b \
  --set model.device=H100 --set model.precision=bf16 \
  --set training.optimizer=momentum,adam \
  --set training.activation_checkpointing=false,true \
  --set training.fusion_bytes=25MB --set training.iterations=1 --out mem \
  --quiet; then
  f=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "fits") k = i; next }
               { printf "%s ", $k }' mem/runs.csv)
  [ "$f" = "no no no no " ]
  check "Llama-3-8B replicated does not fit an 80 GB H100" $? "fits: $f"
  [ "$(grep -c "does not fit the H100's 80 GB" "$L/err")" -eq 4 ]
  check "each point that does not fit says so" $? "$(err_head)"
  grep -q "point 2: does not fit the H100's 80 GB: it needs 420.5 GB a GPU (parameters 16.06, gradients 16.06, optimizer states 96.36, activations 292.1" "$L/err"
  check "the note names the figures" $? "$(err_head)"
  c1=$(csv_get mem/runs.csv 1 compute_s) c3=$(csv_get mem/runs.csv 3 compute_s)
  rel_le "$c3" "$(awk -v c="$c1" 'BEGIN { printf "%.17g", c + 8 * 8030261248 / 3.35e12 }')" 1e-9
  check "Adam streams 8 bytes a parameter more than momentum" $? "compute_s $c1 and $c3"
  c2=$(csv_get mem/runs.csv 2 compute_s)
  f1=$("$G" model list --device H100 --precision bf16 --format csv |
       awk -F, '$1 == "llama-3-8b" { print $7 }')
  rel_le "$c2" "$(awk -v c="$c1" -v f="$f1" 'BEGIN { printf "%.17g", c + f }')" 1e-6
  check "checkpointing adds a forward to backward" $? "compute_s $c1 and $c2, forward $f1"
  a1=$(csv_get mem/runs.csv 1 memory_activations_bytes)
  a2=$(csv_get mem/runs.csv 2 memory_activations_bytes)
  [ "$a1" = "2.92057776e+11" ] && [ "$a2" = "2.63066747e+10" ]
  check "activations: 34 s b h a block, 2 s b h with checkpointing" $? "$a1 $a2"
fi
if run_ok "gpt2 memory runs" run small.ini --set model.name=gpt2 \
  --set model.device=H100,V100 --set training.iterations=1 \
  --out mem2 --quiet; then
  [ "$(csv_get mem2/runs.csv 1 fits)" = yes ] && [ "$(csv_get mem2/runs.csv 2 fits)" = - ] &&
    [ -z "$(csv_get mem2/runs.csv 2 capacity_bytes)" ] && ! [ -s "$L/err" ]
  check "GPT-2 fits an H100; a device without a capacity is not judged" $? \
    "$(cut -d, -f55- mem2/runs.csv)" "$(err_head)"
fi
# CollNet's chain (sharp = true): each machine's chain reduced up and
# broadcast down, the machines' sums added by each rail's SHARP
# switches. Every value checked by the oracle on two DGX H100 machines,
# in sync and overlap, plain and with bf16 once per bucket; the same
# result with fast-forward off; the switches' hosts in the platform; and
# what it cannot run refused.
cat >collnet.ini <<'EOF'
[platform]
preset = dgx-h100
nodes = 16
sharp = true
[model]
name = synthetic
params = 3000001
tensors = 3
compute = 0.0002
[exchange]
algorithm = nccl
nccl_algo = collnet-chain
payload = full
[training]
iterations = 2
fusion_bytes = 4MB
mode = sync, overlap
EOF
# A codec that does not sum (top-k) is allgathered: nccl_algo forces the
# allreduce's algorithm alone, the allgather stays on NCCL's ring (it
# stopped gradsim with an assertion before). On a tenth of the values:
# each of the 16 workers checks all 16 payloads of every value (64 s at
# 3M values).
if run_ok "collnet-chain runs" run collnet.ini --out collnet --quiet &&
  run_ok "collnet-chain with bf16 per bucket runs" run collnet.ini \
    --set exchange.codec=bf16 --set exchange.compression=per-bucket \
    --out collnet-bf16 --quiet &&
  run_ok "collnet-chain with top-k per bucket runs" run collnet.ini \
    --set exchange.codec=topk --set exchange.compression=per-bucket \
    --set training.mode=sync --set model.params=300001 --out collnet-topk \
    --quiet; then
  o=$(for d in collnet collnet-bf16 collnet-topk; do
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "oracle") k = i; next }
             { printf "%s ", $k }' "$d/runs.csv"; done)
  [ "$o" = "pass pass pass pass pass " ]
  check "collnet-chain passes the oracle" $? "oracle: $o"
  t1=$(csv_get collnet/runs.csv 1 exchange_s)
  t0=$(csv_get collnet/runs.csv 1 compute_s)
  awk -v t="$t1" 'BEGIN { exit !(t > 0) }'
  check "collnet-chain exchanges take time" $? "exchange_s $t1, compute_s $t0"
  # nccl.csv: what ran each call. Every allreduce on the forced chain;
  # top-k's gathers on NCCL's ring; worker 0's calls carry every value
  # once an iteration (2 x 3,000,001 fp32 values in each point).
  a=$(awk -F, 'NR > 1 && $2 == "allreduce" { print $4 }' collnet/nccl.csv |
    sort -u)
  check "nccl.csv: every allreduce on collnet-chain" \
    "$([ "$a" = collnet-chain ]; echo $?)" "$a"
  g=$(awk -F, 'NR > 1 && $2 == "allgather" { print $4 }' \
    collnet-topk/nccl.csv | sort -u)
  check "nccl.csv: top-k's allgathers on NCCL's ring" \
    "$([ "$g" = ring ]; echo $?)" "$g"
  b=$(awk -F, 'NR > 1 { s[$1] += $3 * $7 } END { print s[0], s[1] }' \
    collnet/nccl.csv)
  check "nccl.csv: worker 0's calls carry every value once an iteration" \
    "$([ "$b" = "24000008 24000008" ]; echo $?)" "$b"
fi
# One bucket of 256 MiB, long enough to jump.
if run_ok "collnet-chain without data, fast-forward on and off" run \
  collnet.ini --set exchange.payload=none --set training.mode=overlap \
  --set model.params=67108864 --set model.tensors=1 \
  --set training.fusion_bytes=512MB --set training.iterations=1 \
  --set exchange.fast_forward=auto,off --out collnet-ff --quiet; then
  a=$(csv_get collnet-ff/runs.csv 1 iteration_s)
  b=$(csv_get collnet-ff/runs.csv 2 iteration_s)
  rel_le "$a" "$b" 1e-6
  check "collnet-chain: fast-forward on and off agree" $? "$a against $b"
  s=$(csv_get collnet-ff/runs.csv 1 fast_forwarded_steps)
  check "collnet-chain fast-forwards" "$([ "$s" -gt 0 ]; echo $?)" "$s steps"
  # Every credit a jump skips counts on its route as it would have run.
  cmp -s <(awk -F, '$1 == 0 { print $2, $3 }' collnet-ff/links.csv) \
    <(awk -F, '$1 == 1 { print $2, $3 }' collnet-ff/links.csv)
  check "collnet-chain: fast-forward on and off put the same bytes on every link" $?
  a=$(awk -F, 'NR == 2 { print $9 }' collnet-ff/nccl.csv)
  b=$(awk -F, 'NR == 3 { print $9 }' collnet-ff/nccl.csv)
  rel_le "$a" "$b" 1e-6
  check "nccl.csv: the call's time with fast-forward on and off" $? \
    "$a against $b"
fi
if run_ok "platform with sharp" platform collnet.ini --set training.mode=sync \
  --out collnet.xml; then
  n=$(grep -c 'host id="r[0-9]*-sharp"' collnet.xml)
  [ "$n" = 8 ]
  check "a SHARP host per rail (8)" $? "$n hosts"
fi
bad "collnet-chain without sharp" "collnet-chain needs" run collnet.ini \
  --set platform.sharp=false --out never
bad "collnet-direct" "collnet-direct are not simulated" run collnet.ini \
  --set exchange.nccl_algo=collnet-direct --out never
bad "collnet-chain with a codec per hop" "no codec runs" run collnet.ini \
  --set exchange.codec=q8 --out never

# Sharded data parallel (ZeRO stages 1 and 2): each bucket's gradients
# reduce-scattered, each worker's shard updated, the weights allgathered.
# The ring's two halves move the allreduce's bytes, every value checked
# by the oracle (payload = full) on a flat network with a remainder p does
# not divide, on a 2:1 oversubscribed fat tree and on DGX H100 machines;
# the update is a p-th, the memory ZeRO's.
cat >zero.ini <<'EOF'
[platform]
nodes = 4
bandwidth = 10Gbps
latency = 5us
[model]
name = synthetic
params = 480001
tensors = 3
compute = 0.002
update = 0.004
[exchange]
algorithm = ring, inceptionn
payload = full
[training]
iterations = 2
sharding = none, zero1, zero2, zero3
EOF
for plat in flat fat-tree dgx; do
  extra=()
  [ "$plat" = dgx ] && extra=(--set platform.preset=dgx-h100 --set platform.nodes=16)
  [ "$plat" = fat-tree ] && extra=(--set platform.topology=fat-tree \
    --set platform.leaf=2 --set platform.oversubscription=2)
  if run_ok "sharded runs ($plat)" run zero.ini "${extra[@]}" --out "zero-$plat" --quiet; then
    o=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "oracle") k = i; next }
                 { printf "%s ", $k }' "zero-$plat/runs.csv")
    [ "$o" = "pass pass pass pass pass pass pass pass " ]
    check "sharded exchanges pass the oracle ($plat)" $? "oracle: $o"
    ok=0
    p=$( [ "$plat" = dgx ] && echo 16 || echo 4)
    for r in 1 5; do
      for z in 1 2 3; do
        c0=$(csv_get "zero-$plat/runs.csv" "$r" compute_s)
        cz=$(csv_get "zero-$plat/runs.csv" $((r + z)) compute_s)
        rel_le "$cz" "$(awk -v c="$c0" -v p="$p" 'BEGIN { printf "%.17g", c - 0.004 + 0.004 / p }')" 1e-9 || ok=1
        [ "$z" = 3 ] && continue
        [ "$(csv_get "zero-$plat/runs.csv" "$r" wire_bytes)" = \
          "$(csv_get "zero-$plat/runs.csv" $((r + z)) wire_bytes)" ] || ok=1
      done
    done
    # zero3 gathers the weights twice: the balanced ring's bytes x 1.5.
    b5=$(csv_get "zero-$plat/runs.csv" 5 wire_bytes) b8=$(csv_get "zero-$plat/runs.csv" 8 wire_bytes)
    rel_le "$b8" "$(awk -v b="$b5" 'BEGIN { printf "%.17g", 1.5 * b }')" 1e-8 || ok=1
    check "sharded: the allreduce's bytes (zero3 1.5 times), a p-th of the update ($plat)" $ok \
      "$(cut -d, -f1,9,20,25 "zero-$plat/runs.csv")"
    [ "$(csv_get "zero-$plat/runs.csv" 2 formula_exchange_s)" = "" ] &&
      [ "$(csv_get "zero-$plat/runs.csv" 3 sharding)" = zero2 ]
    check "sharded: no formula, the sharding column ($plat)" $?
  fi
done
# ZeRO's memory on a real model: stage 1 divides the optimizer states,
# stage 2 the gradients too (mixed precision, Adam: 2 + 2 + 12 bytes).
if run_ok "sharded memory" run small.ini --set model.name=resnet18 \
  --set model.device=H100 --set model.precision=bf16 \
  --set training.optimizer=adam --set training.sharding=none,zero1,zero2 \
  --set training.iterations=1 --out zmem --quiet; then
  ok=0
  for r in 1 2 3; do
    g=$(csv_get zmem/runs.csv $r memory_grads_bytes)
    s=$(csv_get zmem/runs.csv $r memory_optimizer_bytes)
    case $r in
      1) [ "$g" = 23379024 ] && [ "$s" = 140274144 ] || ok=1 ;;
      2) [ "$g" = 23379024 ] && [ "$s" = 35068536 ] || ok=1 ;;
      3) [ "$g" = 5844756 ] && [ "$s" = 35068536 ] || ok=1 ;;
    esac
  done
  check "ZeRO stages 1 and 2 divide states, then gradients, by the workers" $ok \
    "$(cut -d, -f51-60 zmem/runs.csv)"
fi
# In overlap the reduce-scatter overlaps backward and the allgather, after
# the shard's update, is waited for: more exposed communication than
# DDP's allreduce, the same bytes, the oracle passing; the split adds up.
if run_ok "sharded overlap runs" run zero.ini --set model.name=resnet18 \
  --set training.mode=overlap --set training.fusion_bytes=4MB \
  --set exchange.algorithm=ring --set training.sharding=none,zero1,zero2 \
  --out zov --quiet; then
  ok=0
  for r in 1 2 3; do
    [ "$(csv_get zov/runs.csv $r oracle)" = pass ] || ok=1
    [ "$(csv_get zov/runs.csv $r wire_bytes)" = "$(csv_get zov/runs.csv 1 wire_bytes)" ] || ok=1
    parts=$(awk -F, -v r=$r 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      NR == r + 1 { printf "%.17g", $c["split_compute_s"] + $c["exposed_comm_s"] + $c["exposed_codec_s"] + $c["exposed_reduce_s"] + $c["split_idle_s"] }' zov/runs.csv)
    rel_le "$parts" "$(csv_get zov/runs.csv $r iteration_s)" 1e-6 || ok=1
  done
  e1=$(csv_get zov/runs.csv 1 exposed_comm_s) e3=$(csv_get zov/runs.csv 3 exposed_comm_s)
  awk -v a="$e1" -v b="$e3" 'BEGIN { exit !(b > 2 * a) }' || ok=1
  check "sharded overlap: the allgather exposed, the bytes and the oracle kept" $ok \
    "$(cut -d, -f1,20,25,28,41-45 zov/runs.csv)"
fi
# Fully sharded, a transformer's units are its blocks: Llama-3-8B with
# Adam and checkpointing fits an 80 GB H100 over 16 GPUs, and its
# exchange moves 1.5 times DDP's bytes.
if run_ok "zero3 Llama-3-8B runs" run small.ini --set model.name=llama-3-8b \
  --set model.device=H100 --set model.precision=bf16 --set model.batch=1 \
  --set platform.preset=dgx-h100 --set platform.nodes=16 \
  --set exchange.algorithm=inceptionn --set training.optimizer=adam \
  --set training.activation_checkpointing=true \
  --set training.sharding=none,zero3 --set training.iterations=1 --out z3 --quiet; then
  b1=$(csv_get z3/runs.csv 1 wire_bytes) b2=$(csv_get z3/runs.csv 2 wire_bytes)
  rel_le "$b2" "$(awk -v b="$b1" 'BEGIN { printf "%.17g", 1.5 * b }')" 1e-8 &&
    [ "$(csv_get z3/runs.csv 1 fits)" = no ] && [ "$(csv_get z3/runs.csv 2 fits)" = yes ]
  check "zero3: Llama-3-8B fits over 16 H100s, 1.5 times the bytes" $? \
    "bytes $b1 $b2, fits $(csv_get z3/runs.csv 1 fits) $(csv_get z3/runs.csv 2 fits)"
fi
# Sharded exchanges fast-forward their ring steps (not runs of buckets:
# a bucket's halves are apart), with the results of every step simulated.
cat >zff.ini <<'EOF'
[platform]
preset = dgx-h100
nodes = 16
[model]
name = llama-2-7b
device = H100
precision = bf16
batch = 1
[exchange]
algorithm = ring
payload = none
[training]
iterations = 2
fusion_bytes = 25MB
sharding = zero1, zero2, zero3
EOF
if ff_runs "sharded" zff.ini zf1 zf2 3; then
  check_ff_equal "sharded fast-forward" zf1 zf2 3
  check_every "sharded fast-forward skipped ring steps" zf1 3 fast_forwarded_steps
fi
if ff_runs "sharded overlap" zff.ini zf3 zf4 1 --set training.sharding=zero2 \
  --set training.mode=overlap; then
  check_ff_equal "sharded overlap fast-forward" zf3 zf4 1
fi
# HSDP: fully sharded inside each DGX H100 (8 GPUs), replicated across
# the two machines: the oracle passes on every worker's shard, the update
# and the model states are an 8th, and the machines exchange only the
# shards' allreduce (fewer bytes than zero3's gathers over all 16).
# One GPU's model states in DIR's row R: weights, gradients, optimizer.
states() {
  awk -v p="$(csv_get "$1/runs.csv" "$2" memory_params_bytes)" \
    -v g="$(csv_get "$1/runs.csv" "$2" memory_grads_bytes)" \
    -v o="$(csv_get "$1/runs.csv" "$2" memory_optimizer_bytes)" \
    'BEGIN { printf "%.17g", p + g + o }'
}
if run_ok "hsdp runs" run zero.ini --set platform.preset=dgx-h100 \
  --set platform.nodes=16 --set training.sharding=zero3,hsdp \
  --set exchange.algorithm=ring --out zh --quiet; then
  c3=$(csv_get zh/runs.csv 1 compute_s) ch=$(csv_get zh/runs.csv 2 compute_s)
  rel_le "$ch" "$(awk -v c="$c3" 'BEGIN { printf "%.17g", c - 0.004 / 16 + 0.004 / 8 }')" 1e-9 &&
    [ "$(csv_get zh/runs.csv 2 oracle)" = pass ] &&
    rel_le "$(states zh 2)" "$(awk -v m="$(states zh 1)" 'BEGIN { printf "%.17g", 2 * m }')" 1e-9 &&
    [ "$(csv_get zh/runs.csv 1 memory_buffers_bytes)" = "$(csv_get zh/runs.csv 2 memory_buffers_bytes)" ] &&
    awk -v a="$(csv_get zh/runs.csv 2 wire_bytes)" -v b="$(csv_get zh/runs.csv 1 wire_bytes)" \
      'BEGIN { exit !(a < b) }'
  check "hsdp: the oracle, an 8th of the update and the states, its gathered units zero3's, fewer bytes" $? \
    "$(cut -d, -f20,25,28 zh/runs.csv)"
fi
# ZeRO++'s hpz (backward's gathers from a copy sharded inside each
# machine) and qgz (gradients reduce-scattered inside each machine, then
# across machines among a rail) on two DGX H100s: the oracle passes on
# every worker's shard in sync and overlap; each moves fewer bytes over
# the machines' NICs than zero3 alone, both fewer still; hpz keeps an
# 8th of the weights more; fast-forward gives the same results.
if run_ok "hpz and qgz run" run zero.ini --set platform.preset=dgx-h100 \
  --set platform.nodes=16 --set exchange.algorithm=ring \
  --set training.sharding=zero3 --set training.hpz=false,true \
  --set training.qgz=false,true --set training.mode=sync,overlap \
  --out zpp --quiet; then
  ok=0
  for r in 1 2 3 4 5 6 7 8; do
    [ "$(csv_get zpp/runs.csv $r oracle)" = pass ] || ok=1
  done
  # Rows: mode x hpz x qgz, qgz fastest; bytes over the NICs' links.
  net=$(awk -F, 'NR > 1 && $2 ~ /-net/ { b[$1] += $3 }
    END { for (k = 0; k < 8; k++) printf "%d ", b[k] }' zpp/links.csv)
  read -r n0 n1 n2 n3 _ <<<"$net"
  [ "$n1" -lt "$n0" ] && [ "$n2" -lt "$n0" ] && [ "$n3" -lt "$n1" ] &&
    [ "$n3" -lt "$n2" ] || ok=1
  p0=$(csv_get zpp/runs.csv 1 memory_params_bytes) p2=$(csv_get zpp/runs.csv 3 memory_params_bytes)
  rel_le "$p2" "$(awk -v p="$p0" 'BEGIN { printf "%.17g", p + p * 16 / 8 }')" 1e-9 || ok=1
  check "hpz and qgz: the oracle, fewer bytes over the network, hpz's copy" $ok \
    "network bytes $net; params $p0 $p2; $(cut -d, -f12,28 zpp/runs.csv | tr '\n' ' ')"
fi
if ff_runs "hpz and qgz" zero.ini zpf1 zpf2 2 --set platform.preset=dgx-h100 \
  --set platform.nodes=16 --set exchange.algorithm=ring \
  --set exchange.payload=none --set training.sharding=zero3 \
  --set training.hpz=true --set training.qgz=true \
  --set training.mode=sync,overlap; then
  check_ff_equal "hpz and qgz fast-forward" zpf1 zpf2 2
fi
bad "hpz with zero2" "hpz is ZeRO++'s, on sharding = zero3 (not sharding = zero2)" \
  run small.ini --set training.sharding=zero2 --set training.hpz=true --out never
bad "qgz without machines" "qgz works inside each machine" \
  run small.ini --set training.sharding=zero3 --set training.qgz=true --out never
bad "qgz on nccl" "qgz with algorithm = nccl: it cannot reduce-scatter a machine's part across machines (take ring, inceptionn)" \
  run zero.ini --set platform.preset=dgx-h100 --set platform.nodes=16 \
  --set exchange.algorithm=nccl --set training.sharding=zero3 \
  --set training.qgz=true --out never
bad "hsdp without machines" "sharding = hsdp works inside each machine" \
  run small.ini --set training.sharding=hsdp --out never
# Fully sharded in overlap, as FSDP runs it (a unit's gather one unit
# ahead, its reduce-scatter behind the next unit's backward): the same
# bytes as in sync, the oracle passing, less time, the split adding up.
# (ResNet-44: 21 blocks of 0.66M values in all; ResNet-18's 11.7M took
# 40 s to check.)
if run_ok "zero3 and hsdp in overlap run" run zero.ini --set model.name=resnet44 \
  --set platform.preset=dgx-h100 --set platform.nodes=16 \
  --set exchange.algorithm=ring --set training.sharding=zero3,hsdp \
  --set training.mode=sync,overlap --out zfo --quiet; then
  ok=0
  for r in 1 2 3 4; do
    [ "$(csv_get zfo/runs.csv $r oracle)" = pass ] || ok=1
    parts=$(awk -F, -v r=$r 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      NR == r + 1 { printf "%.17g", $c["split_compute_s"] + $c["exposed_comm_s"] + $c["exposed_codec_s"] + $c["exposed_reduce_s"] + $c["split_idle_s"] }' zfo/runs.csv)
    rel_le "$parts" "$(csv_get zfo/runs.csv $r iteration_s)" 1e-6 || ok=1
  done
  for r in 1 2; do
    [ "$(csv_get zfo/runs.csv $r wire_bytes)" = "$(csv_get zfo/runs.csv $((r + 2)) wire_bytes)" ] || ok=1
    awk -v s="$(csv_get zfo/runs.csv $r iteration_s)" -v o="$(csv_get zfo/runs.csv $((r + 2)) iteration_s)" \
      'BEGIN { exit !(o < s) }' || ok=1
  done
  check "zero3 and hsdp in overlap: the bytes, the oracle, less time, the split" $ok \
    "$(cut -d, -f12,20,25,28 zfo/runs.csv)"
fi
if ff_runs "zero3 overlap" zff.ini zf5 zf6 1 --set training.sharding=zero3 \
  --set training.mode=overlap; then
  check_ff_equal "zero3 overlap fast-forward" zf5 zf6 1
fi
# A codec per hop on the GPU beside backward keeps fast-forward off (its
# encodes wait for the layer computing): the same results either way.
if ff_runs "q8 on the GPU in overlap" zero.ini zg1 zg2 1 \
  --set model.name=resnet18 --set exchange.payload=none \
  --set training.sharding=none --set training.mode=overlap \
  --set exchange.codec=q8 --set exchange.placement=gpu \
  --set exchange.algorithm=ring; then
  check_ff_equal "q8 on the GPU in overlap" zg1 zg2 1
  [ "$(csv_get zg1/runs.csv 1 fast_forwarded_steps)" = 0 ]
  check "q8 on the GPU in overlap skips no step" $?
fi
# On a stream of its own the codec waits for no layer: the iteration is
# shorter than on the compute's stream, and fast-forward (no longer kept
# off) gives the results of every step.
if ff_runs "q8 on its own stream" zero.ini zg3 zg4 1 \
  --set model.name=resnet18 --set exchange.payload=none \
  --set training.sharding=none --set training.mode=overlap \
  --set exchange.codec=q8 --set exchange.placement=gpu \
  --set exchange.algorithm=ring --set exchange.codec_stream=own; then
  check_ff_equal "q8 on its own stream" zg3 zg4 1
  awk -v o="$(csv_get zg3/runs.csv 1 iteration_s)" -v c="$(csv_get zg1/runs.csv 1 iteration_s)" \
    'BEGIN { exit !(o < c) }'
  check "q8 on its own stream: a shorter iteration" $? \
    "own $(csv_get zg3/runs.csv 1 iteration_s), compute's $(csv_get zg1/runs.csv 1 iteration_s)"
fi
bad "codec_stream" "codec_stream = side: must be one of compute, own" \
  run small.ini --set exchange.codec_stream=side --out never
bad "zero3 with micro-batches" "gradient accumulation is not simulated fully sharded" \
  run small.ini --set training.sharding=zero3 --set model.micro_batch=1 --out never
bad "shard_unit" "shard_unit = tensor: must be one of block, layer" \
  run small.ini --set training.shard_unit=tensor --out never
bad "sharding" "sharding = zero4: must be one of none, zero1, zero2, zero3, hsdp" \
  run small.ini --set training.sharding=zero4 --out never
bad "sharding with rdb" "sharding = zero2 reduce-scatters gradients and allgathers weights, which algorithm = rdb does not: take ring, nccl-ring, inceptionn, rabenseifner, nccl" \
  run small.ini --set training.sharding=zero2 --set exchange.algorithm=rdb --out never
# Rabenseifner's halves apart (recursive halving, then doubling) over a
# power of two: every value (zero2) and every shard (zero3) checked, the
# allreduce's bytes; 12 workers are refused.
if run_ok "rabenseifner sharded runs" run zero.ini --set exchange.algorithm=rabenseifner \
  --set training.sharding=none,zero2,zero3 --set training.mode=sync,overlap \
  --out zrab --quiet; then
  o=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "oracle") k = i; next }
               { printf "%s ", $k }' zrab/runs.csv)
  [ "$o" = "pass pass pass pass pass pass " ] &&
    [ "$(csv_get zrab/runs.csv 1 wire_bytes)" = "$(csv_get zrab/runs.csv 2 wire_bytes)" ]
  check "rabenseifner sharded: the oracle, the allreduce's bytes" $? "oracle: $o"
fi
bad "rabenseifner sharded over 12" "halve and double over a power of two GPUs, not 12" \
  run zero.ini --set exchange.algorithm=rabenseifner --set platform.nodes=12 \
  --set training.sharding=zero2 --out never
# NCCL's ReduceScatter and AllGather (rank r's shard the r-th of the
# bucket, NCCL's rings, its tuner's protocol and channels) over two DGX
# H100s: the oracle passes on every shard in sync and overlap, overlap
# takes less time, and the results are those of every step simulated.
if run_ok "nccl sharded runs" run zero.ini --set platform.preset=dgx-h100 \
  --set platform.nodes=16 --set exchange.algorithm=nccl \
  --set training.sharding=zero2,zero3 --set training.mode=sync,overlap \
  --out znc --quiet; then
  o=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "oracle") k = i; next }
               { printf "%s ", $k }' znc/runs.csv)
  [ "$o" = "pass pass pass pass " ] &&
    awk -v s="$(csv_get znc/runs.csv 2 iteration_s)" -v o="$(csv_get znc/runs.csv 4 iteration_s)" \
      'BEGIN { exit !(o < s) }'
  check "nccl sharded: the oracle on every shard, overlap faster" $? \
    "oracle: $o; $(cut -d, -f12,19,51 znc/runs.csv)"
fi
if ff_runs "nccl sharded" zero.ini znf1 znf2 2 --set platform.preset=dgx-h100 \
  --set platform.nodes=16 --set exchange.algorithm=nccl-ring \
  --set exchange.payload=none --set training.sharding=zero1,zero3; then
  check_ff_equal "nccl sharded fast-forward" znf1 znf2 2
fi
bad "nccl hsdp" "sharding = hsdp with algorithm = nccl: it cannot allreduce a shard across machines (take ring, inceptionn)" \
  run zero.ini --set platform.preset=dgx-h100 --set platform.nodes=16 \
  --set exchange.algorithm=nccl --set training.sharding=hsdp --out never
bad "nccl sharded with a codec" "nccl's reduce-scatter and allgather are simulated without a codec (take codec = none, or for a codec algorithm = ring, inceptionn, rabenseifner;" \
  run zero.ini --set platform.preset=dgx-h100 --set platform.nodes=16 \
  --set exchange.algorithm=nccl --set exchange.codec=q8 \
  --set training.sharding=zero2 --out never
bad "nccl sharded on trees" "NCCL's reduce-scatter and allgather are simulated on rings only" \
  run zero.ini --set platform.preset=dgx-h100 --set platform.nodes=16 \
  --set exchange.algorithm=nccl --set exchange.nccl_algo=tree \
  --set training.sharding=zero2 --out never
# A codec per hop compresses both halves (ZeRO++'s quantized gradients
# and weights, on a ring), the oracle holding every value (zero2) or the
# shard (zero3) to the codec's bound.
if run_ok "sharded with q8 runs" run zero.ini --set exchange.codec=q8 \
  --set exchange.algorithm=ring --out zq8 --quiet; then
  o=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "oracle") k = i; next }
               { printf "%s ", $k }' zq8/runs.csv)
  [ "$o" = "pass pass pass pass " ] &&
    [ "$(csv_get zq8/runs.csv 1 wire_bytes)" = "$(csv_get zq8/runs.csv 3 wire_bytes)" ]
  check "sharded q8: the oracle passes, the allreduce's bytes" $? "oracle: $o"
fi
# shard_codec puts the codec on one half only: the weights' allgathers
# (ZeRO++'s quantized weights) or the gradients' reduce-scatters, the
# other half at full width: on the ring, zero2's bytes are half q8's and
# half fp32's either way, zero3's two gathers or its reduce-scatter at
# q8; the oracle passes each. With the gradients alone, zero3 takes a
# codec whose size depends on the data (the gathers carry none).
if run_ok "shard_codec runs" run zero.ini --set exchange.codec=q8 \
  --set exchange.algorithm=ring --set training.sharding=zero2,zero3 \
  --set exchange.shard_codec=all,weights,gradients --out zsc --quiet; then
  ok=0
  for r in 1 2 3 4 5 6; do
    [ "$(csv_get zsc/runs.csv $r oracle)" = pass ] || ok=1
  done
  # Rows: (all, weights, gradients) x (zero2, zero3); bytes a worker.
  b() { csv_get zsc/runs.csv "$1" wire_bytes; }
  # fp32 = 4 x q8's bytes (q8: a byte a value and a scale per block).
  awk -v a="$(b 1)" -v w="$(b 3)" -v g="$(b 5)" -v a3="$(b 2)" -v w3="$(b 4)" -v g3="$(b 6)" 'BEGIN {
    r = w / a; if (r < 2.3 || r > 2.7) exit 1      # (1 + 4) / 2 q8 halves
    if (w != g && (w - g) / w > 1e-3) exit 1
    if (w3 / a3 < 1.8 || w3 / a3 > 2.2) exit 1     # 2 q8 gathers + fp32 RS
    if (g3 / a3 < 2.8 || g3 / a3 > 3.2) exit 1     # 2 fp32 gathers + q8 RS
  }' || ok=1
  check "shard_codec: the codec on the weights or the gradients alone, the oracle passing" $ok \
    "$(cut -d, -f25,28,51 zsc/runs.csv)"
fi
run_ok "zero3 with a data-sized codec on the gradients alone runs" run small.ini \
  --set training.sharding=zero3 --set exchange.codec=inceptionn:eb=-10 \
  --set exchange.algorithm=inceptionn --set exchange.payload=full \
  --set exchange.shard_codec=gradients --out zsc2 --quiet
bad "shard_codec" "shard_codec = params: must be one of all, weights, gradients" \
  run small.ini --set exchange.shard_codec=params --out never
bad "sharding per bucket" "compression = per-bucket is not simulated sharded" \
  run small.ini --set training.sharding=zero1 --set exchange.codec=q8 \
  --set exchange.compression=per-bucket --out never
bad "zero3 with a data-sized codec" "its weights are gathered without values" \
  run small.ini --set training.sharding=zero3 --set exchange.codec=inceptionn:eb=-10 \
  --set exchange.algorithm=inceptionn --set exchange.payload=full --out never
bad "sharding in pipe" "sharding = zero2 runs with mode = sync or overlap" \
  run small.ini --set training.sharding=zero2 --set training.mode=pipe --out never
bad "optimizer" "optimizer = lamb: must be one of sgd, momentum, adam, adamw" \
  run small.ini --set training.optimizer=lamb --out never
bad "activation_checkpointing" "activation_checkpointing = maybe: must be true or false" \
  run small.ini --set training.activation_checkpointing=maybe --out never

# Strict inputs (issue 38): a rate and a size name their unit, a rate lies
# in 1 kbps..100 Tbps, a time is not negative, a range's message is the
# same from either side, and a key given twice names both lines.
for v in 10 1bps 1e30Gbps 100.1Tbps; do
  bad "bandwidth = $v" "bandwidth = $v: must be a rate with its unit (bps or Bps after k, M, G, T or Ki, Mi, Gi, Ti), 1kbps to 100Tbps" \
    run small.ini --set "platform.bandwidth=$v" --out never
done
bad "latency below 0" "latency = -1us: must be a time of 0 or more" \
  run small.ini --set platform.latency=-1us --out never
bad "eager size without a unit" "eager_bytes = 65536: must be 0 or a size with its unit" \
  run small.ini --set exchange.eager_bytes=65536 --out never
for v in 2 0; do
  bad "mfu = $v" "mfu = $v: must be device or a fraction in (0, 1\]" \
    run small.ini --set "model.mfu=$v" --out never
done
cp small.ini e.ini
printf '[platform]\nlatency = 5us\n' >>e.ini
first=$(grep -n '^latency' small.ini | cut -d: -f1)
last=$(wc -l <e.ini)
bad "a key given twice" "e.ini:$last: \[platform\] latency is given twice (first on line $first)" \
  run e.ini --out never

# [exchange] pull = direct: the aggregator sends the sum to every worker
# itself, at once, through its link (TensorFlow's parameter server): on an
# ideal star the exchange is 2(alpha + p n beta) + (p - 1) n gamma exactly
# (formula ps-direct), while the binomial tree's follows formula ps (one
# bucket, one iteration: the formulas time one exchange alone).
if run_ok "ps pull sweep runs" run small.ini --set exchange.algorithm=ps \
  --set platform.aggregators=1 --set model.tensors=1 \
  --set training.iterations=1 \
  --set exchange.pull=tree,direct --out pull --quiet; then
  for r in 1 2; do
    e=$(csv_get pull/runs.csv $r formula_rel_err)
    awk -v e="$e" 'BEGIN { exit !(e != "" && e < 1e-9) }'
    check "ps pull point $r matches its formula" $? "rel err $e"
  done
  w1=$(csv_get pull/runs.csv 1 wire_bytes) w2=$(csv_get pull/runs.csv 2 wire_bytes)
  [ "$w1" = "$w2" ]
  check "a direct pull sends as many bytes as the tree" $? "$w1 and $w2"
  x1=$(csv_get pull/runs.csv 1 exchange_s) x2=$(csv_get pull/runs.csv 2 exchange_s)
  awk -v a="$x1" -v b="$x2" 'BEGIN { exit !(b > a) }'
  check "a direct pull of 4 workers is slower than the tree's 3 rounds" $? \
    "tree $x1 s, direct $x2 s"
fi
bad "pull" "tree, direct" run small.ini --set exchange.pull=star --out never

# [exchange] warmup_steps: error-feedback streams (3lc) start from a warmed
# state, so the first exchange's bytes change; a stateless codec (q8) has
# no state to warm, and its results stay byte for byte.
cat >warm.ini <<'EOF'
[platform]
nodes = 4
aggregators = 1
[model]
name = synthetic
params = 36864
compute = 0.01
[exchange]
algorithm = ps-shared
codec = 3lc:s=1.9, q8
payload = full
warmup_steps = 0, 200
[training]
iterations = 1
EOF
if run_ok "warm-up sweep runs" run warm.ini --out warm --quiet; then
  w3=$(awk -F, 'NR > 1 && $9 ~ /3lc/ { print $25 }' warm/runs.csv | tr '\n' ' ')
  wq=$(awk -F, 'NR > 1 && $9 == "q8" { print $25 }' warm/runs.csv | tr '\n' ' ')
  # shellcheck disable=SC2086 # two numbers
  set -- $w3
  [ "$1" != "$2" ]
  check "warmup_steps changes a 3lc exchange's bytes" $? "3lc wire bytes: $w3"
  # shellcheck disable=SC2086
  set -- $wq
  [ "$1" = "$2" ]
  check "warmup_steps leaves q8 unchanged" $? "q8 wire bytes: $wq"
fi

# [exchange] server_momentum: ps-shared's pull is the model delta after the
# server's momentum, so 3lc's pull (whose size follows its input) changes,
# q8's (a fixed size) does not, and the oracle's sums still hold.
sed -e 's/^warmup_steps = 0, 200$/warmup_steps = 20\nserver_momentum = 0, 0.9/' \
  -e 's/^iterations = 1$/iterations = 2/' warm.ini >mom.ini
if run_ok "server_momentum sweep runs" run mom.ini --out mom --quiet; then
  m3=$(awk -F, 'NR > 1 && $9 ~ /3lc/ { print $25 }' mom/runs.csv | tr '\n' ' ')
  mq=$(awk -F, 'NR > 1 && $9 == "q8" { print $25 }' mom/runs.csv | tr '\n' ' ')
  # shellcheck disable=SC2086 # two numbers
  set -- $m3
  [ -n "$2" ] && [ "$1" != "$2" ]
  check "server_momentum changes a 3lc pull's bytes" $? "3lc wire bytes: $m3"
  # shellcheck disable=SC2086
  set -- $mq
  [ -n "$2" ] && [ "$1" = "$2" ]
  check "server_momentum leaves q8's bytes" $? "q8 wire bytes: $mq"
  [ "$(grep -c ',pass,' mom/runs.csv)" = 4 ]
  check "server_momentum: the oracle passes at every point" $? \
    "$(cat mom/runs.csv)"
fi
bad "server_momentum on a ring" "applies to algorithm = ps or ps-shared" \
  run small.ini --set exchange.server_momentum=0.9 --out never
bad "server_momentum = 1" "must be a number in" run mom.ini \
  --set exchange.server_momentum=1 --out never

cp small.ini e.ini
printf 'foo = 1\n' >>e.ini
bad "unknown key (with its line)" "e.ini:16" run e.ini --out never
bad "unknown algorithm" "valid: ring" run small.ini --out never \
  --set exchange.algorithm=nope
bad "unknown codec" "valid: fp32" run small.ini --out never \
  --set exchange.codec=zip
bad "unknown model" "valid: alexnet" run small.ini --out never \
  --set model.name=resnet9000
bad "zero nodes" "nodes" run small.ini --out never --set platform.nodes=0
bad "negative nodes" "nodes" run small.ini --out never --set platform.nodes=-3
bad "absurd nodes" "1..1048576" run small.ini --out never \
  --set platform.nodes=100000000
bad "non-numeric bandwidth" "rate" run small.ini --out never \
  --set platform.bandwidth=fast
bad "negative latency" "time" run small.ini --out never \
  --set platform.latency=-1us
bad "timing precision of zero" "1e-15 (seconds) to 1us" run small.ini \
  --out never --set platform.timing_precision=0
bad "timing precision of a millisecond" "1e-15 (seconds) to 1us" run \
  small.ini --out never --set platform.timing_precision=1ms
bad "zero iterations" "iterations" run small.ini --out never \
  --set training.iterations=0
bad "non-numeric iterations" "iterations" run small.ini --out never \
  --set training.iterations=abc
bad "unknown mode" "sync" run small.ini --out never --set training.mode=async
bad "unknown payload" "payload" run small.ini --out never \
  --set exchange.payload=some
bad "malformed --set (no value)" "section.key=value" run small.ini \
  --out never --set platform.nodes
bad "malformed --set (no section)" "section.key=value" run small.ini \
  --out never --set nodes=3
bad "missing experiment file" "no such file" run missing.ini --out never
printf 'garbage\001\n' >g.ini
bad "not a key file" "g.ini" run g.ini --out never
bad "missing platform file" "nonexist.xml" run small.ini --out never \
  --set platform.topology=file:nonexist.xml
printf '<?xml version="1.0"?>\n<platform version="4.1"><zone\n' >broken.xml
bad "malformed platform XML" "malformed XML" run small.ini --out never \
  --set platform.topology=file:broken.xml
DT='<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
printf '<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone></platform>\n' >nodt.xml
bad "platform XML without DOCTYPE" "DOCTYPE" run small.ini \
  --out never --set platform.topology=file:nodt.xml
printf '<?xml version="1.0"?>\n%s\n<platform version="4.1"><zone id="z" routing="Full"><hostx id="a" speed="1Gf"/></zone></platform>\n' "$DT" >sem.xml
bad "platform XML SimGrid rejects" "SimGrid cannot load it: Parse error" \
  run small.ini --out never --set platform.topology=file:sem.xml
printf '<?xml version="1.0"?>\n%s\n<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone></platform>\n' "$DT" >one.xml
bad "platform file with too few hosts" "has 1 hosts" run small.ini \
  --out never --set platform.topology=file:one.xml
bad "allgather-rdb on 5 workers" "power-of-two" run small.ini --out never \
  --set exchange.algorithm=allgather-rdb --set platform.nodes=5
bad "ps without aggregators" "aggregators" run small.ini --out never \
  --set exchange.algorithm=ps
# [exchange] compression = per-bucket (sim/bucketwise.c), as PyTorch DDP's
# hooks: the codec once per bucket around the collective. The oracle
# passes for codecs that sum (fp32, bf16: allreduced at their width, so
# bf16 sends half of fp32's bytes), a gathered one (q8) and error feedback
# on a ring (3lc, refused per hop: nothing re-encodes a partial sum); a
# codec that does not sum needs a collective that gathers, and the NIC
# engine compresses messages, not buckets: both refused before anything
# runs.
if run_ok "per-bucket sweep runs" run small.ini \
  --set exchange.compression=per-bucket --set exchange.codec=fp32,bf16,q8,3lc \
  --set exchange.payload=full --out pb --quiet; then
  [ "$(grep -c ',pass,' pb/runs.csv)" = 4 ]
  check "per-bucket: the oracle passes at every point" $? "$(cat pb/runs.csv)"
  w1=$(csv_get pb/runs.csv 1 wire_bytes) w2=$(csv_get pb/runs.csv 2 wire_bytes)
  awk -v a="$w1" -v b="$w2" 'BEGIN { exit !(a > 0 && b == a / 2) }'
  check "per-bucket bf16 sends half of fp32's bytes" $? "fp32 $w1, bf16 $w2"
fi
bad "per-bucket codec that does not sum, on hierarchical" "does not sum" \
  run small.ini --out never --set exchange.compression=per-bucket \
  --set exchange.codec=q8 --set exchange.algorithm=hierarchical \
  --set exchange.group=2
# A collective's own checks run on every point before any runs: a sweep
# whose second point cannot run writes nothing, and --estimate refuses it
# too (they ran as the point started, after the first point's results).
bad "hierarchical without a group, in a sweep" "needs \[exchange\] group" \
  run small.ini --out never --set exchange.algorithm=ring,hierarchical
bad "hierarchical without a group, estimated" "needs \[exchange\] group" \
  run small.ini --out never --estimate \
  --set exchange.algorithm=ring,hierarchical
bad "nccl-ring's group not dividing the workers, in a sweep" \
  "group = 3 must divide \[platform\] nodes = 4" run small.ini --out never \
  --set exchange.algorithm=ring,nccl-ring --set exchange.group=3
bad "per-bucket on the NIC engine" "placement = nic" run small.ini \
  --out never --set exchange.compression=per-bucket --set exchange.codec=q8 \
  --set exchange.placement=nic
bad "full payload that cannot fit" "sampled" run small.ini --out never \
  --set exchange.payload=full --set model.params=100000000000 \
  --set platform.nodes=1024
bad "NIC engine clock 0" "frequency above 0" run small.ini --out never \
  --set exchange.placement=nic --set nic.clock=0
bad "NIC burst width not a multiple of 32" "multiple of 32" run small.ini \
  --out never --set nic.burst_bits=100
bad "MTU smaller than its headers" "smaller than its headers" run small.ini \
  --out never --set nic.framing=packets --set nic.mtu=60
bad "negative driver time" "driver_s" run small.ini --out never \
  --set nic.driver_s=-1us
bad "unknown [nic] key" "valid: clock" run small.ini --out never \
  --set nic.fifo=3
bad "bad --jobs" "jobs" run small.ini --out never --jobs -1
bad "--out is a file" "not a directory" run small.ini --out small.ini

finish
