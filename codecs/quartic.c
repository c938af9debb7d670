/* codecs/quartic.c: quartic and zero-run decoding, zero-run encoding. */
#include "quartic.h"

#include "codec_impl.h"

enum { ZERO5 = 121, RUN_MIN = 243, RUN_MAX_LEN = 14 };

size_t zre_encode_inplace(unsigned char *buf, size_t len) {
  size_t r = 0, w = 0;
  while (r < len) {
    if (buf[r] != ZERO5) {
      buf[w++] = buf[r++];
      continue;
    }
    size_t k = 1;
    while (r + k < len && buf[r + k] == ZERO5)
      k++;
    r += k;
    for (; k >= 2; k -= k < RUN_MAX_LEN ? k : RUN_MAX_LEN) {
      size_t run = k < RUN_MAX_LEN ? k : RUN_MAX_LEN;
      buf[w++] = (unsigned char)(RUN_MIN + run - 2);
    }
    if (k == 1)
      buf[w++] = ZERO5;
  }
  return w;
}

/* Column J near the end, where some of the five digits are padding
 * (positions >= N), which must be zero. */
static bool put5_tail(float *out, size_t stride, size_t n, size_t j, unsigned b,
                      const float val[3], bool add) {
  unsigned d[5] = {b / 81, b / 27 % 3, b / 9 % 3, b / 3 % 3, b % 3};
  for (size_t k = 0; k < 5; k++) {
    size_t i = k * stride + j;
    if (i >= n) {
      if (d[k] != 0)
        return false;
    } else if (add) {
      out[i] += val[d[k]];
    } else {
      out[i] = val[d[k]];
    }
  }
  return true;
}

int quartic_decode(const unsigned char *in, size_t len, bool zre, float m,
                   float *out, size_t n, bool add) {
  size_t L = quartic_len(n);
  /* Columns j < full have all five digits inside the vector. */
  size_t full = n > 4 * L ? n - 4 * L : 0;
  /* Adding -0.0 leaves every float unchanged (-0.0 + -0.0 is -0.0), so
   * in ADD mode a zero value is an exact no-op, the same whether it is
   * added or skipped as part of a run. */
  const float val[3] = {-m, add ? -0.0f : 0.0f, m};
  /* The five values of every byte, built once per call (243 x 5 floats):
   * decoding a byte is then five loads and five stores. */
  float tab[243][5];
  for (unsigned b = 0; b < 243; b++) {
    unsigned d[5] = {b / 81, b / 27 % 3, b / 9 % 3, b / 3 % 3, b % 3};
    for (int k = 0; k < 5; k++)
      tab[b][k] = val[d[k]];
  }
  float *o[5];
  for (size_t k = 0; k < 5; k++)
    o[k] = out + k * L;
  size_t j = 0;
  for (size_t r = 0; r < len; r++) {
    unsigned b = in[r];
    if (b < RUN_MIN) {
      if (j >= L)
        return -EBADMSG;
      if (j < full) {
        const float *t = tab[b];
        for (int k = 0; k < 5; k++) {
          if (add)
            o[k][j] += t[k];
          else
            o[k][j] = t[k];
        }
      } else if (!put5_tail(out, L, n, j, b, val, add)) {
        return -EBADMSG;
      }
      j++;
      continue;
    }
    if (!zre)
      return -EBADMSG;
    size_t run = b - RUN_MIN + 2;
    if (run > L - j)
      return -EBADMSG; /* expands past L bytes */
    /* A run of zeros: nothing to add, and zero bits to store. */
    size_t e = j + run, body = e < full ? e : full;
    if (!add && j < body)
      for (size_t k = 0; k < 5; k++)
        memset(o[k] + j, 0, (body - j) * sizeof(float));
    for (j = j < body ? body : j; j < e; j++)
      if (!put5_tail(out, L, n, j, ZERO5, val, add))
        return -EBADMSG;
  }
  return j == L ? 0 : -EBADMSG;
}
