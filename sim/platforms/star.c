/* sim/platforms/star.c: every host on its own link to one switch (a
 * SimGrid <cluster> without topology); the latency between two workers
 * is split over the two host links of their route. */
#include "generator.h"

static int star_write(FILE *f, const struct point *p, char **err) {
  (void)err;
  platform_write_cluster(f, p, p->nodes + p->aggregators, p->latency_s / 2,
                         "");
  return 0;
}

const struct platform_gen platform_star = {
    .name = "star",
    .write = star_write,
    .host_name = platform_cluster_host,
};
