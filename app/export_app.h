/*
 * export_app.h — private to app/: the parts of `talus export` (export.c)
 * that `talus erode --export FORMAT:PATH` shares, so an export written by
 * erode is the file `talus export` writes from erode's output.
 */
#ifndef TALUS_APP_EXPORT_APP_H
#define TALUS_APP_EXPORT_APP_H

#include "app.h"

/* The sidecar of export output `output`: "<output>.json", into out[size]. */
void export_sidecar_path(char *out, size_t size, const char *output);

/* What an --export makes: a heightmap of the output (with its sidecar), or
 * from the state (no sidecar) a mesh or masks. */
enum { EXPORT_HEIGHTMAP = 0, EXPORT_MESH = 1, EXPORT_MASKS = 2 };
#define EXPORT_SPEC_MAX 64 /* an --export FORMAT with its NUL */

/* Checks one --export value "FORMAT:PATH" of talus erode (FORMAT one that
 * `talus export -of` takes, or MASKS[=M,...] for `--mask M,...`), points
 * *path at its PATH and sets *kind (EXPORT_*). */
talus_status export_spec_check(const char *spec, const char **path, int *kind);

/* Runs `talus export INPUT -of FORMAT -o PATH [-q]` for spec "FORMAT:PATH"
 * (`--mask M,... -o PATH` for MASKS), INPUT the run's state for a mesh or
 * masks, else its output: the same library call, so the same bytes. */
talus_status export_from_erode(const char *output, const char *state, const char *spec, int quiet);

#endif /* TALUS_APP_EXPORT_APP_H */
