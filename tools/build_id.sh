#!/bin/sh
# tools/build_id.sh SRCROOT: the id of the simulator's sources, for meson's
# vcs_tag (config/version.h, recorded in every point's [inputs]): the last
# commit that changed the code a point's results come from (codecs/,
# models/, sim/, config/, sweep/), with "-dirty" when those differ from
# it. Commits that touch only the README, experiments, plots, tests, the
# command line or the reproduction framework keep the id, so finished
# points stay reusable across them.
cd "$1" || exit 1
id=$(git log -1 --format=%h -- codecs models sim config sweep 2>/dev/null) || exit 1
[ -n "$id" ] || exit 1
git diff --quiet HEAD -- codecs models sim config sweep 2>/dev/null || id="$id-dirty"
echo "$id"
