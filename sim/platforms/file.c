/* sim/platforms/file.c: platform files (topology = file:PATH) checked
 * before anything is simulated or written (platform_file_check() of
 * engine.h). */
#include "generator.h"

#include <string.h>

static void no_element(GMarkupParseContext *ctx, const gchar *name,
                       const gchar **an, const gchar **av, gpointer data,
                       GError **error) {
  (void)ctx, (void)name, (void)an, (void)av, (void)data, (void)error;
}

/* PATH is well-formed XML with a <platform> element (GMarkup, for a
 * message with a line number); -1 with *ERR. */
static int check_xml(const char *path, char **err) {
  gchar *text = NULL;
  gsize len = 0;
  GError *ge = NULL;
  if (!g_file_get_contents(path, &text, &len, &ge)) {
    *err = g_strdup_printf("[platform] topology = file:%s: %s", path,
                           ge->message);
    g_error_free(ge);
    return -1;
  }
  /* Well-formed XML first, for a message with a line number. GMarkup
   * does not know DOCTYPE lines: skip the prolog up to the root. */
  const char *root = strstr(text, "<platform");
  GMarkupParser parser = {no_element, NULL, NULL, NULL, NULL};
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, NULL, NULL);
  bool ok = root && g_markup_parse_context_parse(ctx, root, -1, &ge) &&
            g_markup_parse_context_end_parse(ctx, &ge);
  if (!ok) {
    int line = 1;
    for (const char *c = text; root && c < root; c++)
      line += *c == '\n';
    *err = root ? g_strdup_printf("[platform] topology = file:%s: malformed "
                                  "XML (from line %d, its <platform> "
                                  "element): %s",
                                  path, line, ge ? ge->message : "?")
                : g_strdup_printf("[platform] topology = file:%s: no "
                                  "<platform> element: not a SimGrid "
                                  "platform file",
                                  path);
  }
  if (ge)
    g_error_free(ge);
  g_markup_parse_context_free(ctx);
  g_free(text);
  return ok ? 0 : -1;
}

int platform_file_check(const char *path, size_t *hosts, char **err) {
  *err = NULL;
  if (check_xml(path, err) != 0)
    return -1;
  struct platform_probe pr;
  if (platform_probe(path, &pr, err) != 0)
    return -1;
  *hosts = g_strv_length(pr.names);
  platform_probe_clear(&pr);
  return 0;
}
