/* models/nccl_tuner.c: tuner plugins that override NCCL's choice
 * (nccl.h). AWS's region tuner for p5 and p5e: aws/aws-ofi-nccl v1.16.3,
 * src/tuner/nccl_ofi_regions.cpp (region_init_internal_p5_p5e, its
 * eight-ranks-a-node allreduce table; is_inside_region; extend_region;
 * region_get_coll_info_internal_v3). A region is a polygon in the plane
 * of a call's bytes and the communicator's ranks; the first region, in
 * the table's order, whose pair NCCL can run and which holds the call
 * (its edges included) names the algorithm and protocol. */
#include "nccl.h"

#include <errno.h>
#include <math.h>

/* The plane's far corner (TUNER_MAX_SIZE, TUNER_MAX_RANKS). */
#define MAX_BYTES (100.0 * 1024 * 1024 * 1024)
#define MAX_RANKS (1024.0 * 1024)
#define MAX_VERTICES 20

struct pt {
  double x, y; /* bytes, ranks */
};

struct region {
  enum nccl_algo algo;
  enum nccl_proto proto;
  int n;
  struct pt v[MAX_VERTICES];
};

static struct pt sub(struct pt a, struct pt b) {
  return (struct pt){a.x - b.x, a.y - b.y};
}
static double cross(struct pt a, struct pt b) { return a.x * b.y - a.y * b.x; }

/* Where the line through A and B leaves the plane towards its far
 * corner: at the corner's x, or at its y if the line reaches that
 * first. */
static struct pt extend(struct pt a, struct pt b) {
  if (a.x == b.x)
    return (struct pt){a.x, MAX_RANKS};
  if (a.y == b.y)
    return (struct pt){MAX_BYTES, a.y};
  double m = (a.y - b.y) / (a.x - b.x), c = b.y - m * b.x;
  double y = m * MAX_BYTES + c;
  return y < MAX_RANKS ? (struct pt){MAX_BYTES, y}
                       : (struct pt){(MAX_RANKS - c) / m, MAX_RANKS};
}

/* Whether segment X0-X1 crosses segment Y0-Y1: 1 inside both, 0 at an
 * end of Y0-Y1 (or the two parallel), -1 not at all; *AT the crossing of
 * the two lines. */
static int crosses(struct pt x0, struct pt x1, struct pt y0, struct pt y1,
                   double eps, struct pt *at) {
  struct pt dx = sub(x1, x0), dy = sub(y1, y0);
  double d = cross(dy, dx);
  if (fabs(d) < eps)
    return 0;
  double s = (cross(x0, dx) - cross(y0, dx)) / d;
  if (at)
    *at = (struct pt){y0.x + s * dy.x, y0.y + s * dy.y};
  if (s < -eps || s > 1 + eps)
    return -1;
  if (s < eps || s > 1 - eps)
    return 0;
  s = (cross(x0, dy) - cross(y0, dy)) / d;
  return s < 0 || s > 1 ? -1 : 1;
}

/* P's distance to segment Y0-Y1 along the segment's normal (infinite
 * where the foot falls outside it, or the segment has no length). */
static double edge_distance(struct pt p, struct pt y0, struct pt y1) {
  struct pt dy = sub(y1, y0), at = {INFINITY, INFINITY};
  if (dy.x == 0 && dy.y == 0)
    return INFINITY;
  if (crosses(p, (struct pt){p.x + dy.y, p.y - dy.x}, y0, y1, 1e-10, &at) < 0)
    return INFINITY;
  return hypot(at.x - p.x, at.y - p.y);
}

/* Whether region R holds P, its edges included: on an edge, inside its
 * bounding box, then by the parity of the edges a ray to beyond the
 * plane's corner crosses. */
static bool holds(const struct region *r, struct pt p) {
  const double eps = 1e-10;
  for (int i = 0; i < r->n; i++)
    if (edge_distance(p, r->v[i], r->v[(i + 1) % r->n]) < eps)
      return true;
  double x0 = r->v[0].x, x1 = x0, y0 = r->v[1].y, y1 = y0;
  for (int i = 0; i < r->n; i++) {
    x0 = fmin(x0, r->v[i].x);
    x1 = fmax(x1, r->v[i].x);
    y0 = fmin(y0, r->v[i].y);
    y1 = fmax(y1, r->v[i].y);
  }
  if (p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1)
    return false;
  struct pt far = {2 * MAX_BYTES, 2 * MAX_RANKS};
  int n = 0;
  for (int i = 0; i < r->n; i++)
    n += crosses(p, far, r->v[i], r->v[(i + 1) % r->n], eps, NULL) == 1;
  return n & 1;
}

#define P(x, y) ((struct pt){(x), (y)})

/* p5 and p5e, eight ranks a node, allreduce (v1.16.3's table as it is,
 * in its order). */
static int aws_p5_allreduce(struct region r[]) {
  struct pt tree_ll128 = extend(P(402653184, 2048), P(402653184, 4096));
  struct pt nvlstree_1 = extend(P(8053063680, 160), P(9663676416, 192));
  struct pt nvlstree_2 = extend(P(402653184, 2048), P(402653184, 4096));
  struct pt ring_simple = extend(P(8053063680, 160), P(9663676416, 192));
  r[0] = (struct region){NCCL_ALGO_TREE,
                         NCCL_PROTO_LL128,
                         12,
                         {P(0, 16), P(31457280, 16), P(37748736, 32),
                          P(117440512, 64), P(301989888, 128),
                          P(301989888, 256), P(335544320, 512),
                          P(536870912, 1024), P(402653184, 2048),
                          P(402653184, 4096), tree_ll128, P(0, tree_ll128.y)}};
  r[1] = (struct region){NCCL_ALGO_NVLS_TREE,
                         NCCL_PROTO_SIMPLE,
                         3,
                         {P(31457281, 16), P(MAX_BYTES, 16), P(31457281, 16)}};
  r[2] = (struct region){NCCL_ALGO_RING,
                         NCCL_PROTO_LL128,
                         11,
                         {P(31457280, 17), P(1073741824, 17), P(2147483648, 64),
                          P(2147483648, 128), P(1342177280, 160),
                          P(2147483648, 256), P(1074790400, 256),
                          P(444596224, 160), P(301989888, 128),
                          P(117440512, 64), P(37748736, 32)}};
  r[3] = (struct region){
      NCCL_ALGO_NVLS_TREE,
      NCCL_PROTO_SIMPLE,
      17,
      {P(2147483648, 128), P(6442450944, 128), P(8053063680, 160),
       P(9663676416, 192), nvlstree_1, nvlstree_2, P(402653184, 4096),
       P(402653184, 2048), P(536870912, 1024), P(335544320, 512),
       P(301989888, 256), P(310378496, 160), P(444596224, 160),
       P(1074790400, 256), P(2684354560, 256), P(2147483648, 224),
       P(1342177280, 160)}};
  r[4] = (struct region){NCCL_ALGO_RING,
                         NCCL_PROTO_SIMPLE,
                         7,
                         {P(1073741824, 17), P(ring_simple.x, 17), ring_simple,
                          P(9663676416, 192), P(8053063680, 160),
                          P(2684354560, 64), P(1610612736, 32)}};
  return 5;
}

int nccl_tuner_pick(const struct nccl_model *m, enum nccl_coll coll,
                    double bytes, enum nccl_algo force_a,
                    enum nccl_proto force_p, struct nccl_choice *out) {
  const struct nccl_comm *c = &m->comm;
  struct region r[5];
  int n = 0;
  switch (c->tuner) {
  case NCCL_TUNER_AWS_P5:
    /* Two machines or fewer, and shapes without a table, are NCCL's. */
    if (c->nnodes > 2 && c->nranks == 8 * c->nnodes &&
        coll == NCCL_COLL_ALLREDUCE)
      n = aws_p5_allreduce(r);
    break;
  case NCCL_TUNER_INTERNAL:
  case NCCL_TUNER_COUNT:
    break;
  }
  struct pt p = {bytes, c->nranks};
  for (int i = 0; i < n; i++) {
    if ((force_a != NCCL_ALGO_AUTO && r[i].algo != force_a) ||
        (force_p != NCCL_PROTO_AUTO && r[i].proto != force_p))
      continue;
    double t = nccl_model_time(m, coll, r[i].algo, r[i].proto, bytes);
    if (t < 0 || !holds(&r[i], p))
      continue;
    out->algo = r[i].algo;
    out->proto = r[i].proto;
    out->time_s = t;
    return 0;
  }
  return -ENOENT;
}
