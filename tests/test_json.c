/*
 * test_json.c — the JSON wrapper (io/json.h): a document with awkward
 * strings (quote, backslash, slash, control characters, UTF-8) in keys and
 * values, nested and empty arrays, integers at the ends of int64, reals
 * that need all 17 digits (1e-300, 0.1, a denormal), reals with a format of
 * their own (-0 reads back as 0, as JSON readers do), NaN and infinities
 * as null, written on one line, pretty, nested
 * at a depth and to a file; each read back with json-c and compared exactly.
 * Also: a failed constructor or a NULL container fails the insertion, and a
 * path that cannot be written fails with TALUS_ERR_IO and leaves nothing.
 */
#include "check.h"
#include "io/json.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const awkward[] = {
    "say \"hi\"",
    "back\\slash \\\" both",
    "a/b//c",
    "tab\tnew\nline\rcr",
    "bell\x01 esc\x1b del\x7f",
    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
    "",
    "}],{\"x\": [",
    "[ { } ]",
};
#define NAWKWARD ((int)(sizeof awkward / sizeof awkward[0]))

static const double reals[] = {
    1e-300, 0.1, 1e300, -2.5, 4.9406564584124654e-324, 1.0 / 3.0, 9007199254740993.0, 0.0, -0.0};
#define NREALS ((int)(sizeof reals / sizeof reals[0]))

static const int64_t ints[] = {0, -1, 9007199254740993LL, INT64_MAX, INT64_MIN};
#define NINTS ((int)(sizeof ints / sizeof ints[0]))

/* The test document; NULL (with a failed CHECK) when building fails. */
static talus_json *build(void) {
  talus_json *doc = talus_json_object(), *strings = talus_json_array();
  talus_status st = TALUS_OK;
  for (int i = 0; i < NAWKWARD; i++)
    if (!st) st = talus_json_push(strings, talus_json_string(awkward[i]));
  if (!st)
    st = talus_json_set(doc, "strings", strings);
  else
    talus_json_free(strings);
  for (int i = 0; !st && i < NAWKWARD; i++) /* the same texts as keys */
    st = talus_json_set(doc, awkward[i][0] ? awkward[i] : "(empty)", talus_json_int(i));
  talus_json *r = talus_json_array(), *n = talus_json_array();
  for (int i = 0; i < NREALS; i++)
    if (!st) st = talus_json_push(r, talus_json_real(reals[i], NULL));
  for (int i = 0; i < NINTS; i++)
    if (!st) st = talus_json_push(n, talus_json_int(ints[i]));
  if (!st)
    st = talus_json_set(doc, "reals", r);
  else
    talus_json_free(r);
  if (!st)
    st = talus_json_set(doc, "ints", n);
  else
    talus_json_free(n);
  /* [[1, [true, []]], {}] */
  talus_json *outer = talus_json_array(), *mid = talus_json_array(), *in = talus_json_array();
  if (!st) st = talus_json_push(in, talus_json_bool(1));
  if (!st) st = talus_json_push(in, talus_json_array());
  if (!st) st = talus_json_push(mid, talus_json_int(1));
  if (!st) st = talus_json_push(mid, in), in = NULL;
  if (!st) st = talus_json_push(outer, mid), mid = NULL;
  if (!st) st = talus_json_push(outer, talus_json_object());
  if (!st) st = talus_json_set(doc, "nested", outer), outer = NULL;
  talus_json_free(in), talus_json_free(mid), talus_json_free(outer);
  if (!st) st = talus_json_set(doc, "seconds", talus_json_real(2.0 / 3.0, "%.6f"));
  if (!st) st = talus_json_set(doc, "ratio", talus_json_real(1234.5678, "%.4g"));
  if (!st) st = talus_json_set(doc, "mib", talus_json_real(256.0, "%.0f"));
  if (!st) st = talus_json_set(doc, "nan", talus_json_real(NAN, NULL));
  if (!st) st = talus_json_set(doc, "inf", talus_json_real(-INFINITY, "%.3f"));
  if (!st) st = talus_json_set(doc, "null_string", talus_json_string(NULL));
  CHECK(st == TALUS_OK, "build: %s", talus_last_error());
  if (st) talus_json_free(doc);
  return st ? NULL : doc;
}

/* Member key of object o, or NULL. */
static json_object *get(json_object *o, const char *key) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Checks that text parses to the test document, exactly. */
static void check_text(const char *what, const char *text) {
  json_object *j = json_tokener_parse(text);
  CHECK(j && json_object_is_type(j, json_type_object), "%s: parses as an object", what);
  if (!j) return;
  json_object *s = get(j, "strings");
  CHECK(s && json_object_array_length(s) == (size_t)NAWKWARD, "%s: strings", what);
  for (int i = 0; s && i < NAWKWARD && i < (int)json_object_array_length(s); i++) {
    json_object *v = json_object_array_get_idx(s, (size_t)i);
    CHECK(json_object_is_type(v, json_type_string) &&
              !strcmp(json_object_get_string(v), awkward[i]),
          "%s: string %d reads back", what, i);
    json_object *k = get(j, awkward[i][0] ? awkward[i] : "(empty)");
    CHECK(k && json_object_get_int64(k) == i, "%s: key %d reads back", what, i);
  }
  json_object *r = get(j, "reals");
  CHECK(r && json_object_array_length(r) == (size_t)NREALS, "%s: reals", what);
  for (int i = 0; r && i < NREALS && i < (int)json_object_array_length(r); i++) {
    double v = json_object_get_double(json_object_array_get_idx(r, (size_t)i));
    CHECK(v == reals[i], "%s: real %.17g reads back as %.17g", what, reals[i], v);
  }
  json_object *n = get(j, "ints");
  CHECK(n && json_object_array_length(n) == (size_t)NINTS, "%s: ints", what);
  for (int i = 0; n && i < NINTS && i < (int)json_object_array_length(n); i++)
    CHECK(json_object_get_int64(json_object_array_get_idx(n, (size_t)i)) == ints[i],
          "%s: int %lld reads back", what, (long long)ints[i]);
  json_object *outer = get(j, "nested"), *mid = json_object_array_get_idx(outer, 0);
  json_object *in = json_object_array_get_idx(mid, 1);
  CHECK(json_object_array_length(outer) == 2 && json_object_array_length(mid) == 2 &&
            json_object_get_int(json_object_array_get_idx(mid, 0)) == 1 &&
            json_object_get_boolean(json_object_array_get_idx(in, 0)) &&
            json_object_array_length(json_object_array_get_idx(in, 1)) == 0 &&
            json_object_object_length(json_object_array_get_idx(outer, 1)) == 0,
        "%s: nested arrays", what);
  CHECK(strstr(text, "\"seconds\": 0.666667") && strstr(text, "\"ratio\": 1235") &&
            strstr(text, "\"mib\": 256"),
        "%s: reals in their own formats", what);
  json_object *nan = NULL, *inf = NULL;
  CHECK(json_object_object_get_ex(j, "nan", &nan) && !nan &&
            json_object_object_get_ex(j, "inf", &inf) && !inf,
        "%s: NaN and -inf as null", what);
  CHECK(get(j, "null_string") && !strcmp(json_object_get_string(get(j, "null_string")), ""),
        "%s: a NULL string as \"\"", what);
  json_object_put(j);
}

/* doc written by talus_json_write at depth into a new string (free it). */
static char *write_text(talus_json *doc, int depth) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  talus_status st = f ? talus_json_write(doc, f, depth) : TALUS_ERR_IO;
  if (f) fclose(f);
  CHECK(st == TALUS_OK && buf, "write at depth %d", depth);
  return buf;
}

static void test_round_trip(void) {
  talus_json *doc = build();
  if (!doc) return;
  char *line = write_text(doc, -1), *pretty = write_text(doc, 0), *deep = write_text(doc, 2);
  if (line) {
    check_text("one line", line);
    CHECK(!strchr(line, '\n') && line[strlen(line) - 1] == '}', "one line, no final newline");
    CHECK(strstr(line, "a/b//c") != NULL, "slashes left as they are");
    CHECK(!strncmp(line, "{\"strings\": [\"say \\\"hi\\\"\", ", 24) &&
              strstr(line, "\"nested\": [[1, [true, []]], {}], ") &&
              strstr(line, "\"}],{\\\"x\\\": [\": 7, ") && strstr(line, "\"[ { } ]\": 8, "),
          "one line: no blanks inside brackets, those in strings kept: %.60s", line);
  }
  if (pretty) {
    check_text("pretty", pretty);
    CHECK(strstr(pretty, "\n  \"reals\": [\n    1e-300,\n    0.10000000000000001,\n") != NULL,
          "pretty: 2 spaces per level, 17 digits: %.200s", pretty);
  }
  if (deep) {
    check_text("depth 2", deep);
    CHECK(strstr(deep, "\n      \"reals\": [\n        1e-300,\n") &&
              !strcmp(deep + strlen(deep) - 6, "\n    }"),
          "depth 2: 4 more spaces on every line after the first");
  }
  free(line), free(pretty), free(deep);

  char dir[] = "/tmp/talus_json_XXXXXX", path[128], partial[160]; /* mkdtemp's template */
  int made = mkdtemp(dir) != NULL;
  CHECK(made, "a scratch directory: %s", strerror(errno));
  if (made) {
    snprintf(path, sizeof path, "%s/we\"ird\\name.json", dir);
    snprintf(partial, sizeof partial, "%s.partial", path);
    CHECK(talus_json_write_path(doc, path) == TALUS_OK, "write_path: %s", talus_last_error());
    FILE *f = fopen(path, "r");
    char text[8192];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f) fclose(f);
    CHECK(n > 2 && text[n - 1] == '\n' && text[n - 2] == '}', "file ends in a newline");
    check_text("file", text);
    CHECK(access(partial, F_OK) != 0, "no partial file left");
    unlink(path);
    rmdir(dir);
  }
  talus_json_free(doc);
}

/* Failed constructors and containers, and unwritable paths. */
static void test_failures(void) {
  talus_json *o = talus_json_object(), *a = talus_json_array();
  CHECK(talus_json_set(o, "x", NULL) == TALUS_ERR_NOMEM, "a NULL value fails set");
  CHECK(strstr(talus_last_error(), "json: ") == talus_last_error(), "module json");
  CHECK(talus_json_push(a, NULL) == TALUS_ERR_NOMEM, "a NULL value fails push");
  CHECK(talus_json_set(NULL, "x", talus_json_int(1)) == TALUS_ERR_NOMEM, "NULL object");
  CHECK(talus_json_push(NULL, talus_json_int(1)) == TALUS_ERR_NOMEM, "NULL array");
  CHECK(talus_json_set(o, "x", talus_json_int(1)) == TALUS_OK &&
            talus_json_set(o, "x", talus_json_int(2)) == TALUS_OK,
        "a key set twice");
  char *text = write_text(o, -1);
  CHECK(text && !strcmp(text, "{\"x\": 2}"), "the second value replaces the first: %s", text);
  free(text);
  CHECK(talus_json_write_path(o, "/nonexistent-dir/r.json") == TALUS_ERR_IO &&
            strstr(talus_last_error(), "cannot write '/nonexistent-dir/r.json'"),
        "unwritable path: %s", talus_last_error());
  CHECK(talus_json_write(NULL, stdout, 0) == TALUS_ERR_ARGUMENT, "no document");
  talus_json_free(o);
  talus_json_free(a);
  talus_json_free(NULL);
}

int main(void) {
  test_round_trip();
  test_failures();
  return check_report("test_json");
}
