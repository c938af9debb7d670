#!/bin/sh
# dev.sh: the two commands of the README's quick start, for a fresh Debian 12
# machine (run as root, or as a user who may sudo).
#
#   ./dev.sh run    install what is missing, build, run the main job
#   ./dev.sh test   install what is missing, build, run the whole test suite
#   ./dev.sh build  install what is missing and build (build/gradsim)
#   ./dev.sh deps   print the packages that are missing (none: nothing to
#                   install, no network or root needed)
#
# `test` runs the whole meson suite in build/ (gcc), then builds
# build-asan/ with clang (AddressSanitizer and UndefinedBehaviorSanitizer)
# and runs the Criterion suites (meson suite `unit`) again there; any
# sanitizer report fails it. Warnings are errors (meson.build: werror), so
# the code builds warning-free under both compilers.
set -eu
cd "$(dirname "$0")"

# Debian 12 packages: compiler and build tools, the libraries (SimGrid's
# libsimgrid-dev also brings SMPI's smpicc and smpirun; json-glib reads
# safetensors headers and Hugging Face configs; mimalloc is build/gradsim's
# malloc, meson_options.txt), gnuplot for plots,
# clang and its runtimes (libclang-rt: the sanitizers of build-asan/, and
# libFuzzer for the fuzz tests). Real package names only: dpkg knows no
# virtual package (such as "simgrid", which libsimgrid-dev provides) as
# installed, and one of those here would make every call run apt-get,
# which needs the network and root.
PKGS="build-essential pkg-config meson ninja-build libsimgrid-dev
libglib2.0-dev libgsl-dev libjson-glib-dev libmimalloc-dev libcriterion-dev
gnuplot-nox clang libclang-rt-14-dev"

missing_packages() {
  missing=""
  for p in $PKGS; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing="$missing $p"
  done
}

install_missing() {
  missing_packages
  [ -z "$missing" ] && return 0
  echo "dev.sh: installing:$missing" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y \
    --no-install-recommends $missing
}

build() {
  install_missing
  [ -f build/build.ninja ] || meson setup build
  ninja -C build
}

case "${1:-}" in
  run)
    build
    shift
    ./build/gradsim run experiments/default.ini --plot "$@"
    ;;
  test)
    build
    # The unit suites run once, in the sanitizer build below; here the
    # command-line, parity and fuzz tests (which run the gradsim binary).
    # The timeouts catch a hang, not slowness: tripled (meson.build's are
    # about twice each suite's time alone), so that the suite passes on a
    # 2-core machine with another CPU-bound job running (issue 38).
    meson test -C build --print-errorlogs --no-suite unit \
      --timeout-multiplier 3
    # The second compiler: clang, and clang++ for the one C++ file, so that
    # one compiler instruments and links everything. A build-asan/ that an
    # older dev.sh set up with gcc is set up again. -Db_lundef=false: clang
    # links the sanitizers' runtime into executables only, so that
    # -Wl,--no-undefined would fail on a shared object (meson warns).
    # Not -fsanitize=function: clang 14 accepts it for C but emits no check
    # (C++ only before clang 17; a call through a function pointer of
    # another type runs clean in C and is caught only compiled as C++).
    # debugoptimized (-O2 -g): the simulator's suite runs about twice as
    # fast as at -O0, and the sanitizers see optimized code as shipped.
    if ! grep -q '^ command = clang ' build-asan/build.ninja 2>/dev/null ||
      ! grep -q -- ' -O2 ' build-asan/build.ninja; then
      rm -rf build-asan
      CC=clang CXX=clang++ meson setup build-asan \
        -Dbuildtype=debugoptimized -Db_sanitize=address,undefined \
        -Db_lundef=false
    fi
    ninja -C build-asan
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      meson test -C build-asan --suite unit --print-errorlogs \
      --timeout-multiplier 3
    ;;
  build)
    build
    ;;
  deps)
    missing_packages
    for p in $missing; do echo "$p"; done
    ;;
  *)
    echo "usage: ./dev.sh run|test|build|deps" >&2
    exit 2
    ;;
esac
