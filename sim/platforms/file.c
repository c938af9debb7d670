/* sim/platforms/file.c: platform files (topology = file:PATH) checked
 * before anything is simulated or written (platform_file_check() of
 * engine.h). */
#include "generator.h"

#include <simgrid/engine.h>
#include <simgrid/host.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void no_element(GMarkupParseContext *ctx, const gchar *name,
                       const gchar **an, const gchar **av, gpointer data,
                       GError **error) {
  (void)ctx, (void)name, (void)an, (void)av, (void)data, (void)error;
}

/* PATH is well-formed XML with a <platform> element (GMarkup, for a
 * message with a line number); -1 with *ERR. */
static int check_xml(const char *path, char **err) {
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
  return ok ? 0 : -1;
}

/* In a child process: load PATH in SimGrid, write its host count to FD
 * and SimGrid's complaints to EFD (its stderr). */
static G_NORETURN void load_child(const char *path, int fd, int efd) {
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0)
    dup2(null, 1);
  dup2(efd, 2);
  int argc = 2;
  char *argv[] = {(char *)"gradsim", (char *)"--log=root.thres:error", NULL};
  simgrid_init(&argc, argv);
  simgrid_load_platform(path);
  size_t n = sg_host_count();
  ssize_t w = write(fd, &n, sizeof n);
  _exit(w == (ssize_t)sizeof n ? 0 : 1);
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

/* SimGrid itself loads PATH, in a child (SimGrid starts once per process
 * and aborts on a platform it rejects): the host count comes back through
 * one pipe, SimGrid's complaint (if any) through its stderr. */
static int check_loads(const char *path, size_t *hosts, char **err) {
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
    load_child(path, fd[1], efd[1]);
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
    *err = load_error(path, why->str);
    g_string_free(why, TRUE);
    return -1;
  }
  g_string_free(why, TRUE);
  *hosts = n;
  return 0;
}

int platform_file_check(const char *path, size_t *hosts, char **err) {
  *err = NULL;
  if (check_xml(path, err) != 0)
    return -1;
  return check_loads(path, hosts, err);
}
