/* bench/platform_load.c: the wall time of SimGrid's load of a platform
 * file alone (simgrid_load_platform), which every gradsim run of that
 * platform pays before its first event (bench/scale.sh frontier).
 *
 *   platform_load FILE.xml   prints "HOSTS hosts, load S s" */
#include <simgrid/engine.h>
#include <simgrid/host.h>

#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: platform_load FILE.xml\n");
    return 2;
  }
  struct timespec a, b;
  simgrid_init(&argc, argv);
  clock_gettime(CLOCK_MONOTONIC, &a);
  simgrid_load_platform(argv[1]);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%zu hosts, load %.2f s\n", sg_host_count(),
         (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
  return 0;
}
