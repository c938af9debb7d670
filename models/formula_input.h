/* models/formula_input.h: a formula's inputs written as text, and its
 * evaluation over a list of worker counts (`gradsim formula`).
 *
 * Errors: functions return 0 or -EINVAL and write a one-line message
 * (the bad value and what is allowed) into ERR (ERRLEN bytes). */
#ifndef GRADSIM_MODELS_FORMULA_INPUT_H
#define GRADSIM_MODELS_FORMULA_INPUT_H

#include "formula.h"

#include <stddef.h>

/* TEXT as a value of parameter P in P's unit (formula_param_unit()): a
 * time ("5us"), a size ("64MB") or a time per byte ("2.5e-10") as
 * models/units.h reads them, else a plain finite number. *V is in SI
 * units. */
int formula_param_parse(enum formula_param p, const char *text, double *v,
                        char *err, size_t errlen);

/* TEXT as a rate ("10Gbps", "4GBps", units_bandwidth()) given instead of
 * a time per byte (beta, gamma): *S_PER_BYTE = 1 / bytes per second. */
int formula_rate_parse(const char *text, double *s_per_byte, char *err,
                       size_t errlen);

/* Most worker counts one list may hold, and the largest count. */
enum { FORMULA_P_LIST_MAX = 100000, FORMULA_P_MAX = 1000000000 };

/* TEXT as a list of worker counts, comma-separated items each a whole
 * number in 1..FORMULA_P_MAX ("4"), a range of every integer ("2..64") or
 * a geometric range ("2..1024x2": 2, then each value times 2 rounded up,
 * while at most 1024; the factor > 1), at most FORMULA_P_LIST_MAX values
 * in all. *PS (g_free'd by the caller) gets *N >= 1 values, in the order
 * written. */
int formula_p_list_parse(const char *text, double **ps, size_t *n, char *err,
                         size_t errlen);

/* formula_eval() of F with IN, once for each of the NP worker counts PS
 * (IN's own p is ignored), into OUTS[0..NP): all or nothing, so that a
 * caller can check every row before printing any. */
int formula_eval_each(const struct formula *f, const struct formula_in *in,
                      const double *ps, size_t np, struct formula_out *outs,
                      char *err, size_t errlen);

#endif
