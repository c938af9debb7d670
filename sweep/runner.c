/* sweep/runner.c: a sweep's points run in processes of their own, and
 * the sweep's entry points (sweep.h). */
#include "sweep_impl.h"

#include "estimate.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <glib/gstdio.h>

/* ---- stopping a sweep ---------------------------------------------------
 * SIGINT and SIGTERM ask a sweep to stop: the handler records the signal,
 * the loop that runs the points stops the running ones (SIGTERM), removes
 * their partial files and returns 128 + the signal. The signals are
 * blocked except while the loop waits (sigsuspend), so none is missed
 * between a check and the wait. A signal ignored when gradsim started
 * (a background job of a shell) stays ignored. A process runs one sweep
 * at a time, so the handler's state is the process's. */

/* The stopping signal, or 0: written by the handler only. */
static volatile sig_atomic_t Stop_signal;
/* The progress timer has fired since the last display. */
static volatile sig_atomic_t Tick;

static void on_stop(int sig) { Stop_signal = sig; }
static void on_child(int sig) { (void)sig; }
static void on_tick(int sig) {
  (void)sig;
  Tick = 1;
}

/* SIGALRM: the progress timer (an interval timer is not inherited by a
 * child). */
static const int CAUGHT[] = {SIGINT, SIGTERM, SIGCHLD, SIGALRM};

struct catcher {
  sigset_t mask;      /* the mask before */
  sigset_t wait_mask; /* the mask while waiting: the caught ones open */
  struct sigaction old[G_N_ELEMENTS(CAUGHT)];
  pid_t parent;
};
static struct catcher Catcher;

static void catch_signals(void) {
  struct catcher *c = &Catcher;
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++)
    sigaddset(&set, CAUGHT[i]);
  sigprocmask(SIG_BLOCK, &set, &c->mask);
  c->wait_mask = c->mask;
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++)
    sigdelset(&c->wait_mask, CAUGHT[i]);
  c->parent = getpid();
  Stop_signal = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++) {
    sigaction(CAUGHT[i], NULL, &c->old[i]);
    if (CAUGHT[i] != SIGCHLD && c->old[i].sa_handler == SIG_IGN)
      continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = CAUGHT[i] == SIGCHLD   ? on_child
                    : CAUGHT[i] == SIGALRM ? on_tick
                                           : on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(CAUGHT[i], &sa, NULL);
  }
}

/* A stop that arrived after the last point (while the outputs were
 * written) is delivered to the handler, and so ignored: the sweep is
 * complete. */
static void release_signals(void) {
  const struct catcher *c = &Catcher;
  sigprocmask(SIG_SETMASK, &c->mask, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(CAUGHT); i++)
    sigaction(CAUGHT[i], &c->old[i], NULL);
}

/* In a child: the parent decides about interrupts (SIGINT from a
 * terminal reaches the whole process group) and stops it with SIGTERM,
 * which is also sent if the parent dies (killed with SIGKILL). */
static void child_signals(void) {
  const struct catcher *c = &Catcher;
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_DFL);
  sigaction(SIGCHLD, &c->old[2], NULL);
  sigaction(SIGALRM, &c->old[3], NULL);
  sigprocmask(SIG_SETMASK, &c->mask, NULL);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (getppid() != c->parent)
    _exit(1);
}

/* ---- running the points ------------------------------------------------ */

/* A point's process: its point, its slot of the shared progress and
 * when it started. */
struct child {
  struct point *p;
  unsigned index, slot;
  gint64 start_us;
  double bytes; /* its estimated memory */
};

struct runner {
  const struct experiment *e;
  const struct sweep_opts *o;
  guint total, done, next, last;
  GHashTable *running; /* pid -> struct child * */
  char *failure;       /* the first failure's message */
  int fail_status;
  bool stopping;
  /* One struct run_progress per job, in memory shared with the
   * children (NULL without a display). */
  struct run_progress *shared;
  /* The running points' estimated memory, and what it may reach; the
   * estimated memory of point ESTIMATED (the next, held back). */
  double bytes, memory_limit;
  guint estimated;
  double estimated_bytes;
};

static gint by_start(gconstpointer a, gconstpointer b) {
  const struct sweep_running *x = a, *y = b;
  return x->wall_s > y->wall_s ? -1 : x->wall_s < y->wall_s;
}

static void progress(const struct runner *r, bool stopped, bool tick) {
  if (!r->o->progress)
    return;
  GArray *run = g_array_new(FALSE, TRUE, sizeof(struct sweep_running));
  if (r->running && r->shared) {
    gint64 now = g_get_monotonic_time();
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, r->running);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
      const struct child *c = v;
      struct sweep_running x = {c->index, (double)(now - c->start_us) / 1e6,
                                r->shared[c->slot]};
      g_array_append_val(run, x);
    }
    g_array_sort(run, by_start);
  }
  struct sweep_progress sp = {r->done, r->total, stopped, tick, run->len,
                              (const struct sweep_running *)run->data};
  r->o->progress(&sp, r->o->ctx);
  g_array_free(run, TRUE);
}

/* Whether a running point has slot SLOT of the shared progress. */
static bool slot_taken(const struct runner *r, unsigned slot) {
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init(&it, r->running);
  while (g_hash_table_iter_next(&it, NULL, &v))
    if (((const struct child *)v)->slot == slot)
      return true;
  return false;
}

/* A slot no running point has (there is one per job, and fewer points
 * run). */
static unsigned free_slot(const struct runner *r) {
  unsigned i = 0;
  while (slot_taken(r, i))
    i++;
  return i;
}

/* Point I's estimated memory (0 when it cannot be estimated: the checks
 * before the sweep estimated every point), kept while the point waits. */
static double point_bytes(struct runner *r, guint i) {
  if (r->estimated != i) {
    struct estimate est;
    char *err = NULL;
    r->estimated = i;
    r->estimated_bytes = 0;
    if (estimate_point(g_ptr_array_index(r->e->points, i), &est, &err) == 0)
      r->estimated_bytes = est.memory_bytes;
    g_free(err);
  }
  return r->estimated_bytes;
}

/* Whether a point of BYTES may start beside RUNNING points that take
 * HELD: one always may when none runs; else with a job free and their
 * memory together within LIMIT. The runner's rule, and its model's
 * (sweep_schedule_s). */
static bool may_start(unsigned running, unsigned jobs, double held,
                      double bytes, double limit) {
  return running == 0 || (running < jobs && held + bytes <= limit);
}

/* Start points until JOBS run, the next would take the running ones past
 * the memory limit (sweep_opts memory_bytes), or none is left; -1 with
 * R->failure when fork fails. Points start in order, so one held back
 * for memory holds back those after it. */
static int start_points(struct runner *r) {
  while (!r->stopping && !r->failure && r->next < r->last &&
         g_hash_table_size(r->running) < r->o->jobs) {
    struct point *p = g_ptr_array_index(r->e->points, r->next);
    if (point_done(r->o->out, p)) {
      r->next++;
      continue;
    }
    double bytes = point_bytes(r, r->next);
    if (!may_start(g_hash_table_size(r->running), r->o->jobs, r->bytes, bytes,
                   r->memory_limit))
      break;
    unsigned index = r->next++;
    point_clean(r->o->out, p); /* what a killed run left */
    unsigned slot = free_slot(r);
    struct run_progress *shared = r->shared ? &r->shared[slot] : NULL;
    if (shared)
      memset(shared, 0, sizeof *shared);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      r->failure = g_strdup_printf("fork failed: %s", g_strerror(errno));
      r->fail_status = SWEEP_ENV_FAILURE;
      return -1;
    }
    if (pid == 0) {
      child_signals();
      point_child(r->o->out, p, r->o->trace, shared);
    }
    struct child *c = g_new(struct child, 1);
    *c = (struct child){p, index, slot, g_get_monotonic_time(), bytes};
    g_hash_table_insert(r->running, GINT_TO_POINTER(pid), c);
    r->bytes += bytes;
  }
  return 0;
}

/* Point P's process ended with STATUS: done, or the sweep's failure (the
 * point's message for bad input, else how the process ended). A point
 * stopped by our own SIGTERM is no failure. */
static void reap(struct runner *r, struct point *p, int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    r->done++;
    if (!r->stopping)
      progress(r, false, false);
    return;
  }
  char *errf = point_file(r->o->out, p, ".err");
  char *msg = NULL;
  if (g_file_get_contents(errf, &msg, NULL, NULL)) {
    g_unlink(errf);
    if (!r->failure) {
      r->failure = msg;
      r->fail_status = SWEEP_BAD_INPUT;
    } else {
      g_free(msg);
    }
  } else if (!r->failure && !(r->stopping && WIFSIGNALED(status) &&
                              WTERMSIG(status) == SIGTERM)) {
    r->failure = g_strdup_printf(
        "a simulation process ended abnormally (%s %d)",
        WIFSIGNALED(status) ? "signal" : "status",
        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    r->fail_status = SWEEP_ENV_FAILURE;
  }
  g_free(errf);
  point_clean(r->o->out, p);
}

/* On the first stop signal: SIGTERM to every running point. */
static void stop_running(struct runner *r) {
  r->stopping = true;
  GHashTableIter it;
  gpointer pid;
  g_hash_table_iter_init(&it, r->running);
  while (g_hash_table_iter_next(&it, &pid, NULL))
    kill(GPOINTER_TO_INT(pid), SIGTERM);
}

/* Wait for one process to end and reap it; -1 with R->failure when the
 * wait itself fails. */
static int wait_one(struct runner *r) {
  int status;
  pid_t pid = waitpid(-1, &status, WNOHANG);
  if (pid == 0) {
    sigsuspend(&Catcher.wait_mask);
    return 0;
  }
  if (pid < 0) {
    if (errno == EINTR)
      return 0;
    if (!r->failure) {
      r->failure = g_strdup_printf("wait failed: %s", g_strerror(errno));
      r->fail_status = SWEEP_ENV_FAILURE;
    }
    return -1;
  }
  struct child *c = g_hash_table_lookup(r->running, GINT_TO_POINTER(pid));
  if (c) {
    g_hash_table_steal(r->running, GINT_TO_POINTER(pid));
    r->bytes -= c->bytes;
    if (g_hash_table_size(r->running) == 0)
      r->bytes = 0; /* no sum of rounding left over */
    reap(r, c->p, status);
    g_free(c);
  }
  return 0;
}

/* The progress timer: every O->tick_s seconds while points run. */
static void set_timer(double s) {
  struct itimerval t = {{0, 0}, {0, 0}};
  if (s > 0) {
    t.it_value.tv_sec = (time_t)s;
    t.it_value.tv_usec = (suseconds_t)((s - (double)(time_t)s) * 1e6);
    if (!t.it_value.tv_sec && !t.it_value.tv_usec)
      t.it_value.tv_usec = 1000;
    t.it_interval = t.it_value;
  }
  setitimer(ITIMER_REAL, &t, NULL);
}

static double memory_limit_of(double memory_bytes) {
  return memory_bytes > 0
             ? memory_bytes
             : ESTIMATE_MEMORY_FRACTION * estimate_physical_memory();
}

double sweep_schedule_s(const double *wall_s, const double *bytes,
                        const bool *skip, guint n, unsigned jobs,
                        double memory_bytes) {
  double limit = memory_limit_of(memory_bytes), now = 0, held = 0;
  unsigned slots = jobs ? jobs : 1, running = 0;
  double *end = g_new(double, slots), *mem = g_new(double, slots);
  for (guint i = 0; i < n; i++) {
    if (skip && skip[i])
      continue;
    /* As start_points: the next point waits for a slot, then for memory
     * (one point always runs), each wait until the running point that
     * ends first has ended. */
    while (!may_start(running, slots, held, bytes[i], limit)) {
      unsigned first = 0;
      for (unsigned k = 1; k < running; k++)
        if (end[k] < end[first])
          first = k;
      now = fmax(now, end[first]);
      held -= mem[first];
      running--;
      end[first] = end[running];
      mem[first] = mem[running];
    }
    if (running == 0)
      held = 0;
    end[running] = now + wall_s[i];
    mem[running++] = bytes[i];
    held += bytes[i];
  }
  for (unsigned k = 0; k < running; k++)
    now = fmax(now, end[k]);
  g_free(end);
  g_free(mem);
  return now;
}

int runner_points(const struct experiment *e, const struct sweep_opts *o,
                  guint first, guint last, char **err) {
  struct runner r = {.e = e,
                     .o = o,
                     .total = last - first,
                     .next = first,
                     .last = last,
                     .memory_limit = memory_limit_of(o->memory_bytes),
                     .estimated = G_MAXUINT};
  for (guint i = first; i < last; i++)
    r.done += point_done(o->out, g_ptr_array_index(e->points, i));
  progress(&r, false, false);
  r.running = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                    g_free);
  size_t shared_bytes = o->jobs * sizeof(struct run_progress);
  if (o->progress && o->tick_s > 0) {
    void *m = mmap(NULL, shared_bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) /* without it, no progress within points */
      r.shared = m;
    Tick = 0;
    set_timer(o->tick_s);
  }
  for (;;) {
    if (Stop_signal && !r.stopping)
      stop_running(&r);
    if (Tick && !r.stopping) {
      Tick = 0;
      progress(&r, false, true);
    }
    if (start_points(&r) != 0 && !g_hash_table_size(r.running))
      break;
    if (!g_hash_table_size(r.running) || wait_one(&r) != 0)
      break;
  }
  set_timer(0);
  Tick = 0;
  g_hash_table_destroy(r.running);
  r.running = NULL;
  if (r.shared)
    munmap(r.shared, shared_bytes);
  r.shared = NULL;
  if (r.failure || r.stopping)
    progress(&r, true, false);
  if (r.failure) {
    *err = g_strdup_printf("%s: %s", e->path, r.failure);
    g_free(r.failure);
    return r.fail_status;
  }
  if (r.stopping) {
    if (r.total == 1 && e->points->len > 1)
      *err = g_strdup_printf("interrupted: point %u is not done; run again "
                             "to finish",
                             first);
    else
      *err = g_strdup_printf("interrupted: %u of %u points done; run again "
                             "to finish",
                             r.done, r.total);
    return 128 + Stop_signal;
  }
  return 0;
}

/* ---- the sweep's entry points ------------------------------------------ */

void sweep_report_clear(struct sweep_report *r) {
  g_free(r->table);
  g_free(r->notes);
  g_free(r->warnings);
  memset(r, 0, sizeof *r);
}

/* OUT/points and the manifest, before anything is simulated. */
static int prepare(const struct experiment *e, const struct sweep_opts *o,
                   char **err) {
  char *pdir = g_build_filename(o->out, "points", NULL);
  int rc = 0;
  if (g_mkdir_with_parents(pdir, 0755) != 0) {
    *err = g_strdup_printf("cannot create %s: %s", pdir, g_strerror(errno));
    rc = SWEEP_ENV_FAILURE;
  }
  g_free(pdir);
  return rc ? rc : manifest_write(o->out, e, err);
}

int sweep_run(const struct experiment *e, const struct sweep_opts *o,
              struct sweep_report *report, char **err) {
  memset(report, 0, sizeof *report);
  *err = NULL;
  int rc = prepare(e, o, err);
  if (rc)
    return rc;
  catch_signals();
  rc = runner_points(e, o, 0, e->points->len, err);
  if (rc == 0)
    rc = results_join(o->out, e, o->plot, report, err);
  release_signals();
  return rc;
}

/* Points LO..HI-1 of E into O->out/points, no outputs joined. */
static int run_range(const struct experiment *e, const struct sweep_opts *o,
                     guint lo, guint hi, char **err) {
  catch_signals();
  int rc = runner_points(e, o, lo, hi, err);
  release_signals();
  return rc;
}

int sweep_run_point(const struct experiment *e, unsigned index,
                    const struct sweep_opts *o, bool *was_done, char **err) {
  *err = NULL;
  int rc = prepare(e, o, err);
  if (rc)
    return rc;
  *was_done = point_done(o->out, g_ptr_array_index(e->points, index));
  return run_range(e, o, index, index + 1, err);
}

int sweep_run_points(const struct experiment *e, const struct sweep_opts *o,
                     char **err) {
  *err = NULL;
  int rc = prepare(e, o, err);
  return rc ? rc : run_range(e, o, 0, e->points->len, err);
}

bool sweep_point_done(const char *out, const struct point *p) {
  return point_done(out, p);
}

char *sweep_list_points(const struct experiment *e) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < e->points->len; i++) {
    const struct point *p = g_ptr_array_index(e->points, i);
    g_string_append_printf(s, "%u\t%s", i, p->hash);
    for (guint k = 0; k < e->swept->len; k++) {
      const char *key = g_ptr_array_index(e->swept, k);
      char *v = point_config_value(p, key);
      g_string_append_printf(s, "\t%s=%s", key, v);
      g_free(v);
    }
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}
