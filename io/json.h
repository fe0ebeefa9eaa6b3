/*
 * json.h — the one JSON library behind every machine-readable output (the
 * run report, the parameter set, talus_bench): a thin wrapper over json-c
 * that builds a document as a tree of values and writes it with correct
 * escaping. It sits just above mpi and uses only common/.
 *
 * Ownership: each constructor returns a new value that its caller owns, or
 * NULL when out of memory. talus_json_set and talus_json_push take the value
 * they are given, always, also when they fail; so a document is freed once,
 * at its root, with talus_json_free. A NULL value handed to them (a failed
 * constructor) fails with TALUS_ERR_NOMEM, so a builder can chain
 * `if (!st) st = talus_json_set(o, "k", talus_json_int(n));` and learn of
 * any failure from its status. Errors go through talus_fail, module "json".
 *
 * Numbers: each real is printed with a printf format of its own ("%.6f"
 * for a time, say); the default "%.17g" reads back as the same double.
 * NaN and the infinities, which JSON cannot hold, are written as null.
 * Objects keep their keys in insertion order.
 */
#ifndef TALUS_IO_JSON_H
#define TALUS_IO_JSON_H

#include "common/common.h"

#include <stdint.h>
#include <stdio.h>

/* A JSON value: json-c's object (tests may read it with json-c directly). */
typedef struct json_object talus_json;

/* An empty object; NULL when out of memory. */
talus_json *talus_json_object(void);
/* An empty array; NULL when out of memory. */
talus_json *talus_json_array(void);
/* A string holding a copy of s (any bytes; escaped when written); NULL s
 * gives "". */
talus_json *talus_json_string(const char *s);
/* An integer. */
talus_json *talus_json_int(int64_t v);
/* true when v is non-zero, else false. */
talus_json *talus_json_bool(int v);
/* A real printed with fmt, a printf format holding one double conversion
 * ("%.6f", "%.4g"); NULL fmt: "%.17g", which reads back as v exactly. NaN and
 * the infinities give null. */
talus_json *talus_json_real(double v, const char *fmt);

/* Sets obj[key] = v (key copied; an existing key is replaced). Takes v, also
 * on failure. TALUS_ERR_NOMEM when obj or v is NULL or json-c fails. */
talus_status talus_json_set(talus_json *obj, const char *key, talus_json *v);
/* Appends v to array arr. Takes v, also on failure; fails as talus_json_set. */
talus_status talus_json_push(talus_json *arr, talus_json *v);

/* Writes doc to `to` as JSON text, with no final newline; doc stays the
 * caller's. depth < 0: on one line ({"a": 1, "b": [1, 2]}). depth >= 0:
 * one member per line, 2 spaces per level, as if doc were nested `depth`
 * levels deep in a larger document (every line after the first gains 2·depth
 * spaces). TALUS_ERR_IO when the stream reports an error. */
talus_status talus_json_write(talus_json *doc, FILE *to, int depth);
/* Writes doc to the file path (depth 0, with a final newline), through
 * "path.partial" renamed into place: path ends up whole or untouched.
 * TALUS_ERR_IO naming path when it cannot be written. */
talus_status talus_json_write_path(talus_json *doc, const char *path);

/* Frees v and every value in it; NULL is a no-op. */
void talus_json_free(talus_json *v);

#endif /* TALUS_IO_JSON_H */
