/* tests/test_codec_bench.c: models/codec_bench.h on small inputs. No
 * timing is asserted: only that results are filled and consistent, errors
 * are reported, and the cost fit recovers known costs. */
#include "codec_bench.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static codec_bench_t *small_bench(size_t n, size_t flush) {
  struct codec_bench_config cfg = {n, 3, 7, flush, false};
  codec_bench_t *b = NULL;
  cr_assert_eq(codec_bench_create(&cfg, &b), 0);
  cr_assert_not_null(b);
  return b;
}

Test(codec_bench, defaults_are_the_documented_ones) {
  struct codec_bench_config cfg;
  codec_bench_defaults(&cfg);
  cr_expect_eq(cfg.n, (size_t)16777216);
  cr_expect_eq(cfg.runs, 5);
  cr_expect_eq(cfg.seed, 1);
  cr_expect_eq(cfg.flush_bytes, (size_t)256 << 20);
  cr_expect_not(cfg.warm);
}

Test(codec_bench, paper_specs_all_parse) {
  cr_assert_geq(codec_setting_count(), 10);
  for (size_t i = 0; i < codec_setting_count(); i++) {
    codec_t *c;
    char err[CODEC_ERR_MAX];
    cr_expect_eq(codec_create(codec_setting(i), &c, err, sizeof err),
                 0, "%s: %s", codec_setting(i), err);
    codec_free(c);
  }
  cr_expect_null(codec_setting(codec_setting_count()));
}

Test(codec_bench, bad_config_is_einval) {
  codec_bench_t *b = (codec_bench_t *)1;
  struct codec_bench_config cfg = {0, 5, 1, 0, false};
  cr_expect_eq(codec_bench_create(&cfg, &b), -EINVAL);
  cfg.n = 10;
  cfg.runs = 0;
  cr_expect_eq(codec_bench_create(&cfg, &b), -EINVAL);
  cr_expect_eq(codec_bench_create(NULL, &b), -EINVAL);
  codec_bench_free(NULL);
}

Test(codec_bench, measure_fills_the_result) {
  codec_bench_t *b = small_bench(1003, 4096);
  struct codec_bench_result r;
  memset(&r, 0xff, sizeof r);
  char err[256] = "";
  cr_assert_eq(codec_bench_measure(b, "q8", &r, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(r.spec, "q8");
  cr_expect_eq(r.n, 1003);
  /* q8's payload is n + 4 bytes: exactly 8 (n + 4) / n bits a value. */
  cr_expect_float_eq(r.bits_per_value, 8.0 * 1007 / 1003, 1e-9);
  cr_expect(r.encode_gbps > 0 && isfinite(r.encode_gbps));
  cr_expect(r.decode_gbps > 0 && isfinite(r.decode_gbps));
  cr_expect(r.memcpy_gbps > 0 && isfinite(r.memcpy_gbps));
  cr_expect_float_eq(r.encode_x_memcpy, r.encode_gbps / r.memcpy_gbps, 1e-12);
  cr_expect_float_eq(r.decode_x_memcpy, r.decode_gbps / r.memcpy_gbps, 1e-12);
  codec_bench_free(b);
}

/* A codec of two passes gets the bound of its traffic, measured in the
 * same runs, and the encoder's fraction of it; a streaming one none. Warm
 * or with a flush, the results are filled alike. */
Test(codec_bench, bound_for_two_pass_codecs_only) {
  static const struct {
    const char *spec;
    unsigned passes;
  } t[] = {{"onebit", 2}, {"3lc", 2}, {"q8", 2}, {"fp16", 1}, {"topk", 0}};
  for (int warm = 0; warm < 2; warm++) {
    struct codec_bench_config cfg = {5000, 3, 7, 4096, warm};
    codec_bench_t *b = NULL;
    cr_assert_eq(codec_bench_create(&cfg, &b), 0);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
      struct codec_bench_result r;
      memset(&r, 0xff, sizeof r);
      char err[256] = "";
      cr_assert_eq(codec_bench_measure(b, t[i].spec, &r, err, sizeof err), 0,
                   "%s", err);
      cr_expect_eq(r.passes, t[i].passes, "%s", t[i].spec);
      if (t[i].passes >= 2) {
        cr_expect(r.bound_gbps > 0 && isfinite(r.bound_gbps), "%s", t[i].spec);
        cr_expect_float_eq(r.encode_x_bound, r.encode_gbps / r.bound_gbps,
                           1e-12, "%s", t[i].spec);
      } else {
        cr_expect_eq(r.bound_gbps, 0, "%s", t[i].spec);
        cr_expect_eq(r.encode_x_bound, 0, "%s", t[i].spec);
      }
      cr_expect(r.encode_gbps > 0 && r.memcpy_gbps > 0);
    }
    codec_bench_free(b);
  }
}

/* The traffic kernel makes the traffic it states: the residual gets x
 * added once, whatever the passes; x is only read; every payload byte is
 * written (the same bytes over a buffer of zeros and one of 0xff) and
 * nothing past it. */
Test(codec_bench, traffic_reads_writes_what_it_says) {
  size_t n = 10007, bytes = n / 5 + 1;
  float *x = g_new(float, n), *b = g_new(float, n);
  unsigned char *o1 = g_malloc(bytes + 1), *o2 = g_malloc(bytes + 1);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)i - 5000.0f;
  for (unsigned passes = 1; passes <= 3; passes++)
    for (int resid = 0; resid < 2; resid++) {
      unsigned char *o[2] = {o1, o2};
      for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < n; i++)
          b[i] = 0.25f * (float)(i % 7);
        memset(o[k], k ? 0xff : 0, bytes + 1);
        codec_bench_traffic(passes, x, resid ? b : NULL, n, o[k], bytes);
        for (size_t i = 0; i < n; i++) {
          cr_assert_eq(x[i], (float)i - 5000.0f);
          float want = 0.25f * (float)(i % 7) + (resid ? x[i] : 0.0f);
          cr_assert_eq(b[i], want, "passes %u: b[%zu] = %g", passes, i,
                       (double)b[i]);
        }
      }
      cr_assert(memcmp(o1, o2, bytes) == 0, "passes %u resid %d", passes,
                resid);
      cr_assert(o1[bytes] == 0 && o2[bytes] == 0xff, "passes %u resid %d",
                passes, resid);
    }
  g_free(x);
  g_free(b);
  g_free(o1);
  g_free(o2);
}

Test(codec_bench, canonical_spec_in_the_result) {
  codec_bench_t *b = small_bench(64, 0);
  struct codec_bench_result r;
  cr_assert_eq(codec_bench_measure(b, "3lc", &r, NULL, 0), 0);
  cr_expect_str_eq(r.spec, "3lc:s=1,zre=1");
  codec_bench_free(b);
}

Test(codec_bench, bad_spec_is_einval_with_a_message) {
  codec_bench_t *b = small_bench(16, 0);
  struct codec_bench_result r;
  char err[256] = "";
  cr_expect_eq(codec_bench_measure(b, "nosuch", &r, err, sizeof err), -EINVAL);
  cr_expect(strstr(err, "nosuch") != NULL, "message: %s", err);
  cr_expect(strstr(err, "valid") != NULL, "message: %s", err);
  err[0] = '\0';
  cr_expect_eq(codec_bench_measure(b, "trunc:bits=40", &r, err, sizeof err),
               -EINVAL);
  cr_expect(strstr(err, "bits=40") != NULL, "message: %s", err);
  struct codec_cost_line l;
  cr_expect_eq(codec_bench_calibrate(b, "q8:x=1", &l, err, sizeof err),
               -EINVAL);
  codec_bench_free(b);
}

Test(codec_bench, calibrate_fills_a_line) {
  codec_bench_t *b = small_bench(2048, 0);
  struct codec_cost_line l;
  char err[256] = "";
  cr_assert_eq(codec_bench_calibrate(b, "onebit", &l, err, sizeof err), 0, "%s",
               err);
  cr_expect_str_eq(l.spec, "onebit");
  cr_expect(l.encode_ns > 0 && l.decode_ns > 0);
  cr_expect_eq(l.decode_ns_per_byte, 0);
  cr_assert_eq(codec_bench_calibrate(b, "topk:ratio=0.05", &l, err, sizeof err),
               0, "%s", err);
  cr_expect_eq(l.decode_ns, 0, "a sparse codec is charged per byte");
  cr_expect(l.decode_ns_per_byte > 0);
  codec_bench_free(b);
}

/* Timings of a codec whose cost is linear in the values (encode 1.5 ns a
 * value) and in the payload (decode 0.25 ns a byte), with one slow run. */
Test(codec_bench, fit_recovers_a_known_linear_cost) {
  size_t n = 1000000;
  double bytes = 40000;
  double enc[3] = {1.5e-9 * (double)n, 9e-9 * (double)n, 1.5e-9 * (double)n};
  double dec[3] = {0.25e-9 * bytes, 0.25e-9 * bytes, 5e-9 * bytes};
  struct codec_cost_line l;
  codec_bench_fit(enc, dec, 3, n, bytes, true, &l);
  cr_expect_float_eq(l.encode_ns, 1.5, 1e-9);
  cr_expect_float_eq(l.decode_ns_per_byte, 0.25, 1e-9);
  cr_expect_eq(l.decode_ns, 0);
  double enc2[4] = {2e-3, 4e-3, 3e-3, 100e-3};
  double dec2[4] = {1e-3, 1e-3, 1e-3, 1e-3};
  codec_bench_fit(enc2, dec2, 4, n, bytes, false, &l);
  cr_expect_float_eq(l.encode_ns, 3.5, 1e-9, "even count: mean of middles");
  cr_expect_float_eq(l.decode_ns, 1.0, 1e-9);
  cr_expect_eq(l.decode_ns_per_byte, 0);
}

Test(codec_bench, cost_table_has_header_lines_and_shipped_tail) {
  struct codec_cost_line l[2] = {{"q8", 1.25, 0.5, 0},
                                 {"topk:ratio=0.05", 3, 0, 2}};
  char *path = g_build_filename(g_get_tmp_dir(), "gs_codec_bench_XXXXXX", NULL);
  int fd = g_mkstemp(path);
  cr_assert_geq(fd, 0);
  const char *shipped = "cpu fp32 9 9 0\n# GPU model\ngpu fp32 1 1 0\n";
  cr_assert_eq(write(fd, shipped, strlen(shipped)), (ssize_t)strlen(shipped));
  close(fd);
  char *t = codec_bench_cost_table(l, 2, "Test CPU, 2 cores", "2026-01-02",
                                   4096, 5, path);
  cr_expect(strstr(t, "on Test CPU, 2 cores (2026-01-02), 4096 values") != NULL,
            "%s", t);
  cr_expect(strstr(t, "\ncpu q8 1.25 0.5 0\n") != NULL, "%s", t);
  cr_expect(strstr(t, "\ncpu topk:ratio=0.05 3 0 2\n") != NULL, "%s", t);
  cr_expect(strstr(t, "# GPU model\ngpu fp32 1 1 0\n") != NULL, "%s", t);
  cr_expect(strstr(t, "cpu fp32 9 9 0") == NULL, "shipped cpu lines dropped");
  g_free(t);
  g_unlink(path);
  g_free(path);
  t = codec_bench_cost_table(l, 0, "x", "y", 1, 5, "/nonexistent/file");
  cr_expect(strstr(t, "# Codec cost table") == t);
  g_free(t);
}

Test(codec_bench, cpu_name_is_not_empty) {
  char buf[128];
  codec_bench_cpu_name(buf, sizeof buf);
  cr_expect_gt(strlen(buf), 0);
}
