/* sim/platform.c: the platform of a point (platform.h): its XML from the
 * topology's generator (platforms/) or its own file, SimGrid's network
 * configuration, and which hosts are workers and aggregators. */
#include "platform.h"

#include "platforms/generator.h"

#include <simgrid/host.h>
#include <xbt/sysdep.h>

#include <stdio.h>

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
  FILE *f = fopen(path, "w");
  if (!f) {
    *err = g_strdup_printf("cannot write %s", path);
    g_free(path);
    return NULL;
  }
  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
             "\"https://simgrid.org/simgrid.dtd\">\n<platform "
             "version=\"4.1\">\n");
  int rc = gen->write(f, p, err);
  fprintf(f, "</platform>\n");
  if (fclose(f) != 0 && rc == 0) {
    *err = g_strdup_printf("cannot write %s", path);
    rc = -1;
  }
  if (rc != 0) {
    remove(path);
    g_free(path);
    return NULL;
  }
  return path;
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
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

/* A platform file's hosts: workers take them in SimGrid's order,
 * aggregators the next ones. */
static int file_hosts(const struct point *p, sg_host_t *w, sg_host_t *a,
                      char **err) {
  size_t count = sg_host_count(), need = (size_t)(p->nodes + p->aggregators);
  if (count < need) {
    *err = g_strdup_printf("platform %s has %zu hosts; [platform] nodes = "
                           "%d and aggregators = %d need %zu",
                           p->platform_file, count, p->nodes, p->aggregators,
                           need);
    return -1;
  }
  sg_host_t *all = sg_host_list();
  for (int i = 0; i < p->nodes; i++)
    w[i] = all[i];
  for (int i = 0; i < p->aggregators; i++)
    a[i] = all[p->nodes + i];
  xbt_free(all);
  return 0;
}

/* A generated platform's hosts, by the names its generator gave them. */
static int generated_hosts(const struct point *p,
                           const struct platform_gen *gen, sg_host_t *w,
                           sg_host_t *a, char **err) {
  char name[32];
  for (int i = 0; i < p->nodes + p->aggregators; i++) {
    bool aggr = i >= p->nodes;
    int k = aggr ? i - p->nodes : i;
    gen->host_name(p, aggr, k, name, sizeof name);
    sg_host_t h = sg_host_by_name(name);
    if (!h) {
      *err = g_strdup("internal error: a generated host is missing");
      return -1;
    }
    *(aggr ? &a[k] : &w[k]) = h;
  }
  if (gen->loaded)
    gen->loaded(p);
  return 0;
}

int platform_hosts(const struct point *p, sg_host_t **workers,
                   sg_host_t **aggregators, char **err) {
  *err = NULL;
  sg_host_t *w = g_new0(sg_host_t, p->nodes);
  sg_host_t *a = g_new0(sg_host_t, p->aggregators ? p->aggregators : 1);
  const struct platform_gen *gen = platform_gen_of(p);
  int rc = gen ? generated_hosts(p, gen, w, a, err) : file_hosts(p, w, a, err);
  if (rc) {
    g_free(w);
    g_free(a);
    return -1;
  }
  *workers = w;
  *aggregators = a;
  return 0;
}
