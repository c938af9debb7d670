/* cli/platform.c: `gradsim platform EXPERIMENT [--set ...] --out FILE`:
 * the SimGrid platform XML of an experiment's point (one point: sweep
 * nothing), so that other tools (SimGrid SMPI, bench/) can run on exactly
 * the same platform. */
#include "cli.h"

#include "experiment.h"
#include "sweep.h"

#include <glib/gstdio.h>

int cli_platform(int argc, char **argv) {
  const char *where = "platform";
  char **sets = NULL, *out = NULL;
  GOptionEntry opts[] = {
      {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets,
       "override a key (section.key=value)", "KEY=V"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "XML file to write",
       "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  cli_parse(&argc, &argv, "EXPERIMENT",
            "Write the SimGrid platform of an experiment point (its hosts "
            "h0, h1, ..., or w0, w1, ... on gpu-cluster and nvswitch: the "
            "workers, then the aggregators).",
            opts);
  if (argc != 2)
    cli_bad_input("%s: expected one experiment file (see gradsim platform "
                  "--help)",
                  where);
  if (!out)
    cli_bad_input("%s: --out FILE is required", where);
  char *err = NULL;
  struct experiment *e = experiment_load(argv[1], sets, &err);
  if (!e)
    cli_bad_input("%s", err);
  if (e->points->len != 1)
    cli_bad_input("%s: %s sweeps %u points; the platform of one point is "
                  "written: fix the swept keys with --set",
                  where, argv[1], e->points->len);
  struct point *p = g_ptr_array_index(e->points, 0);
  char *tmp = g_dir_make_tmp("gradsim-XXXXXX", NULL);
  if (!tmp)
    cli_env_failure("%s: cannot make a temporary directory", where);
  char *xml = platform_xml(p, tmp, &err);
  if (!xml)
    cli_bad_input("%s: %s", argv[1], err);
  gchar *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(xml, &text, &len, NULL))
    cli_env_failure("%s: cannot read %s", where, xml);
  if (p->topology != TOPO_FILE)
    g_unlink(xml);
  g_rmdir(tmp);
  cli_outputs *o = cli_outputs_new();
  cli_outputs_add(o, out, text, len);
  cli_outputs_commit(o);
  g_free(xml);
  g_free(tmp);
  experiment_free(e);
  g_free(out);
  g_strfreev(sets);
  return 0;
}
