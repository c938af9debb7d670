/* config/experiment.h: experiments: GLib key files of sections and keys,
 * where a comma-separated value sweeps that key. An experiment expands
 * into points, each a fully typed configuration of one simulation.
 *
 * Every key, its default and its valid values are in docs/run.md
 * ("Experiment keys"); unknown sections and keys are errors. */
#ifndef GRADSIM_CONFIG_EXPERIMENT_H
#define GRADSIM_CONFIG_EXPERIMENT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

void point_free(struct point *p);
/* point_free() as a GDestroyNotify (g_ptr_array_new_with_free_func()). */
void point_free_cb(gpointer p);

struct experiment {
  char *path;
  /* The question the file asks: the first sentence of its leading comment
   * block, its lines joined (experiment_question()); NULL without one. */
  char *question;
  GPtrArray *points; /* struct point *, in sweep order */
  GPtrArray *swept;  /* "section.key" of every swept key, in order */
};

/* Read PATH, apply the SETS ("section.key=value", each a possible sweep),
 * expand every comma-separated value into its combinations (the first
 * swept key varies slowest) and validate each point. Returns NULL on
 * error with a one-line message (file, line or key, the value, what is
 * allowed) in *ERR (g_free'd by the caller). */
struct experiment *experiment_load(const char *path, char **sets,
                                   char **err);

/* The sweep of experiment_load() stops here. */
#define EXPERIMENT_MAX_POINTS ((size_t)100000)

/* experiment_load() of the LEN bytes at DATA (no NUL needed at the end;
 * one inside is an error), named PATH in messages and in the result. A
 * sweep of more than MAX_POINTS points is an error (0: the limit of
 * experiment_load(), EXPERIMENT_MAX_POINTS). */
struct experiment *experiment_load_data(const char *path, const char *data,
                                        size_t len, char **sets,
                                        size_t max_points, char **err);

void experiment_free(struct experiment *e);
/* experiment_free() as a GDestroyNotify. */
void experiment_free_cb(gpointer e);

struct estimate;
/* Check everything about E that can be checked without simulating,
 * before anything is written: each point (run_check(), the size limits
 * of estimate.h, each point's estimate into EST[i] unless EST is NULL),
 * the joined iterations.csv against the memory that holds it, and the
 * platform files (loadable, with enough hosts). Returns 0, or -1 with
 * *ERR ("PATH: point I: what is wrong"). */
int experiment_check(const struct experiment *e, struct estimate *est,
                     char **err);

/* The value of KEY ("section.key") in point P's effective configuration
 * (P->config), "" when it has none (g_free). */
char *point_config_value(const struct point *p, const char *key);

/* The first sentence of the comment block that opens TEXT (the '#' lines
 * before anything else, up to a blank comment line), its lines joined by
 * single spaces: the question an experiment asks, for plot titles. A
 * sentence ends at '?' or '!', or at '.' before a space and a capital
 * letter or at the end, outside parentheses ("Fig. 8" does not end one);
 * closing quotes stay with it. NULL when TEXT opens with no comment
 * (g_free). */
char *experiment_question(const char *text);

/* The key file at PATH read as experiment files are: a key given twice
 * in one section refused (GKeyFile would keep the last silently). NULL
 * with *ERR ("PATH: ..." or "PATH:LINE: ..."). */
GKeyFile *experiment_key_file(const char *path, char **err);

/* Split a swept value into its items. Codec specs hold commas too: an
 * item of the form key=value (no ':') continues the previous item's
 * parameter list, so "none,rgc:ratio=0.01,asq=1,3lc" is three codecs. */
GPtrArray *experiment_split_values(const char *key, const char *value);

#endif
