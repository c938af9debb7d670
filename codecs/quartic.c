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

/* Write (or add) the five values of quartic byte B at column J. */
static inline void put5(float *out, size_t stride, size_t j, unsigned b,
                        const float val[3], bool add) {
  unsigned d[5] = {b / 81, b / 27 % 3, b / 9 % 3, b / 3 % 3, b % 3};
  for (int k = 0; k < 5; k++) {
    if (add)
      out[k * stride + j] += val[d[k]];
    else
      out[k * stride + j] = val[d[k]];
  }
}

/* Column J near the end, where some of the five digits are padding
 * (positions >= N), which must be zero. */
static inline bool put5_tail(float *out, size_t stride, size_t n, size_t j,
                             unsigned b, const float val[3], bool add) {
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
  const float val[3] = {-m, 0.0f, m};
  size_t j = 0;
  for (size_t r = 0; r < len; r++) {
    unsigned b = in[r];
    size_t run = 1;
    if (b >= RUN_MIN) {
      if (!zre)
        return -EBADMSG;
      run = b - RUN_MIN + 2;
      b = ZERO5;
    }
    if (run > L - j)
      return -EBADMSG; /* expands past L bytes */
    for (size_t e = j + run; j < e; j++) {
      if (j < full)
        put5(out, L, j, b, val, add);
      else if (!put5_tail(out, L, n, j, b, val, add))
        return -EBADMSG;
    }
  }
  return j == L ? 0 : -EBADMSG;
}
