/* tests/fuzz/sim_stubs.c: what the platform generators link from the
 * engine beyond text, for the harnesses that read experiments but never
 * start SimGrid: the fat tree's builder (sim/fat_tree_zone.cpp, C++ on
 * SimGrid), which only a run calls. Reaching it here is a bug. */
#include "fat_tree_zone.h"

#include <stdlib.h>

void sim_fat_tree_build(const struct sim_fat_tree *t) {
  (void)t;
  abort();
}
