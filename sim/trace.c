/* sim/trace.c: --trace: the workers' state intervals, written as a Paje
 * trace by gradsim itself (SimGrid 3.32's own tracer aborts on
 * split-duplex links). */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>

void sim_trace(struct sim *s, int worker, int side, double t0, double t1,
               int state) {
  if (!s->trace || !(t1 > t0))
    return;
  struct trace_ev ev = {t0, t1, worker, side, state};
  g_array_append_val(s->trace, ev);
}

/* Paje events: a state set at a time; at equal times the ends (back to
 * "none") come first, so that back-to-back intervals show. */
struct paje_set {
  double t;
  int end, worker, side, state;
};

static int paje_cmp(const void *a, const void *b) {
  const struct paje_set *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  if (x->end != y->end)
    return y->end - x->end;
  if (x->worker != y->worker)
    return x->worker - y->worker;
  return x->side - y->side;
}

int sim_trace_write(const struct sim *s, const char *path) {
  static const char *const names[] = {"codec", "comm", "reduce", "idle",
                                      "compute"};
  static const char *const colors[] = {"1 0.6 0", "0 0.4 1", "0.8 0 0.8",
                                       "0.8 0.8 0.8", "0 0.6 0"};
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fputs("%EventDef PajeDefineContainerType 0\n% Alias string\n% Type "
        "string\n% Name string\n%EndEventDef\n"
        "%EventDef PajeDefineStateType 1\n% Alias string\n% Type string\n"
        "% Name string\n%EndEventDef\n"
        "%EventDef PajeDefineEntityValue 2\n% Alias string\n% Type "
        "string\n% Name string\n% Color color\n%EndEventDef\n"
        "%EventDef PajeCreateContainer 3\n% Time date\n% Alias string\n"
        "% Type string\n% Container string\n% Name string\n%EndEventDef\n"
        "%EventDef PajeDestroyContainer 4\n% Time date\n% Type string\n"
        "% Name string\n%EndEventDef\n"
        "%EventDef PajeSetState 5\n% Time date\n% Type string\n"
        "% Container string\n% Value string\n%EndEventDef\n"
        "0 W 0 Worker\n0 T W Timeline\n1 S T State\n",
        f);
  for (int i = 0; i < 5; i++)
    fprintf(f, "2 %s S %s \"%s\"\n", names[i], names[i], colors[i]);
  fprintf(f, "2 none S none \"1 1 1\"\n");
  for (int w = 0; w < s->nworkers; w++) {
    fprintf(f, "3 0 w%d W 0 worker%d\n", w, w);
    fprintf(f, "3 0 w%d-gpu T w%d compute\n3 0 w%d-net T w%d exchange\n",
            w, w, w, w);
  }
  size_t n = s->trace->len;
  struct paje_set *ev = g_new(struct paje_set, 2 * n);
  double end = 0;
  for (size_t i = 0; i < n; i++) {
    const struct trace_ev *e = &g_array_index(s->trace, struct trace_ev, i);
    ev[2 * i] = (struct paje_set){e->t0, 0, e->worker, e->side, e->state};
    ev[2 * i + 1] = (struct paje_set){e->t1, 1, e->worker, e->side, 0};
    end = e->t1 > end ? e->t1 : end;
  }
  qsort(ev, 2 * n, sizeof *ev, paje_cmp);
  for (size_t i = 0; i < 2 * n; i++)
    fprintf(f, "5 %.9f S w%d-%s %s\n", ev[i].t, ev[i].worker,
            ev[i].side ? "net" : "gpu",
            ev[i].end ? "none" : names[ev[i].state]);
  for (int w = 0; w < s->nworkers; w++)
    fprintf(f, "4 %.9f W w%d\n", end, w);
  g_free(ev);
  return fclose(f) == 0 ? 0 : -1;
}
