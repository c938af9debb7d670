/* sweep/points.c: a point's result files in OUT/points/ and the child
 * process that simulates it. */
#include "sweep_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <glib/gstdio.h>

const char *const POINT_EXTS[6] = {".iter", ".links", ".nccl",
                                   ".note", ".paje",  ".row"};
enum { EXT_PAJE = 4 };

/* The scratch directory of a point's process: its platform XML, and its
 * result files until they are complete. */
static char *work_dir(const char *out, const struct point *p) {
  return point_file(out, p, ".work");
}

bool point_done(const char *out, const struct point *p) {
  char *row = point_file(out, p, ".row"), *text = NULL;
  char *nccl = point_file(out, p, ".nccl");
  /* A point an older gradsim simulated has no nccl.csv rows. */
  bool done = g_file_get_contents(row, &text, NULL, NULL) &&
              results_row_current(text) &&
              g_file_test(nccl, G_FILE_TEST_EXISTS);
  g_free(text);
  g_free(row);
  g_free(nccl);
  return done;
}

void point_clean(const char *out, const struct point *p) {
  char *work = work_dir(out, p);
  GDir *d = g_dir_open(work, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      char *path = g_build_filename(work, name, NULL);
      g_unlink(path);
      g_free(path);
    }
    g_dir_close(d);
    g_rmdir(work);
  }
  g_free(work);
  if (point_done(out, p))
    return;
  for (size_t i = 0; i < G_N_ELEMENTS(POINT_EXTS); i++) {
    char *path = point_file(out, p, POINT_EXTS[i]);
    g_unlink(path);
    g_free(path);
  }
}

/* Write R's files into the work directory TMP and move them into
 * OUT/points, the row last. */
static bool move_results(const char *out, const char *tmp,
                         const struct point *p, const struct run_result *r,
                         bool trace) {
  char *row = results_row(p, r);
  const char *text[] = {r->iterations->str,     r->links->str, r->calls->str,
                        r->note ? r->note : "", NULL,          row};
  bool ok = true;
  for (size_t i = 0; i < G_N_ELEMENTS(POINT_EXTS) && ok; i++) {
    char *name = g_strconcat(p->hash, POINT_EXTS[i], NULL);
    char *from = g_build_filename(tmp, i == EXT_PAJE ? "trace.paje" : name,
                                  NULL);
    char *to = point_file(out, p, POINT_EXTS[i]);
    if (text[i])
      ok = g_file_set_contents(from, text[i], -1, NULL);
    if (ok && (text[i] || trace))
      ok = g_rename(from, to) == 0;
    g_free(name);
    g_free(from);
    g_free(to);
  }
  g_free(row);
  return ok;
}

/* Test-only (tests/test_sweep.c, tests/cli/test_cli_sweep.sh): with
 * GRADSIM_TEST_HOLD=DIR, a point's process that has simulated its point
 * opens DIR/HASH, if it exists, for reading and reads it to its end
 * before it writes its result files. When DIR/HASH is a FIFO, the
 * process waits there until a writer opens the FIFO and closes it again,
 * so that a test holds points running and stops a sweep at a known state
 * instead of after a sleep. A stop (SIGTERM) still ends the process at
 * once. Unset, as outside the tests: nothing. */
static void test_hold(const struct point *p) {
  const char *dir = g_getenv("GRADSIM_TEST_HOLD");
  if (!dir || !*dir)
    return;
  char *path = g_build_filename(dir, p->hash, NULL);
  int fd = open(path, O_RDONLY);
  g_free(path);
  if (fd < 0)
    return;
  char buf[64];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    ;
  close(fd);
}

/* A stop (SIGTERM) ends the simulation at once but waits for the moves,
 * so that a point's files are all there or none. */
void point_child(const char *out, const struct point *p, bool trace,
                 struct run_progress *progress) {
  run_progress_to(progress);
  char *tmp = work_dir(out, p);
  g_mkdir_with_parents(tmp, 0755);
  struct run_result r;
  char *err = NULL;
  int rc = run_point(p, tmp, trace, &r, &err);
  test_hold(p);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, NULL);
  int status = 0;
  if (rc != 0) {
    char *path = point_file(out, p, ".err");
    g_file_set_contents(path, err ? err : "unknown error", -1, NULL);
    g_free(path);
    status = SWEEP_BAD_INPUT;
  } else {
    status = move_results(out, tmp, p, &r, trace) ? 0 : SWEEP_ENV_FAILURE;
  }
  /* The generated platform is rebuilt on demand. */
  char *xml = g_build_filename(tmp, "platform.xml", NULL);
  g_unlink(xml);
  g_rmdir(tmp);
  fflush(NULL);
  _exit(status);
}
