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
 * `talus export -of` takes) and points *path at its PATH. */
talus_status export_spec_check(const char *spec, const char **path);

/* Runs `talus export INPUT -of FORMAT -o PATH [-q]` for spec "FORMAT:PATH":
 * the same library call, so the same bytes. */
talus_status export_from_erode(const char *input, const char *spec, int quiet);

#endif /* TALUS_APP_EXPORT_APP_H */
