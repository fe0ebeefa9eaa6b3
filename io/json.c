/*
 * json.c — the JSON wrapper over json-c (json.h): value constructors, the
 * two containers and the writers. Owns nothing beyond the values it hands
 * out; json-c does the escaping and keeps objects in insertion order.
 */
#include "io/json.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ": " after a key and "/" left as is; pretty adds one member per line. */
#define FLAGS_LINE   (JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
#define FLAGS_PRETTY (FLAGS_LINE | JSON_C_TO_STRING_PRETTY)

/* New values: the caller owns them; NULL when out of memory. */
talus_json *talus_json_object(void) {
  return json_object_new_object();
}
talus_json *talus_json_array(void) {
  return json_object_new_array();
}
talus_json *talus_json_string(const char *s) {
  return json_object_new_string(s ? s : "");
}
talus_json *talus_json_int(int64_t v) {
  return json_object_new_int64(v);
}
talus_json *talus_json_bool(int v) {
  return json_object_new_boolean(v != 0);
}

/* A double whose text json-c writes verbatim: v printed with fmt ("%.17g"
 * when NULL, or when fmt's text would not fit), or "null" when v is not
 * finite. The caller owns it; NULL when out of memory. */
talus_json *talus_json_real(double v, const char *fmt) {
  char text[512];
  int n = -1;
  if (!isfinite(v))
    n = snprintf(text, sizeof text, "null");
  else if (fmt)
    n = snprintf(text, sizeof text, fmt, v);
  if (n < 0 || (size_t)n >= sizeof text) snprintf(text, sizeof text, "%.17g", v);
  return json_object_new_double_s(v, text);
}

/* The one message of a failed insertion (NULL container or value: a
 * constructor ran out of memory). */
static talus_status json_nomem(void) {
  return talus_fail(TALUS_ERR_NOMEM, "json", "out of memory building a JSON document");
}

/* Takes v into obj under a copy of key; v is freed when that fails. */
talus_status talus_json_set(talus_json *obj, const char *key, talus_json *v) {
  if (obj && key && v && json_object_object_add(obj, key, v) == 0) return TALUS_OK;
  json_object_put(v);
  return json_nomem();
}

/* Takes v onto the end of arr; v is freed when that fails. */
talus_status talus_json_push(talus_json *arr, talus_json *v) {
  if (arr && v && json_object_array_add(arr, v) == 0) return TALUS_OK;
  json_object_put(v);
  return json_nomem();
}

/* Writes json-c's spaced one-line text without the blanks it puts inside
 * brackets: { "a": [ 1 ] } becomes {"a": [1]}, the form of Python's
 * json.dumps and of the writers io/json replaced (the run id of a tiled run
 * hashes the parameters in it). Blanks inside strings are kept. */
static void write_line(const char *text, size_t len, FILE *to) {
  int in_string = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (in_string) {
      if (c == '\\' && i + 1 < len)
        fputc(c, to), c = text[++i];
      else if (c == '"')
        in_string = 0;
    } else if (c == '"') {
      in_string = 1;
    } else if (c == ' ' && ((i > 0 && (text[i - 1] == '{' || text[i - 1] == '[')) ||
                            (i + 1 < len && (text[i + 1] == '}' || text[i + 1] == ']')))) {
      continue;
    }
    fputc(c, to);
  }
}

/* Writes json-c's pretty text with every line after the first shifted
 * right by 2·depth spaces. Raw newlines occur only between members: inside
 * strings they are escaped. */
static void write_pretty(const char *text, size_t len, int depth, FILE *to) {
  for (const char *c = text, *end = text + len; c < end;) {
    const char *nl = depth > 0 ? memchr(c, '\n', (size_t)(end - c)) : NULL;
    size_t n = nl ? (size_t)(nl - c) + 1 : (size_t)(end - c);
    fwrite(c, 1, n, to);
    if (nl) fprintf(to, "%*s", 2 * depth, "");
    c += n;
  }
}

/* json-c renders doc into a buffer that doc owns (freed with doc). */
talus_status talus_json_write(talus_json *doc, FILE *to, int depth) {
  if (!doc || !to) return talus_fail(TALUS_ERR_ARGUMENT, "json", "no document or stream to write");
  size_t len = 0;
  const char *text =
      json_object_to_json_string_length(doc, depth < 0 ? FLAGS_LINE : FLAGS_PRETTY, &len);
  if (!text) return talus_fail(TALUS_ERR_NOMEM, "json", "out of memory writing a JSON document");
  if (depth < 0)
    write_line(text, len, to);
  else
    write_pretty(text, len, depth, to);
  return ferror(to) ? talus_fail(TALUS_ERR_IO, "json", "error writing a JSON document") : TALUS_OK;
}

/* Writes "path.partial" (a name this function owns and removes on any
 * failure), then renames it to path. */
talus_status talus_json_write_path(talus_json *doc, const char *path) {
  if (!doc || !path) return talus_fail(TALUS_ERR_ARGUMENT, "json", "no document or path to write");
  size_t size = strlen(path) + sizeof ".partial";
  char *tmp = malloc(size);
  if (!tmp) return json_nomem();
  snprintf(tmp, size, "%s.partial", path);
  FILE *out = fopen(tmp, "w");
  talus_status st = out ? TALUS_OK : TALUS_ERR_IO;
  int err = errno;
  if (out) {
    talus_status wst = talus_json_write(doc, out, 0);
    if (fputc('\n', out) == EOF && !wst) wst = TALUS_ERR_IO;
    err = errno;
    if (fclose(out) != 0 && !wst) wst = TALUS_ERR_IO, err = errno;
    if (!wst && rename(tmp, path) != 0) wst = TALUS_ERR_IO, err = errno;
    if (wst) remove(tmp);
    st = wst;
  }
  free(tmp);
  if (st == TALUS_ERR_IO)
    return talus_fail(TALUS_ERR_IO, "json", "cannot write '%s': %s", path, strerror(err));
  return st ? talus_fail_context(st, "cannot write '%s'", path) : TALUS_OK;
}

/* Drops the reference the caller holds, and with it the whole tree. */
void talus_json_free(talus_json *v) {
  json_object_put(v);
}
