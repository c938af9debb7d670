#!/bin/sh
# tests/fuzz/run.sh SRCROOT OUTDIR: build the libFuzzer harnesses of
# tests/fuzz/ into OUTDIR and run each one briefly from a copy of its seed
# corpus. Meson's fuzz_smoke test runs it as
#   run.sh <source root> <build dir>/tests/fuzz
# Exit status: 0 when no harness found anything, 1 when one crashed (or
# did not build), 77 (meson's "skipped") when clang or libFuzzer is
# missing. Nothing is written into SRCROOT.
#
# Environment: FUZZ_SECONDS (default 15) per harness, CC_FUZZ (default
# clang). Long campaigns: see tests/fuzz/README.md.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 SRCROOT OUTDIR" >&2
  exit 2
fi
src=$1
out=$2
seconds=${FUZZ_SECONDS:-10}
cc=${CC_FUZZ:-clang}
harnesses="decode container npy roundtrip experiment model import"

if ! command -v "$cc" >/dev/null 2>&1; then
  echo "fuzz: skipped: '$cc' not found (the harnesses need clang with libFuzzer)"
  exit 77
fi
# Absolute paths, and the source root as the working directory, so that
# the compiler flags below hold no path with spaces.
rm -rf "$out/obj" "$out/artifacts"
mkdir -p "$out/obj" "$out/corpus" "$out/artifacts" || exit 1
out=$(cd "$out" && pwd) || exit 1
src=$(cd "$src" && pwd) || exit 1
cd "$src" || exit 1

# Can this clang link a libFuzzer binary? (Debian: libclang-rt-NN-dev.)
cat > "$out/probe.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  return 0;
}
EOF
if ! "$cc" -fsanitize=fuzzer,address,undefined "$out/probe.c" \
    -o "$out/probe" >"$out/probe.log" 2>&1; then
  echo "fuzz: skipped: '$cc' cannot link -fsanitize=fuzzer,address,undefined" \
    "(is libclang-rt-dev installed?):"
  head -n 5 "$out/probe.log"
  exit 77
fi

# codec_impl.h compiles no function clones under clang; the AVX2 kernels
# (chosen at run time) are fuzzed as well as their portable twins.
flags="-g -O1 -fsanitize=fuzzer-no-link,address,undefined
  -fno-sanitize-recover=all -ffp-contract=off -Icodecs -Imodels"

# The experiment and model readers need GLib (and GSL: config/experiment.c
# takes the gradient distributions' names from models/gradgen.c).
if ! glib_cflags=$(pkg-config --cflags glib-2.0 gsl json-glib-1.0 2>"$out/pkg-config.log") ||
  ! glib_libs=$(pkg-config --libs glib-2.0 gsl json-glib-1.0 2>>"$out/pkg-config.log"); then
  echo "fuzz: FAILED: pkg-config finds no glib-2.0, gsl or json-glib-1.0:"
  cat "$out/pkg-config.log"
  exit 1
fi

# The library under test, compiled once, in two parts: obj/core, the
# codecs and models/array_io.c (libc only), which every harness links;
# obj/config, the experiment and model readers (GLib, GSL). model.c reads
# devices.conf from the source tree, as the build's gradsim does.
start=$(date +%s)
mkdir -p "$out/obj/core" "$out/obj/config" || exit 1
compile() { # compile PART FILE [EXTRA FLAGS...]
  part=$1
  f=$2
  shift 2
  o="$out/obj/$part/$(basename "$f" .c).o"
  # shellcheck disable=SC2086 # $flags is a list of words
  if ! "$cc" $flags "$@" -c "$f" -o "$o" >"$o.log" 2>&1; then
    echo "fuzz: FAILED to compile $f with $cc:"
    cat "$o.log"
    exit 1
  fi
}
for f in codecs/*.c models/array_io.c; do
  compile core "$f"
done
# The topologies' names and checks come from the platform generators
# (which only write text; SimGrid's headers declare types; the fat tree's
# builder, which only a run calls, is a stub here).
for f in models/units.c models/gradgen.c models/nic.c models/memory.c \
    config/experiment.c \
    config/presets.c sim/platforms/registry.c sim/platforms/cluster.c \
    sim/platforms/star.c sim/platforms/fat_tree.c sim/platforms/dragonfly.c \
    sim/platforms/gpu_cluster.c sim/platforms/torus.c \
    sim/platforms/nvswitch.c sim/names.c tests/fuzz/sim_stubs.c; do
  # shellcheck disable=SC2086
  compile config "$f" -Isim $glib_cflags
done
# shellcheck disable=SC2086
compile config models/model.c $glib_cflags \
  "-DGRADSIM_MODELS_DIR=\"$src/models\""
# shellcheck disable=SC2086
compile config models/model_import.c $glib_cflags
for h in $harnesses; do
  case $h in
    experiment | model | import)
      objs="$out/obj/config/*.o" extra="-Iconfig -Isim $glib_cflags $glib_libs" ;;
    *) objs="" extra="" ;;
  esac
  # shellcheck disable=SC2086 # lists of words
  if ! "$cc" $flags -fsanitize=fuzzer "$out"/obj/core/*.o $objs \
      "tests/fuzz/fuzz_$h.c" $extra -lgslcblas -lm \
      -o "$out/fuzz_$h" >"$out/fuzz_$h.build.log" 2>&1; then
    echo "fuzz: FAILED to build fuzz_$h:"
    cat "$out/fuzz_$h.build.log"
    exit 1
  fi
done
echo "fuzz: built the harnesses ($harnesses) in $(($(date +%s) - start)) s"

# Files in a directory.
count() { find "$1" -type f | wc -l; }
# The frames of a stack trace that are not libFuzzer's, libc's or the
# sanitizers' own.
frames() {
  grep -E '^ +#[0-9]+ ' "$1" |
    grep -v -E 'fuzzer::|__sanitizer|libc\.so|/nptl/|/stdlib/|/sysdeps/|/csu/| in main | in _start ' |
    head -n 12
}

failed=""
for h in $harnesses; do
  # A copy of the seeds: libFuzzer adds new inputs to it.
  corpus="$out/corpus/fuzz_$h"
  rm -rf "$corpus"
  if [ -d "$src/tests/fuzz/corpus/fuzz_$h" ]; then
    cp -R "$src/tests/fuzz/corpus/fuzz_$h" "$corpus"
  else
    mkdir -p "$corpus"
  fi
  # The shipped experiments and models are seeds too, as they are now.
  case $h in
    experiment) cp "$src"/experiments/*.ini "$corpus"/ ;;
    model) cp "$src"/models/*.model "$corpus"/ ;;
    import)
      # The shipped configs, as route 1 (byte 0 = 1).
      for c in "$src"/models/configs/*.json; do
        { printf '\001'; cat "$c"; } >"$corpus/config-$(basename "$c")"
      done ;;
    *) ;;
  esac
  # Reproducers of bugs found earlier (tests/fuzz/regress/<harness>/), each
  # run once: they fail until the bug is fixed.
  regress="$src/tests/fuzz/regress/fuzz_$h"
  if [ -d "$regress" ] && [ "$(count "$regress")" -gt 0 ]; then
    rlog="$out/fuzz_$h.regress.log"
    if "$out/fuzz_$h" -error_exitcode=1 -timeout_exitcode=1 -timeout=10 \
        "$regress"/* >"$rlog" 2>&1; then
      echo "fuzz_$h: $(count "$regress") regression inputs pass"
    else
      echo "fuzz_$h: FAILED on a regression input of $regress; log $rlog"
      grep -E '^(Running:|==[0-9]+==ERROR|SUMMARY|fuzz_)' "$rlog" | head -n 10
      frames "$rlog"
      echo "fuzz_$h: not fuzzed further until that bug is fixed"
      failed="$failed fuzz_$h(regress)"
      continue
    fi
  fi

  seeds=$(count "$corpus")
  log="$out/fuzz_$h.log"
  # A crash must not look like meson's skip status (libFuzzer's default
  # error exit code is 77), hence -error_exitcode=1.
  "$out/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/fuzz_$h-" "$corpus" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" |
    tail -n 1)
  now=$(count "$corpus")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz_$h: ${execs:-?} executions in ${secs:-?} s, corpus $seeds -> $now inputs, no crash"
  else
    echo "fuzz_$h: FAILED (exit $rc) after ${execs:-?} executions; log $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz_|artifact_prefix|Test unit written)' \
      "$log" | head -n 20
    frames "$log"
    failed="$failed fuzz_$h"
  fi
done

if [ -n "$failed" ]; then
  echo "fuzz: failed:$failed (crash inputs found now are in $out/artifacts/)"
  exit 1
fi
echo "fuzz: all harnesses ran clean"
exit 0
