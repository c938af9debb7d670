/* models/server.c: a shared-pull parameter server's step (server.h). */
#include "server.h"

#include <string.h>

void server_momentum(float *vel, const float *sum, size_t n, double m) {
  float mom = (float)m;
  for (size_t i = 0; i < n; i++)
    vel[i] = mom * vel[i] + sum[i];
}

ptrdiff_t server_pull(codec_state_t *st, float *sum, float *vel, size_t n,
                      double m, void *out, size_t cap) {
  const float *pull = sum;
  if (vel) {
    server_momentum(vel, sum, n, m);
    pull = vel;
  }
  ptrdiff_t len = codec_encode(st, pull, n, out, cap);
  if (n)
    memset(sum, 0, n * sizeof *sum);
  return len;
}
