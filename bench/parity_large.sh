#!/usr/bin/env bash
# bench/parity_large.sh: the parity test of the suite (tests/parity/
# parity.sh) at a larger scale: gradsim's ring, rdb, rabenseifner and ps
# against SimGrid SMPI's lr, rdb, rab_rdb and gather + binomial broadcast
# on a 4:1 oversubscribed fat tree of 128 hosts (also with ring neighbours
# on different leaves, and with 100 workers), a 96-host dragonfly and an
# 8x8x2 torus, 16777219 and 100 values; every time within 0.5% of SMPI's.
#
#   bench/parity_large.sh      (after ./dev.sh build; about 8 minutes on 2 cores)
set -eu
cd "$(dirname "$0")/.."
PARITY_LARGE=1 exec tests/parity/parity.sh build/gradsim .
