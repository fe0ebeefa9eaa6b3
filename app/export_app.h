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

/* Checks one --export value "FORMAT:PATH" of talus erode (FORMAT one that
 * `talus export -of` takes), points *path at its PATH and sets *mesh when
 * FORMAT is a mesh's (made from the state, with no sidecar). */
talus_status export_spec_check(const char *spec, const char **path, int *mesh);

/* Runs `talus export INPUT -of FORMAT -o PATH [-q]` for spec "FORMAT:PATH",
 * INPUT the run's state for a mesh, else its output: the same library
 * call, so the same bytes. */
talus_status export_from_erode(const char *output, const char *state, const char *spec, int quiet);

#endif /* TALUS_APP_EXPORT_APP_H */
