/* cli/main.c: `gradsim`, one binary with subcommands. */
#include "cli.h"
#include "inputs.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} commands[] = {
    {"run", cli_run,
     "simulate an experiment (a sweep of points) and write its results"},
    {"merge", cli_merge,
     "join the result directories of a sweep run on several machines"},
    {"reproduce", cli_reproduce,
     "reproduce the seed papers' figures and tables, with a report"},
    {"advise", cli_advise,
     "search configurations for the fastest training of a model on a "
     "cluster"},
    {"platform", cli_platform,
     "write the SimGrid platform XML an experiment point simulates on"},
    {"codec", cli_codec,
     "gradient codecs: list, roundtrip, encode, decode, bench, compare"},
    {"formula", cli_formula,
     "analytic timing models of the seed papers and the collectives"},
    {"gradients", cli_gradients, "write synthetic gradients of a model"},
    {"model", cli_model, "the DNN workloads: list, show"},
};

static void usage(FILE *f) {
  fprintf(f, "Usage: gradsim COMMAND [OPTIONS]\n\n"
             "A discrete-event simulator of data-parallel training with "
             "gradient compression.\n\nCommands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nRun 'gradsim COMMAND --help' for a command's options, "
             "'gradsim --version' for the build.\n");
}

static char *command_names(void) {
  GString *names = g_string_new(NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "", commands[i].name);
  return g_string_free(names, FALSE);
}

int main(int argc, char **argv) {
  if (argc < 2)
    cli_bad_input("missing command (valid: %s; see gradsim --help)",
                  command_names());
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("gradsim %s\n", gradsim_build());
    return 0;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].run(argc - 1, argv + 1);
  cli_bad_input("unknown command '%s' (valid: %s; see gradsim --help)", argv[1],
                command_names());
}
