/*
 * app.h — helpers shared by the application calls (erode, generate, info,
 * params): argument scanning, the terminal progress bar, and output paths.
 * Apps are library calls; cli/main.c only dispatches to them.
 */
#ifndef TALUS_APP_H
#define TALUS_APP_H

#include "talus.h"
#include <stdint.h>
#include <stdio.h>

/* Argument cursor over argv (command name excluded). */
typedef struct app_args {
  int argc;
  char **argv;
  int i;
} app_args;

/* If argv[i] is `name` (or `alias`, may be NULL), consumes it and its value,
 * stores the value in *value and returns 1; returns -1 (with the error
 * recorded) when the value is missing; 0 when the option does not match. */
int app_take(app_args *a, const char *name, const char *alias, const char **value);
/* If argv[i] is the flag `name`, consumes it and returns 1. */
int app_flag(app_args *a, const char *name, const char *alias);
/* The options every command takes: --help/-h (print the usage and stop),
 * --version (print the version and stop), -q/--quiet (no progress, no
 * summary: the log level drops to errors). */
typedef struct app_common {
  int help, version, quiet;
} app_common;
/* If argv[i] is one of the common options, consumes it, records it in *c
 * (applying -q to the log at once) and returns 1; else returns 0. */
int app_common_flag(app_args *a, app_common *c);
/* After parsing: prints the version when --version was given; returns 1
 * when the command should stop (help or version asked for). */
int app_common_done(const app_common *c);

/* If argv[i] is `--config KEY VALUE` (a GDAL configuration option),
 * consumes and applies it and returns 1; -1 (error recorded) when KEY or
 * VALUE is missing; 0 when argv[i] is something else. */
int app_gdal_config(app_args *a);
/* argv[i], which matched none of command cmd's options: an unknown option
 * ("-x") or a second input is TALUS_ERR_ARGUMENT; else it is consumed
 * into *input. */
talus_status app_input(app_args *a, const char *cmd, const char **input);

/* Parses a decimal integer option value within [lo, hi]. */
talus_status app_int(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out);
/* Parses a size of at least 1M for option opt: "512M", "4G", "1.5T",
 * "1000000" (bytes; K, M, G, T, with or without a B, are powers of 1024). */
talus_status app_size(const char *opt, const char *text, int64_t *out);
/* Applies a --set override "SECTION.KEY=VALUE" to p (talus_params_set). */
talus_status app_param_override(talus_params *p, const char *kv);
/* Parses a real option value within [lo, hi]. */
talus_status app_real(const char *opt, const char *text, double lo, double hi, double *out);

/* Progress of a run: on a terminal a bar redrawn in place (steps/s,
 * ETA); in a batch log (stderr not a terminal) one line every
 * APP_PROGRESS_LINE_PCT % or APP_PROGRESS_LINE_SECONDS; nothing when quiet
 * or the log is not shown here (other MPI ranks, -q). Between
 * app_signals_catch and app_signals_restore, SIGINT and SIGTERM are
 * recorded, not fatal, and stop the run at its next progress report (the
 * callback returns 0; a signal during set-up stops it at the first): the
 * run fails with TALUS_ERR_CANCELLED, a tiled run keeping its disk store
 * for --resume, and talus_app_signal() says which signal. */
void app_signals_catch(void);
void app_signals_restore(void);
#define APP_PROGRESS_LINE_PCT     10
#define APP_PROGRESS_LINE_SECONDS 60.0
typedef struct app_progress {
  int enabled;      /* the terminal bar */
  int lines;        /* the batch-log lines */
  int64_t total;    /* steps of the run */
  double start;     /* talus_now() at start */
  double last_draw; /* throttle redraws to ~10/s */
  double last_line; /* time of the last batch-log line */
  int next_pct;     /* the next batch-log line at this percentage */
  const char *label;
} app_progress;
/* Starts the progress of a run of `total` steps. */
void app_progress_begin(app_progress *p, const char *label, int64_t total, int quiet);
int app_progress_cb(double complete, const char *message, void *user); /* talus_progress_fn */
void app_progress_end(app_progress *p);

/* Fails with TALUS_ERR_IO unless `path` can be created: its directory
 * exists and is writable, and it is not a directory. Nothing is created. */
talus_status app_check_writable(const char *path);
/* 1 when a and b name the same file ("out.tif" and "./out.tif", or a
 * symlink and its target); neither needs to exist. */
int app_same_path(const char *a, const char *b);
/* Writes "<path without .tif/.tiff><suffix>" into out[size]. */
void app_derived_path(char *out, size_t size, const char *path, const char *suffix);
/* Fails with TALUS_ERR_ARGUMENT, naming `option`, when `path` ends in an
 * extension other than .tif/.tiff (any case): the writers produce GeoTIFF
 * only, and "-o x.png" once wrote a GeoTIFF named x.png. A name with no
 * extension passes. */
talus_status app_check_geotiff_name(const char *option, const char *path);

#endif /* TALUS_APP_H */
