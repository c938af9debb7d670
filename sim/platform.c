/* sim/platform.c: platform generators and host lookup (platform.h). */
#include "platform.h"

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/asserts.h>
#include <xbt/log.h>
#include <xbt/sysdep.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

XBT_LOG_NEW_DEFAULT_SUBCATEGORY(gs_platform, gradsim, "platforms");

static int hosts_total(const struct point *p) {
  return p->nodes + p->aggregators;
}

/* <cluster> based topologies: star, fat-tree, dragonfly. Hosts h0..hN-1,
 * workers first. Returns the number of hosts created. */
static int write_cluster(FILE *f, const struct point *p) {
  int h = hosts_total(p);
  const char *topo = "";
  char params[128] = "";
  int hosts = h;
  if (p->topology == TOPO_FAT_TREE) {
    /* Two levels: leaf switches of `leaf` hosts; each leaf has U uplinks
     * (one per spine) so that its down/up capacity ratio is the
     * oversubscription; every spine reaches every leaf. */
    int leaf = p->leaf < h ? p->leaf : h;
    int leaves = (h + leaf - 1) / leaf;
    int up = (int)lround(leaf / p->oversubscription);
    up = up < 1 ? 1 : up;
    hosts = leaf * leaves;
    topo = " topology=\"FAT_TREE\"";
    snprintf(params, sizeof params, " topo_parameters=\"2;%d,%d;1,%d;1,1\"",
             leaf, leaves, up);
  } else if (p->topology == TOPO_DRAGONFLY) {
    /* Cray Cascade shape (SimGrid's DRAGONFLY): N hosts per router, 4
     * routers per chassis, 4 chassis per group, as many groups as
     * needed, one link between each pair of routers and groups. */
    int n = p->group_size, routers = 4, chassis = 4;
    int groups = (h + n * routers * chassis - 1) / (n * routers * chassis);
    groups = groups < 1 ? 1 : groups;
    hosts = groups * chassis * routers * n;
    topo = " topology=\"DRAGONFLY\"";
    snprintf(params, sizeof params,
             " topo_parameters=\"%d,1;%d,1;%d,1;%d\"", groups, chassis,
             routers, n);
  }
  /* Star: the latency is split over the two host links of every route;
   * the others get theirs after loading (platform_hosts). */
  double lat = p->topology == TOPO_STAR ? p->latency_s / 2 : 0;
  fprintf(f,
          "  <cluster id=\"cluster\" prefix=\"h\" suffix=\"\" "
          "radical=\"0-%d\" speed=\"%df\" bw=\"%.17gBps\" lat=\"%.17gs\" "
          "sharing_policy=\"SPLITDUPLEX\"%s%s/>\n",
          hosts - 1, PLATFORM_SPEED, p->bandwidth_Bps, lat, topo, params);
  return hosts;
}

/* GradientFlow's machines (seeds/003 Section 2.3.2): G GPUs per node, S
 * under each PCIe switch, the switches under the node's root complex, one
 * NIC per node into a switched fabric. Workers are the GPUs w0..wN-1. */
static void write_gpu_cluster(FILE *f, const struct point *p) {
  int g = p->gpus_per_node, s = p->gpus_per_switch;
  int nodes = p->nodes / g;
  double pl = p->pcie_latency_s / 2;
  /* `latency` is GPU to GPU between machines: a PCIe hop out (pl), the
   * two NIC links, a PCIe hop in (pl). */
  double nic_lat = (p->latency_s - p->pcie_latency_s) / 2;
  nic_lat = nic_lat > 0 ? nic_lat : 0;
  fprintf(f, "  <zone id=\"fabric\" routing=\"Full\">\n");
  for (int n = 0; n < nodes; n++) {
    fprintf(f, "    <zone id=\"n%d\" routing=\"Full\">\n", n);
    for (int i = 0; i < g; i++)
      fprintf(f, "      <host id=\"w%d\" speed=\"%df\"/>\n", n * g + i,
              PLATFORM_SPEED);
    fprintf(f, "      <router id=\"n%d-root\"/>\n", n);
    for (int i = 0; i < g; i++)
      fprintf(f,
              "      <link id=\"n%d-g%d\" bandwidth=\"%.17gBps\" "
              "latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n",
              n, i, p->pcie_Bps, pl);
    for (int i = 0; i < g / s; i++)
      fprintf(f,
              "      <link id=\"n%d-s%d\" bandwidth=\"%.17gBps\" "
              "latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
              n, i, p->pcie_Bps);
    for (int a = 0; a < g; a++) {
      for (int b = 0; b < g; b++) {
        if (a == b)
          continue;
        fprintf(f,
                "      <route src=\"w%d\" dst=\"w%d\" symmetrical=\"NO\">"
                "<link_ctn id=\"n%d-g%d\" direction=\"UP\"/>",
                n * g + a, n * g + b, n, a);
        if (a / s != b / s)
          fprintf(f,
                  "<link_ctn id=\"n%d-s%d\" direction=\"UP\"/>"
                  "<link_ctn id=\"n%d-s%d\" direction=\"DOWN\"/>",
                  n, a / s, n, b / s);
        fprintf(f, "<link_ctn id=\"n%d-g%d\" direction=\"DOWN\"/></route>\n",
                n, b);
      }
      fprintf(f,
              "      <route src=\"w%d\" dst=\"n%d-root\" symmetrical=\"NO\">"
              "<link_ctn id=\"n%d-g%d\" direction=\"UP\"/>"
              "<link_ctn id=\"n%d-s%d\" direction=\"UP\"/></route>\n",
              n * g + a, n, n, a, n, a / s);
      fprintf(f,
              "      <route src=\"n%d-root\" dst=\"w%d\" symmetrical=\"NO\">"
              "<link_ctn id=\"n%d-s%d\" direction=\"DOWN\"/>"
              "<link_ctn id=\"n%d-g%d\" direction=\"DOWN\"/></route>\n",
              n, n * g + a, n, a / s, n, a);
    }
    fprintf(f, "    </zone>\n");
  }
  /* Aggregators, if any, hang off the fabric like a node. */
  if (p->aggregators) {
    fprintf(f, "    <zone id=\"aggr\" routing=\"Full\">\n");
    for (int a = 0; a < p->aggregators; a++)
      fprintf(f, "      <host id=\"a%d\" speed=\"%df\"/>\n", a,
              PLATFORM_SPEED);
    fprintf(f, "    </zone>\n");
  }
  for (int n = 0; n < nodes; n++)
    fprintf(f,
            "    <link id=\"nic%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
            "sharing_policy=\"SPLITDUPLEX\"/>\n",
            n, p->bandwidth_Bps, nic_lat);
  for (int a = 0; a < p->aggregators; a++)
    fprintf(f,
            "    <link id=\"nica%d\" bandwidth=\"%.17gBps\" "
            "latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n",
            a, p->bandwidth_Bps, nic_lat);
  for (int a = 0; a < nodes; a++)
    for (int b = 0; b < nodes; b++)
      if (a != b)
        fprintf(f,
                "    <zoneRoute src=\"n%d\" dst=\"n%d\" gw_src=\"n%d-root\" "
                "gw_dst=\"n%d-root\" symmetrical=\"NO\"><link_ctn "
                "id=\"nic%d\" direction=\"UP\"/><link_ctn id=\"nic%d\" "
                "direction=\"DOWN\"/></zoneRoute>\n",
                a, b, a, b, a, b);
  /* Aggregator hosts route straight to the nodes' roots. */
  for (int a = 0; a < p->aggregators; a++)
    for (int n = 0; n < nodes; n++) {
      fprintf(f,
              "    <zoneRoute src=\"aggr\" dst=\"n%d\" gw_src=\"a%d\" "
              "gw_dst=\"n%d-root\" symmetrical=\"NO\"><link_ctn id=\"nica%d\" "
              "direction=\"UP\"/><link_ctn id=\"nic%d\" direction=\"DOWN\"/>"
              "</zoneRoute>\n",
              n, a, n, a, n);
      fprintf(f,
              "    <zoneRoute src=\"n%d\" dst=\"aggr\" gw_src=\"n%d-root\" "
              "gw_dst=\"a%d\" symmetrical=\"NO\"><link_ctn id=\"nic%d\" "
              "direction=\"UP\"/><link_ctn id=\"nica%d\" direction=\"DOWN\"/>"
              "</zoneRoute>\n",
              n, n, a, n, a);
    }
  fprintf(f, "  </zone>\n");
}

char *platform_xml(const struct point *p, const char *dir, char **err) {
  *err = NULL;
  if (p->topology == TOPO_FILE) {
    if (!g_file_test(p->platform_file, G_FILE_TEST_IS_REGULAR)) {
      *err = g_strdup_printf("[platform] topology = file:%s: no such file",
                             p->platform_file);
      return NULL;
    }
    return g_strdup(p->platform_file);
  }
  if (p->topology == TOPO_GPU && p->aggregators > 1) {
    *err = g_strdup("[platform] gpu-cluster takes at most one aggregator");
    return NULL;
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
  if (p->topology == TOPO_GPU)
    write_gpu_cluster(f, p);
  else
    write_cluster(f, p);
  fprintf(f, "</platform>\n");
  if (fclose(f) != 0) {
    *err = g_strdup_printf("cannot write %s", path);
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

/* Spread `latency` over the links of the longest route on generated
 * multi-hop topologies: every link gets latency / L, where L is the
 * number of links from the first to the last host (which sit under
 * different top-level switches or groups). */
static void spread_latency(const struct point *p, sg_host_t a,
                           sg_host_t b) {
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(a, b, route);
  unsigned long len = xbt_dynar_length(route);
  xbt_dynar_free(&route);
  if (len == 0)
    return;
  double lat = p->latency_s / (double)len;
  sg_link_t *links = sg_link_list();
  for (size_t i = 0; i < sg_link_count(); i++)
    sg_link_set_latency(links[i], lat);
  xbt_free(links);
  XBT_VERB("latency %g s over %lu links of the longest route", p->latency_s,
           len);
}

int platform_hosts(const struct point *p, sg_host_t **workers,
                   sg_host_t **aggregators, char **err) {
  *err = NULL;
  size_t count = sg_host_count();
  sg_host_t *w = g_new0(sg_host_t, p->nodes);
  sg_host_t *a = g_new0(sg_host_t, p->aggregators ? p->aggregators : 1);
  int rc = 0;
  if (p->topology == TOPO_FILE) {
    /* Workers take the hosts in SimGrid's order, aggregators the next. */
    if (count < (size_t)hosts_total(p)) {
      *err = g_strdup_printf("platform %s has %zu hosts; [platform] nodes = "
                             "%d and aggregators = %d need %d",
                             p->platform_file, count, p->nodes,
                             p->aggregators, hosts_total(p));
      rc = -1;
    } else {
      sg_host_t *all = sg_host_list();
      for (int i = 0; i < p->nodes; i++)
        w[i] = all[i];
      for (int i = 0; i < p->aggregators; i++)
        a[i] = all[p->nodes + i];
      xbt_free(all);
    }
  } else {
    char name[32];
    for (int i = 0; i < p->nodes && !rc; i++) {
      snprintf(name, sizeof name, p->topology == TOPO_GPU ? "w%d" : "h%d",
               i);
      w[i] = sg_host_by_name(name);
      rc = w[i] ? 0 : -1;
    }
    for (int i = 0; i < p->aggregators && !rc; i++) {
      if (p->topology == TOPO_GPU)
        snprintf(name, sizeof name, "a%d", i);
      else
        snprintf(name, sizeof name, "h%d", p->nodes + i);
      a[i] = sg_host_by_name(name);
      rc = a[i] ? 0 : -1;
    }
    if (rc)
      *err = g_strdup("internal error: a generated host is missing");
    else if (p->topology == TOPO_FAT_TREE || p->topology == TOPO_DRAGONFLY) {
      sg_host_t *all = sg_host_list();
      spread_latency(p, all[0], all[count - 1]);
      xbt_free(all);
    }
  }
  if (rc) {
    g_free(w);
    g_free(a);
    return -1;
  }
  *workers = w;
  *aggregators = a;
  return 0;
}

/* ---- platform files ------------------------------------------------------ */

static void no_element(GMarkupParseContext *ctx, const gchar *name,
                       const gchar **an, const gchar **av, gpointer data,
                       GError **error) {
  (void)ctx, (void)name, (void)an, (void)av, (void)data, (void)error;
}

int platform_file_check(const char *path, size_t *hosts, char **err) {
  *err = NULL;
  gchar *text = NULL;
  gsize len = 0;
  GError *ge = NULL;
  if (!g_file_get_contents(path, &text, &len, &ge)) {
    *err = g_strdup_printf("[platform] topology = file:%s: %s", path,
                           ge->message);
    g_error_free(ge);
    return -1;
  }
  /* Well-formed XML first, for a message with a line number. GMarkup
   * does not know DOCTYPE lines: skip the prolog up to the root. */
  const char *root = strstr(text, "<platform");
  GMarkupParser parser = {no_element, NULL, NULL, NULL, NULL};
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, NULL, NULL);
  bool ok = root && g_markup_parse_context_parse(ctx, root, -1, &ge) &&
            g_markup_parse_context_end_parse(ctx, &ge);
  if (!ok) {
    int line = 1;
    for (const char *c = text; root && c < root; c++)
      line += *c == '\n';
    *err = root ? g_strdup_printf("[platform] topology = file:%s: malformed "
                                  "XML (from line %d, its <platform> "
                                  "element): %s",
                                  path, line, ge ? ge->message : "?")
                : g_strdup_printf("[platform] topology = file:%s: no "
                                  "<platform> element: not a SimGrid "
                                  "platform file",
                                  path);
  }
  if (ge)
    g_error_free(ge);
  g_markup_parse_context_free(ctx);
  g_free(text);
  if (!ok)
    return -1;
  /* Then SimGrid itself, in a child: the host count comes back through
   * one pipe, SimGrid's complaint (if any) through its stderr. */
  int fd[2], efd[2];
  if (pipe(fd) != 0 || pipe(efd) != 0) {
    *err = g_strdup_printf("cannot check %s: %s", path, g_strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    *err = g_strdup_printf("cannot check %s: %s", path, g_strerror(errno));
    close(fd[0]), close(fd[1]), close(efd[0]), close(efd[1]);
    return -1;
  }
  if (pid == 0) {
    close(fd[0]);
    close(efd[0]);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, 1);
    dup2(efd[1], 2);
    int argc = 2;
    char *argv[] = {(char *)"gradsim", (char *)"--log=root.thres:error",
                    NULL};
    simgrid_init(&argc, argv);
    simgrid_load_platform(path);
    size_t n = sg_host_count();
    ssize_t w = write(fd[1], &n, sizeof n);
    _exit(w == (ssize_t)sizeof n ? 0 : 1);
  }
  close(fd[1]);
  close(efd[1]);
  size_t n = 0;
  ssize_t got = read(fd[0], &n, sizeof n);
  close(fd[0]);
  GString *why = g_string_new(NULL);
  char buf[4096];
  ssize_t r;
  while ((r = read(efd[0], buf, sizeof buf)) > 0 && why->len < 65536)
    g_string_append_len(why, buf, r);
  close(efd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (got != (ssize_t)sizeof n || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    /* SimGrid's first error line, without its "[time] file: [cat/ERROR]"
     * prefix. */
    char *reason = NULL;
    char **lines = g_strsplit(why->str, "\n", -1);
    for (char **l = lines; *l && !reason; l++) {
      const char *tag = strstr(*l, "ERROR] ");
      if (!tag)
        tag = strstr(*l, "CRITICAL] ");
      if (tag)
        reason = g_strdup(strchr(tag, ' ') + 1);
    }
    g_strfreev(lines);
    *err = g_strdup_printf(
        "[platform] topology = file:%s: SimGrid cannot load it: %s%s", path,
        reason ? reason : "not a valid SimGrid platform (simgrid.dtd, "
                          "version 4.1)",
        reason && strstr(reason, "prolog")
            ? " (SimGrid needs the line <!DOCTYPE platform SYSTEM "
              "\"https://simgrid.org/simgrid.dtd\"> before <platform>)"
            : "");
    g_free(reason);
    g_string_free(why, TRUE);
    return -1;
  }
  g_string_free(why, TRUE);
  *hosts = n;
  return 0;
}
