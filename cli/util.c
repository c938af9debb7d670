/* cli/util.c: helpers shared by the subcommands. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib/gstdio.h>

static G_NORETURN void vfail(int status, const char *fmt, va_list ap) {
  char *msg = g_strdup_vprintf(fmt, ap);
  /* One line: newlines inside a message (GLib's option errors) become
   * spaces. */
  for (char *p = msg; *p; p++)
    if (*p == '\n')
      *p = ' ';
  fprintf(stderr, "gradsim: %s\n", msg);
  g_free(msg);
  exit(status);
}

void cli_bad_input(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(EXIT_BAD_INPUT, fmt, ap);
}

void cli_env_failure(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(EXIT_ENV_FAILURE, fmt, ap);
}

void cli_parse(int *argc, char ***argv, const char *usage, const char *summary,
               const GOptionEntry *options) {
  GOptionContext *ctx = g_option_context_new(usage);
  g_option_context_set_summary(ctx, summary);
  g_option_context_add_main_entries(ctx, options, NULL);
  GError *err = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &err)) {
    char *msg = g_strdup(err->message);
    g_error_free(err);
    g_option_context_free(ctx);
    cli_bad_input("%s: %s (see --help)", (*argv)[0], msg);
  }
  g_option_context_free(ctx);
}

void cli_no_extra_args(int argc, char **argv, const char *where) {
  if (argc > 1)
    cli_bad_input("%s: unexpected argument '%s' (see --help)", where, argv[1]);
}

bool cli_format_csv(const char *format, const char *where) {
  if (format && strcmp(format, "csv") == 0)
    return true;
  if (format && strcmp(format, "table") != 0)
    cli_bad_input("%s: --format %s: expected table or csv", where, format);
  return false;
}

struct cli_outputs {
  GPtrArray *paths;
  GPtrArray *data;
  GArray *lens;
};

cli_outputs *cli_outputs_new(void) {
  cli_outputs *o = g_new0(cli_outputs, 1);
  o->paths = g_ptr_array_new_with_free_func(g_free);
  o->data = g_ptr_array_new_with_free_func(g_free);
  o->lens = g_array_new(FALSE, FALSE, sizeof(size_t));
  return o;
}

void cli_outputs_add(cli_outputs *o, const char *path, void *data, size_t len) {
  g_ptr_array_add(o->paths, g_strdup(path));
  g_ptr_array_add(o->data, data);
  g_array_append_val(o->lens, len);
}

void cli_outputs_commit(cli_outputs *o) {
  for (guint i = 0; i < o->paths->len; i++) {
    const char *path = g_ptr_array_index(o->paths, i);
    GError *err = NULL;
    if (!g_file_set_contents(path, g_ptr_array_index(o->data, i),
                             (gssize)g_array_index(o->lens, size_t, i), &err)) {
      char *msg = g_strdup(err->message);
      g_error_free(err);
      for (guint j = 0; j < i; j++)
        g_unlink(g_ptr_array_index(o->paths, j));
      cli_env_failure("%s (nothing was written)", msg);
    }
  }
  g_ptr_array_free(o->paths, TRUE);
  g_ptr_array_free(o->data, TRUE);
  g_array_free(o->lens, TRUE);
  g_free(o);
}

double cli_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
