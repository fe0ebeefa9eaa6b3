/*
 * app.c — argument scanning, progress bar, output path checks shared by the
 * application calls. The progress bar owns the SIGINT handler while a run
 * is in flight, so Ctrl-C cancels cleanly at a step boundary.
 */
#include "app.h"
#include "common/common.h"
#include "io/raster/raster.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int app_take(app_args *a, const char *name, const char *alias, const char **value) {
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  if (!strncmp(arg, name, n) && arg[n] == '=' && name[0] == '-' && name[1] == '-') {
    *value = arg + n + 1; /* --name=value */
    a->i++;
    return 1;
  }
  if (strcmp(arg, name) && (!alias || strcmp(arg, alias))) return 0;
  if (a->i + 1 >= a->argc) {
    talus_fail(TALUS_ERR_ARGUMENT, "args", "option %s needs a value", arg);
    return -1;
  }
  *value = a->argv[a->i + 1];
  a->i += 2;
  return 1;
}

int app_flag(app_args *a, const char *name, const char *alias) {
  const char *arg = a->argv[a->i];
  if (strcmp(arg, name) && (!alias || strcmp(arg, alias))) return 0;
  a->i++;
  return 1;
}

int app_common_flag(app_args *a, app_common *c) {
  if (app_flag(a, "--help", "-h")) return c->help = 1;
  if (app_flag(a, "--version", NULL)) return c->version = 1;
  if (!app_flag(a, "--quiet", "-q")) return 0;
  talus_log_set_level(0);
  return c->quiet = 1;
}

int app_common_done(const app_common *c) {
  if (c->version && !c->help) printf("talus %s\n", talus_version());
  return c->help || c->version;
}

int app_gdal_config(app_args *a) {
  if (strcmp(a->argv[a->i], "--config")) return 0;
  if (a->i + 2 >= a->argc) {
    talus_fail(TALUS_ERR_ARGUMENT, "args", "--config needs KEY VALUE");
    return -1;
  }
  talus_raster_config_set(a->argv[a->i + 1], a->argv[a->i + 2]);
  a->i += 3;
  return 1;
}

talus_status app_input(app_args *a, const char *cmd, const char **input) {
  const char *arg = a->argv[a->i];
  if (arg[0] == '-' && arg[1])
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "unknown option '%s' (see talus %s --help)", arg,
                      cmd);
  if (*input)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "more than one input: '%s' and '%s'", *input,
                      arg);
  *input = arg;
  a->i++;
  return TALUS_OK;
}

talus_status app_int(const char *opt, const char *text, int64_t lo, int64_t hi, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end || v < lo || v > hi)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "%s expects an integer in [%lld, %lld], got '%s'",
                      opt, (long long)lo, (long long)hi, text);
  *out = v;
  return TALUS_OK;
}

talus_status app_size(const char *opt, const char *text, int64_t *out) {
  char *end = NULL;
  double v = strtod(text, &end);
  double unit = 1.0;
  if (end && *end) {
    const char *units = "KMGT";
    const char *u = strchr(units, end[0] & ~0x20);
    if (u && (!end[1] || ((end[1] == 'B' || end[1] == 'b') && !end[2])))
      unit = pow(1024.0, (double)(u - units + 1));
    else
      unit = 0.0;
  }
  if (end == text || !(unit > 0.0) || !(v * unit >= 1 << 20) || v * unit > 9e18)
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "%s expects a size of at least 1M such as 512M or 4G, got '%s'", opt, text);
  *out = (int64_t)(v * unit);
  return TALUS_OK;
}

talus_status app_real(const char *opt, const char *text, double lo, double hi, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end || !isfinite(v) || v < lo || v > hi)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "%s expects a number in [%g, %g], got '%s'", opt,
                      lo, hi, text);
  *out = v;
  return TALUS_OK;
}

/* The signal that asked the run in flight to stop (SIGINT or SIGTERM),
 * or 0; read by the progress callback at each report, so the run stops at
 * a step (tiled: tile) boundary and cleans up as for any failure. */
static volatile sig_atomic_t stop_signal;
static void on_stop_signal(int sig) {
  stop_signal = sig;
}

int talus_app_signal(void) {
  return (int)stop_signal;
}

void app_signals_catch(void) {
  stop_signal = 0;
  signal(SIGINT, on_stop_signal);
  signal(SIGTERM, on_stop_signal);
}

void app_signals_restore(void) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

void app_progress_begin(app_progress *p, const char *label, int64_t total, int quiet) {
  memset(p, 0, sizeof *p);
  int shown = !quiet && talus_log_shown(1);
  p->enabled = shown && isatty(STDERR_FILENO);
  p->lines = shown && !p->enabled;
  p->total = total;
  p->start = p->last_line = talus_now();
  p->next_pct = APP_PROGRESS_LINE_PCT;
  p->label = label;
}

/* Steps done, rate and time left at `complete` (0..1). */
static void progress_rates(const app_progress *p, double complete, double *done, double *rate,
                           double *eta) {
  double el = talus_now() - p->start;
  *done = complete * (double)p->total;
  *rate = el > 0 ? *done / el : 0.0;
  *eta = *rate > 0 ? ((double)p->total - *done) / *rate : 0.0;
}

/* Redraws the terminal bar in place. */
static void progress_draw(app_progress *p, double complete) {
  double done, rate, eta;
  progress_rates(p, complete, &done, &rate, &eta);
  int width = 30, fill = (int)(complete * width);
  char bar[64];
  for (int i = 0; i < width; i++)
    bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
  bar[width] = '\0';
  fprintf(stderr, "\r%s [%s] %3.0f%% %lld/%lld steps  %.1f steps/s  ETA %d:%02d:%02d ", p->label,
          bar, 100.0 * complete, (long long)done, (long long)p->total, rate, (int)(eta / 3600),
          (int)fmod(eta / 60, 60), (int)fmod(eta, 60));
  fflush(stderr);
}

/* Batch logs: one whole line each APP_PROGRESS_LINE_PCT % or
 * APP_PROGRESS_LINE_SECONDS, whichever comes first (a log file or a
 * scheduler's output, where \r would pile up). */
static void progress_line(app_progress *p, double complete) {
  int pct = (int)(complete * 100.0 + 1e-9);
  double now = talus_now();
  if (pct < p->next_pct && now - p->last_line < APP_PROGRESS_LINE_SECONDS) return;
  p->next_pct = (pct / APP_PROGRESS_LINE_PCT + 1) * APP_PROGRESS_LINE_PCT;
  p->last_line = now;
  double done, rate, eta;
  progress_rates(p, complete, &done, &rate, &eta);
  fprintf(stderr, "talus: %s %3d%% %lld/%lld steps, %.1f steps/s, ETA %d:%02d:%02d\n", p->label,
          pct, (long long)done, (long long)p->total, rate, (int)(eta / 3600),
          (int)fmod(eta / 60, 60), (int)fmod(eta, 60));
  fflush(stderr);
}

int app_progress_cb(double complete, const char *message, void *user) {
  (void)message;
  app_progress *p = user;
  if (stop_signal) return 0;
  if (p && p->lines && complete > 0.0) progress_line(p, complete);
  if (!p || !p->enabled) return 1;
  double now = talus_now();
  if (complete < 1.0 && now - p->last_draw < 0.1) return 1;
  p->last_draw = now;
  progress_draw(p, complete);
  return 1;
}

void app_progress_end(app_progress *p) {
  if (p->enabled) fputc('\n', stderr);
}

/* Writes the directory part of path ("." when none, "/" for the root) into
 * dir[PATH_MAX]; returns the file name part, or NULL when too long. */
static const char *app_split_dir(const char *path, char *dir) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    strcpy(dir, ".");
    return path;
  }
  size_t n = (size_t)(slash - path);
  if (n >= PATH_MAX) return NULL;
  memcpy(dir, path, n);
  dir[n ? n : 1] = '\0';
  if (!n) dir[0] = '/';
  return slash + 1;
}

talus_status app_check_writable(const char *path) {
  char dir[PATH_MAX];
  struct stat sb;
  if (!app_split_dir(path, dir))
    return talus_fail(TALUS_ERR_IO, "output", "path too long: %s", path);
  if (access(dir, W_OK | X_OK) != 0)
    return talus_fail(TALUS_ERR_IO, "output", "cannot write '%s': directory '%s': %s", path, dir,
                      strerror(errno));
  /* rename() cannot replace a directory: fail now, not after the run. */
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return talus_fail(TALUS_ERR_IO, "output", "cannot write '%s': it is a directory", path);
  if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
    return talus_fail(TALUS_ERR_IO, "output", "cannot write '%s': %s", path, strerror(errno));
  return TALUS_OK;
}

/* The absolute path of `path` with its directory resolved (the file need
 * not exist), into out[PATH_MAX]; the text as given when unresolvable. */
static void app_canonical(const char *path, char *out) {
  char dir[PATH_MAX], real[PATH_MAX];
  if (realpath(path, out)) return;
  const char *base = app_split_dir(path, dir);
  size_t lr = base && realpath(dir, real) ? strlen(real) : PATH_MAX, lb = base ? strlen(base) : 0;
  if (lr + lb + 2 <= PATH_MAX) {
    memcpy(out, real, lr);
    out[lr] = '/';
    memcpy(out + lr + 1, base, lb + 1);
  } else {
    snprintf(out, PATH_MAX, "%s", path);
  }
}

int app_same_path(const char *a, const char *b) {
  char ca[PATH_MAX], cb[PATH_MAX];
  app_canonical(a, ca);
  app_canonical(b, cb);
  return !strcmp(ca, cb);
}

/* Length of path's .tif/.tiff extension (any case), 0 when it has none. */
static size_t app_tif_ext_len(const char *path) {
  size_t n = strlen(path);
  const char *exts[] = {".tif", ".tiff"};
  for (size_t i = 0; i < 2; i++) {
    size_t e = strlen(exts[i]);
    if (n > e && !strcasecmp(path + n - e, exts[i])) return e;
  }
  return 0;
}

void app_derived_path(char *out, size_t size, const char *path, const char *suffix) {
  size_t n = strlen(path) - app_tif_ext_len(path);
  snprintf(out, size, "%.*s%s", (int)n, path, suffix);
}

talus_status app_check_geotiff_name(const char *option, const char *path) {
  const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
  const char *dot = strrchr(name, '.'); /* a leading dot names a hidden file */
  if (!dot || dot == name || app_tif_ext_len(name)) return TALUS_OK;
  return talus_fail(TALUS_ERR_ARGUMENT, "args",
                    "%s '%s': talus writes GeoTIFF only; name the file .tif or .tiff", option,
                    path);
}

talus_status app_param_override(talus_params *p, const char *kv) {
  const char *eq = strchr(kv, '=');
  if (!eq)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--set expects SECTION.KEY=VALUE, got '%s'", kv);
  char key[256];
  snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
  return talus_params_set(p, key, eq + 1);
}
