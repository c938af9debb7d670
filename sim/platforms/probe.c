/* sim/platforms/probe.c: a platform as SimGrid sees it (its hosts, the
 * length of its longest route), learnt by loading it in a child process:
 * SimGrid starts once per process and aborts on a platform it rejects
 * (generator.h). */
#include "generator.h"

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>
#include <xbt/sysdep.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int platform_name_cmp(const char *a, const char *b) {
  while (*a && *b) {
    if (g_ascii_isdigit(*a) && g_ascii_isdigit(*b)) {
      const char *x = a, *y = b;
      while (*x == '0')
        x++;
      while (*y == '0')
        y++;
      size_t lx = 0, ly = 0;
      while (g_ascii_isdigit(x[lx]))
        lx++;
      while (g_ascii_isdigit(y[ly]))
        ly++;
      if (lx != ly)
        return lx < ly ? -1 : 1;
      int c = strncmp(x, y, lx);
      if (c)
        return c;
      a = x + lx;
      b = y + ly;
      continue;
    }
    if (*a != *b)
      return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++, b++;
  }
  return *a ? 1 : *b ? -1 : strcmp(a, b);
}

static int cmp_host(const void *a, const void *b) {
  return platform_name_cmp(sg_host_get_name(*(const sg_host_t *)a),
                           sg_host_get_name(*(const sg_host_t *)b));
}

/* The links of the longest route from HOSTS[0] to any other host. */
static int longest_route(sg_host_t *hosts, size_t n) {
  unsigned long longest = 0;
  xbt_dynar_t route = xbt_dynar_new(sizeof(sg_link_t), NULL);
  for (size_t i = 1; i < n; i++) {
    xbt_dynar_reset(route);
    sg_host_get_route(hosts[0], hosts[i], route);
    unsigned long len = xbt_dynar_length(route);
    longest = len > longest ? len : longest;
  }
  xbt_dynar_free(&route);
  return (int)longest;
}

/* In a child process: load XML in SimGrid and write to FD the longest
 * route's link count, then every host name in natural order, a line
 * each; SimGrid's complaints go to EFD (its stderr). */
static G_NORETURN void probe_child(const char *xml, int fd, int efd) {
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0)
    dup2(null, 1);
  dup2(efd, 2);
  int argc = 2;
  char *argv[] = {(char *)"gradsim", (char *)"--log=root.thres:error", NULL};
  simgrid_init(&argc, argv);
  simgrid_load_platform(xml);
  size_t n = sg_host_count();
  sg_host_t *hosts = sg_host_list();
  qsort(hosts, n, sizeof *hosts, cmp_host);
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "%d\n", longest_route(hosts, n));
  for (size_t i = 0; i < n; i++)
    g_string_append_printf(out, "%s\n", sg_host_get_name(hosts[i]));
  const char *c = out->str;
  size_t left = out->len;
  while (left > 0) {
    ssize_t w = write(fd, c, left);
    if (w <= 0)
      _exit(1);
    c += w;
    left -= (size_t)w;
  }
  _exit(0);
}

/* Everything readable from FD. */
static GString *read_all(int fd) {
  GString *s = g_string_new(NULL);
  char buf[4096];
  ssize_t r;
  while ((r = read(fd, buf, sizeof buf)) > 0)
    g_string_append_len(s, buf, r);
  return s;
}

/* SimGrid's first error line in WHY, without its "[time] file:
 * [cat/ERROR]" prefix, as the reason PATH does not load. */
static char *load_error(const char *path, const char *why) {
  char *reason = NULL;
  char **lines = g_strsplit(why, "\n", -1);
  for (char **l = lines; *l && !reason; l++) {
    const char *tag = strstr(*l, "ERROR] ");
    if (!tag)
      tag = strstr(*l, "CRITICAL] ");
    if (tag)
      reason = g_strdup(strchr(tag, ' ') + 1);
  }
  g_strfreev(lines);
  char *msg = g_strdup_printf(
      "[platform] topology = file:%s: SimGrid cannot load it: %s%s", path,
      reason ? reason : "not a valid SimGrid platform (simgrid.dtd, "
                        "version 4.1)",
      reason && strstr(reason, "prolog")
          ? " (SimGrid needs the line <!DOCTYPE platform SYSTEM "
            "\"https://simgrid.org/simgrid.dtd\"> before <platform>)"
          : "");
  g_free(reason);
  return msg;
}

/* The child's answer through one pipe, SimGrid's complaint (if any)
 * through its stderr. */
int platform_probe(const char *path, struct platform_probe *out,
                   char **err) {
  memset(out, 0, sizeof *out);
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
    probe_child(path, fd[1], efd[1]);
  }
  close(fd[1]);
  close(efd[1]);
  GString *got = read_all(fd[0]);
  close(fd[0]);
  GString *why = read_all(efd[0]);
  close(efd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && got->len;
  if (!ok)
    *err = load_error(path, why->str);
  else {
    char **lines = g_strsplit(got->str, "\n", -1);
    out->links = atoi(lines[0]);
    guint n = g_strv_length(lines);
    /* The host names: the lines after the first, the last one empty. */
    out->names = g_new0(char *, n > 1 ? n - 1 : 1);
    for (guint i = 1; i + 1 < n; i++)
      out->names[i - 1] = g_strdup(lines[i]);
    g_strfreev(lines);
  }
  g_string_free(got, TRUE);
  g_string_free(why, TRUE);
  return ok ? 0 : -1;
}

void platform_probe_clear(struct platform_probe *pr) {
  g_strfreev(pr->names);
  memset(pr, 0, sizeof *pr);
}

