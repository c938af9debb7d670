/* tests/fuzz/gen_corpus.c: writes the seed corpora of the fuzz harnesses
 * (tests/fuzz/corpus/<harness>/). The seeds are checked in; this program
 * is only needed to regenerate them after a harness's input format or
 * spec table changes. It includes a harness to share its spec table:
 *
 *   cd tests/fuzz
 *   for h in decode roundtrip; do
 *     clang -O1 -DGEN_$(echo $h | tr a-z A-Z) \
 *       -I../../codecs -I../../models \
 *       ../../codecs/[a-z]*.c ../../models/array_io.c gen_corpus.c -lm \
 *       -o /tmp/gen_$h
 *     /tmp/gen_$h corpus
 *   done
 *
 * GEN_DECODE writes the fuzz_decode, fuzz_container and fuzz_npy seeds,
 * GEN_ROUNDTRIP the fuzz_roundtrip ones. Deterministic: the same bytes on
 * every run. */
#if defined(GEN_DECODE)
#include "fuzz_decode.c"
#elif defined(GEN_ROUNDTRIP)
#include "fuzz_roundtrip.c"
#else
#error "define GEN_DECODE or GEN_ROUNDTRIP"
#endif

#include "array_io.h"
#include "container.h"

#include <sys/stat.h>

int main(int argc, char **argv);

/* A gradient-like vector: small values of both signs from a fixed LCG,
 * with runs of zeros (for zero-run encoding) and a few outliers. */
static void gradient(float *x, size_t n, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    float u = (float)(s >> 8) * 0x1p-24f - 0.5f;
    x[i] = u * 0.02f;
    if ((i / 7) % 3 == 1)
      x[i] = 0.0f;
    if (i % 29 == 5)
      x[i] *= 300.0f;
  }
}

static void mkdir_p(const char *dir, const char *sub, char *path, size_t len) {
  snprintf(path, len, "%s", dir);
  mkdir(path, 0755);
  snprintf(path, len, "%s/%s", dir, sub);
  mkdir(path, 0755);
}

static void put_file(const char *dir, const char *name, const void *a,
                     size_t alen, const void *b, size_t blen) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(a, 1, alen, f) != alen ||
      (blen && fwrite(b, 1, blen, f) != blen) || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

/* The spec as a file name: [A-Za-z0-9.-] kept, the rest '_'. */
static void name_of(char *buf, size_t len, const char *spec, const char *tag) {
  char s[CODEC_SPEC_MAX];
  size_t i = 0;
  for (; spec[i] && i + 1 < sizeof s; i++) {
    char ch = spec[i];
    int keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
               (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
    s[i] = keep ? ch : '_';
  }
  s[i] = '\0';
  snprintf(buf, len, "%s-%s", s, tag);
}

/* Encode N gradient values (or zeros) with SPEC; returns the payload
 * length, the payload in BUF (CAP bytes). */
static size_t encode_with(const char *spec, size_t n, bool zeros,
                          unsigned char *buf, size_t cap) {
  codec_t *c;
  char err[CODEC_ERR_MAX];
  if (codec_create(spec, &c, err, sizeof err) != 0) {
    fprintf(stderr, "%s: %s\n", spec, err);
    exit(1);
  }
  float *x = calloc(n, sizeof *x);
  codec_state_t *s;
  if (!x || codec_state_create(c, n, 7, &s) != 0)
    exit(1);
  if (!zeros)
    gradient(x, n, (uint32_t)n);
  ptrdiff_t r = codec_encode(s, x, n, buf, cap);
  if (r < 0) {
    fprintf(stderr, "%s: encode: %s\n", spec, codec_strerror((int)r));
    exit(1);
  }
  codec_state_free(s);
  codec_free(c);
  free(x);
  return (size_t)r;
}

#if defined(GEN_DECODE)

static void gen_decode(const char *root) {
  char dir[1024], name[512];
  mkdir_p(root, "fuzz_decode", dir, sizeof dir);
  static const size_t ns[] = {1, 13, 200};
  unsigned char buf[4096];
  for (size_t i = 0; i < NSPECS; i++)
    for (size_t k = 0; k < 4; k++) {
      size_t n = k < 3 ? ns[k] : 64;
      size_t len = encode_with(SPECS[i], n, k == 3, buf, sizeof buf);
      unsigned char head[3] = {(unsigned char)i, (unsigned char)(n - 1),
                               (unsigned char)((n - 1) >> 8)};
      char tag[32];
      snprintf(tag, sizeof tag, k == 3 ? "zeros%zu" : "n%zu", n);
      name_of(name, sizeof name, SPECS[i], tag);
      put_file(dir, name, head, sizeof head, buf, len);
    }
}

static void gen_container(const char *root) {
  char dir[1024], name[512];
  mkdir_p(root, "fuzz_container", dir, sizeof dir);
  unsigned char buf[4096], box[4096 + 512];
  for (size_t i = 0; i < NSPECS; i++) {
    size_t n = i % 2 ? 13 : 40;
    codec_t *c;
    if (codec_create(SPECS[i], &c, NULL, 0) != 0)
      exit(1);
    size_t len = encode_with(SPECS[i], n, false, buf, sizeof buf);
    ptrdiff_t w = container_write(box, sizeof box, codec_spec(c), n, buf, len);
    if (w < 0)
      exit(1);
    name_of(name, sizeof name, codec_spec(c), "box");
    put_file(dir, name, box, (size_t)w, NULL, 0);
    codec_free(c);
  }
  /* An empty payload, and an unknown spec. */
  ptrdiff_t w = container_write(box, sizeof box, "fp32", 0, NULL, 0);
  put_file(dir, "fp32-empty", box, (size_t)w, NULL, 0);
  w = container_write(box, sizeof box, "nosuchcodec:x=1", 3, "abcdefghijkl",
                      12);
  put_file(dir, "unknown-spec", box, (size_t)w, NULL, 0);
}

static void put_npy(const char *dir, const char *name, unsigned major,
                    const char *dict, const float *x, size_t n) {
  size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
  size_t hl = (pre + dl + 1 + 63) / 64 * 64 - pre;
  unsigned char head[512];
  memcpy(head, "\x93NUMPY", 6);
  head[6] = (unsigned char)major;
  head[7] = 0;
  for (size_t i = 0; i < pre - 8; i++)
    head[8 + i] = (unsigned char)(hl >> (8 * i));
  memset(head + pre, ' ', hl);
  memcpy(head + pre, dict, dl);
  head[pre + hl - 1] = '\n';
  put_file(dir, name, head, pre + hl, x, 4 * n);
}

static void gen_npy(const char *root) {
  char dir[1024];
  mkdir_p(root, "fuzz_npy", dir, sizeof dir);
  float x[60];
  gradient(x, 60, 3);
  static const size_t ns[] = {1, 7, 60};
  for (size_t k = 0; k < 3; k++) {
    unsigned char *b;
    size_t len;
    if (npy_encode(x, ns[k], &b, &len) != 0)
      exit(1);
    char name[32];
    snprintf(name, sizeof name, "v1-n%zu", ns[k]);
    put_file(dir, name, b, len, NULL, 0);
    free(b);
  }
  put_npy(dir, "v2-n6", 2,
          "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", x, 6);
  put_npy(dir, "v3-n6", 3,
          "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", x, 6);
  put_npy(dir, "v1-2d", 1,
          "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", x,
          12);
  put_npy(dir, "v1-fortran-row", 1,
          "{'descr': '|f4', 'fortran_order': True, 'shape': (1, 5), }", x, 5);
  put_npy(dir, "v1-scalar", 1,
          "{'descr': '=f4', 'fortran_order': False, 'shape': (), }", x, 1);
  put_npy(dir, "v1-f8", 1,
          "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", x, 4);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : "corpus";
  gen_decode(root);
  gen_container(root);
  gen_npy(root);
  return 0;
}

#else /* GEN_ROUNDTRIP */

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : "corpus";
  char dir[1024], name[512];
  mkdir_p(root, "fuzz_roundtrip", dir, sizeof dir);
  float x[100];
  for (size_t i = 0; i < NSPECS; i++) {
    size_t n = i % 3 == 0 ? 100 : 24;
    gradient(x, n, (uint32_t)i);
    unsigned sel = (unsigned)(i * 997u);
    unsigned char head[3] = {(unsigned char)i, (unsigned char)sel,
                             (unsigned char)(sel >> 8)};
    char tag[16];
    snprintf(tag, sizeof tag, "n%zu", n);
    name_of(name, sizeof name, SPECS[i], tag);
    put_file(dir, name, head, sizeof head, x, n * sizeof *x);
  }
  (void)encode_with;
  return 0;
}

#endif
