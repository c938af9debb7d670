/* sim/platform.c: the platform of a point (platform.h): its XML from the
 * topology's generator (platforms/) or its own file, SimGrid's network
 * configuration, and which hosts are workers and aggregators. */
#include "platform.h"

#include "platforms/generator.h"

#include <simgrid/host.h>
#include <xbt/sysdep.h>

#include <stdio.h>
#include <stdlib.h>

/* GEN's XML for P into PATH, every spread link with latency LINK_LAT_S. */
static int write_xml(const char *path, const struct platform_gen *gen,
                     const struct point *p, double link_lat_s, char **err) {
  FILE *f = fopen(path, "w");
  if (!f) {
    *err = g_strdup_printf("cannot write %s", path);
    return -1;
  }
  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
             "\"https://simgrid.org/simgrid.dtd\">\n<platform "
             "version=\"4.1\">\n");
  int rc = gen->write(f, p, link_lat_s, err);
  fprintf(f, "</platform>\n");
  if (fclose(f) != 0 && rc == 0) {
    *err = g_strdup_printf("cannot write %s", path);
    rc = -1;
  }
  if (rc != 0)
    remove(path);
  return rc;
}

/* GEN's links on P's longest route when it knows them (generator.h,
 * LINKS), 0 when the platform must be probed for them. */
static int known_links(const struct platform_gen *gen, const struct point *p) {
  return gen->links_of ? gen->links_of(p) : gen->links;
}

/* P's `latency` spread evenly over LINKS links (none: -1, the generator
 * places its latencies itself). */
static double spread(const struct point *p, int links) {
  return links > 0 ? p->latency_s / links : 0;
}

/* The latency of each link that spreads P's `latency` over the longest
 * route: known for the generator, or probed on the platform written with
 * latency-free links into PATH. */
static int link_latency(const char *path, const struct platform_gen *gen,
                        const struct point *p, double *lat_s, char **err) {
  int links = known_links(gen, p);
  if (links == 0) {
    /* Probed without host_stack's limiter links, which carry no latency
     * but would count as links of the route. */
    struct point q = *p;
    q.host_stack_Bps = 0;
    struct platform_probe pr;
    if (write_xml(path, gen, &q, 0, err) != 0 ||
        platform_probe(path, &pr, err) != 0)
      return -1;
    links = pr.links;
    platform_probe_clear(&pr);
  }
  *lat_s = spread(p, links);
  return 0;
}

char *platform_xml(const struct point *p, const char *dir, char **err) {
  *err = NULL;
  const struct platform_gen *gen = platform_gen_of(p);
  if (!gen) {
    if (!g_file_test(p->platform_file, G_FILE_TEST_IS_REGULAR)) {
      *err = g_strdup_printf("[platform] topology = file:%s: no such file",
                             p->platform_file);
      return NULL;
    }
    return g_strdup(p->platform_file);
  }
  char *path = g_build_filename(dir, "platform.xml", NULL);
  double lat = 0;
  if (link_latency(path, gen, p, &lat, err) != 0 ||
      write_xml(path, gen, p, lat, err) != 0) {
    g_free(path);
    return NULL;
  }
  return path;
}

bool platform_builds(const struct point *p) {
  const struct platform_gen *gen = platform_gen_of(p);
  return gen && gen->build && known_links(gen, p) != 0;
}

void platform_build(const struct point *p) {
  const struct platform_gen *gen = platform_gen_of(p);
  gen->build(p, spread(p, known_links(gen, p)));
}

char **platform_cfg(const struct point *p) {
  GPtrArray *a = g_ptr_array_new();
  if (p->ideal) {
    g_ptr_array_add(a, g_strdup("--cfg=network/model:CM02"));
    g_ptr_array_add(a, g_strdup("--cfg=network/crosstraffic:0"));
    /* No TCP window bound. Not TCP-gamma:0, which SimGrid 3.32 reads as
     * "no bound at all" and so also drops the rate bound of a comm on a
     * route with latency (comm_rate.cpp needs it); a window of 1e30
     * bytes bounds nothing either. */
    g_ptr_array_add(a, g_strdup("--cfg=network/TCP-gamma:1e30"));
  }
  /* Events closer in time than this are taken together (SimGrid's and
   * SMPI's default: 1e-9 s). */
  g_ptr_array_add(a, g_strdup_printf("--cfg=surf/precision:%.17g",
                                     p->timing_precision_s));
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

static int cmp_name(const void *a, const void *b) {
  return platform_name_cmp(*(char *const *)a, *(char *const *)b);
}

int platform_host_names(const struct point *p, char ***names, char **err) {
  *err = NULL;
  const struct platform_gen *gen = platform_gen_of(p);
  if (!gen) {
    struct platform_probe pr;
    if (platform_probe(p->platform_file, &pr, err) != 0)
      return -1;
    *names = pr.names;
    return 0;
  }
  int n = gen->host_count(p);
  char **v = g_new0(char *, n + 1);
  char name[64];
  for (int i = 0; i < n; i++) {
    gen->host_name(p, i, name, sizeof name);
    v[i] = g_strdup(name);
  }
  *names = v;
  return 0;
}

/* The names of the hosts workers and aggregators take, in order
 * (g_strfreev): [platform] hosts, else a generated platform's own order
 * (h0, h1, ...; GPUs first), else a file's hosts in the natural order of
 * their names. After the platform is loaded. */
static char **host_order(const struct point *p) {
  if (p->hosts)
    return g_strdupv(p->hosts);
  char **names = NULL, *err = NULL;
  if (platform_gen_of(p) && platform_host_names(p, &names, &err) == 0)
    return names;
  sg_host_t *all = sg_host_list();
  size_t n = sg_host_count();
  names = g_new0(char *, n + 1);
  for (size_t i = 0; i < n; i++)
    names[i] = g_strdup(sg_host_get_name(all[i]));
  xbt_free(all);
  qsort(names, n, sizeof *names, cmp_name);
  return names;
}

int platform_hosts(const struct point *p, sg_host_t **workers,
                   sg_host_t **aggregators, char **err) {
  *err = NULL;
  size_t need = (size_t)(p->nodes + p->aggregators);
  char **order = host_order(p);
  size_t count = g_strv_length(order);
  int rc = 0;
  if (count < need) {
    *err = g_strdup_printf("platform %s has %zu hosts; [platform] nodes = "
                           "%d and aggregators = %d need %zu",
                           p->platform_file ? p->platform_file : "", count,
                           p->nodes, p->aggregators, need);
    rc = -1;
  }
  sg_host_t *w = g_new0(sg_host_t, p->nodes);
  sg_host_t *a = g_new0(sg_host_t, p->aggregators ? p->aggregators : 1);
  for (size_t i = 0; i < need && rc == 0; i++) {
    sg_host_t h = sg_host_by_name(order[i]);
    if (!h) {
      *err = g_strdup_printf("[platform] hosts = %s: no host '%s' on the "
                             "platform",
                             p->hosts_file, order[i]);
      rc = -1;
    } else if (i < (size_t)p->nodes) {
      w[i] = h;
    } else {
      a[i - (size_t)p->nodes] = h;
    }
  }
  g_strfreev(order);
  if (rc) {
    g_free(w);
    g_free(a);
    return -1;
  }
  *workers = w;
  *aggregators = a;
  return 0;
}
