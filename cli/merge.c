/* cli/merge.c: `gradsim merge OUTDIR DIR...`: the points of one sweep,
 * spread over several result directories (one per machine), joined into
 * OUTDIR as one `gradsim run` of the whole sweep would have written it
 * (sweep_merge() of sweep/sweep.h). */
#include "cli.h"

#include "sweep.h"

int cli_merge(int argc, char **argv) {
  const char *where = "merge";
  char *want = NULL;
  gboolean do_plot = FALSE, quiet = FALSE;
  GOptionEntry opts[] = {
      {"sweep", 0, 0, G_OPTION_ARG_STRING, &want,
       "the sweep to join, where the directories hold several", "ID"},
      {"plot", 'p', 0, G_OPTION_ARG_NONE, &do_plot,
       "draw the sweep with gnuplot: OUTDIR/plot.png and breakdown.png "
       "(and .svg)", NULL},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
       "print no table at the end", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(
      &argc, &argv, "OUTDIR DIR...",
      "Join the points of one sweep from several result directories "
      "(of gradsim run, or gradsim run --point on several machines) "
      "into OUTDIR: its points/ and runs.csv, iterations.csv, "
      "links.csv, nccl.csv and config.txt, in sweep order, as one gradsim run "
      "would have written them.",
      opts);
  if (argc < 3)
    cli_bad_input("%s: expected OUTDIR and at least one result directory "
                  "(see gradsim merge --help)",
                  where);
  const char *out = argv[1];
  cli_output_dir(out, "", where);
  struct sweep_opts o = {.out = out, .jobs = 1, .plot = do_plot};
  struct sweep_report rep;
  char *err = NULL;
  int rc = sweep_merge((const char *const *)argv + 2, argc - 2, want, &o,
                       &rep, &err);
  if (rc != 0)
    cli_exit(rc, "%s: %s", where, err);
  cli_print_report(&rep, out, quiet);
  sweep_report_clear(&rep);
  g_free(want);
  return 0;
}
