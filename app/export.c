/*
 * export.c — `talus export INPUT -o OUT [-of FORMAT] …`: what leaves the
 * program for engines and DCC tools, from a finished run's output or
 * --state without re-running the erosion. Heightmaps (PNG16, R16, R32,
 * GTiff, io/export/heightmap.h) with a JSON sidecar "<OUT>.json".
 *
 * Design notes
 * ------------
 * - This file parses arguments and checks paths; the formats are
 *   io/export's. `talus erode … --export FORMAT:PATH` calls this same app
 *   with "-of FORMAT -o PATH" on its output (export_from_erode), so the
 *   two give the same bytes by construction, and a test asserts it.
 * - Outputs are checked before anything is read (writable, not the input,
 *   not each other); each file is written under a partial name and renamed
 *   by io/. When the sidecar fails after the heightmap was renamed into
 *   place, the heightmap is removed: an export leaves both or neither.
 */
#include "app.h"
#include "export_app.h"
#include "io/export/heightmap.h"

#include <stdlib.h>
#include <string.h>

static void export_usage(void) {
  printf("usage: talus export INPUT -o OUTPUT [-of FORMAT] [options]\n"
         "Writes a heightmap for a game engine or DCC tool from a raster: an eroded surface\n"
         "(talus erode -o), a talus --state file (its band 1, the surface) or any DEM.\n"
         "  -o, --output FILE   the heightmap; its JSON sidecar is FILE.json\n"
         "  -of FORMAT          PNG16 (16-bit PNG), R16 (RAW uint16 little-endian), R32\n"
         "                      (RAW float32 little-endian, metres) or GTiff (float32 metres);\n"
         "                      default from the extension: .png .r16/.raw .r32 .tif\n"
         "  --size N | WxH      output samples (default: the input's); any size, e.g. Unity\n"
         "                      2^n+1 (33..4097) or Unreal 1009, 2017, 4033, 8129; resampled\n"
         "                      by GDAL over the input's extent (pixel-is-area)\n"
         "  -r, --resampling R  %s\n"
         "  --z-range MIN,MAX   the range the 16-bit codes span [m] (default: the data's\n"
         "                      min and max, so min -> 0 and max -> 65535); heights outside\n"
         "                      are clamped; use one range for every tile of a world\n"
         "  --no-sidecar        do not write FILE.json\n"
         "  -co NAME=VALUE      GeoTIFF creation option (GTiff); repeatable\n"
         "  --config KEY VALUE  GDAL configuration option\n"
         "  -q, --quiet         no progress bar\n"
         "The sidecar gives the sample spacing (X/Y scale), the Z range, offset and\n"
         "quantum, Unreal's landscape scale in cm (Z = range_cm * 128 / 65535, about\n"
         "range_m * 100 / 512) and location Z, and Unity's terrain size and height offset.\n"
         "NoData becomes the minimum height in PNG16, R16 and R32 and stays NoData in GTiff.\n",
         talus_hm_resampling_names());
}

#define EXPORT_MAX_CO 64

/* Parsed `talus export` options; strings point into argv. */
typedef struct export_opts {
  const char *input, *output, *format;
  talus_heightmap_options hm;
  const char *co[EXPORT_MAX_CO + 1];
  int nco, no_sidecar, quiet;
  char sidecar[TALUS_PATH_BUF];
} export_opts;

/* Parses --size "N" or "WxH" into the options. */
static talus_status export_size(const char *v, export_opts *o) {
  char w[32], *x = strchr(v, 'x');
  int64_t a = 0, b = 0;
  if (!x) x = strchr(v, 'X');
  snprintf(w, sizeof w, "%.*s", x ? (int)(x - v) : (int)strlen(v), v);
  talus_status st = app_int("--size", w, 2, 1 << 20, &a);
  b = a;
  if (!st && x) st = app_int("--size", x + 1, 2, 1 << 20, &b);
  o->hm.width = (int)a, o->hm.height = (int)b;
  return st;
}

/* Parses --z-range "MIN,MAX". */
static talus_status export_z_range(const char *v, export_opts *o) {
  char lo[64];
  const char *comma = strchr(v, ',');
  if (!comma || comma - v >= (long)sizeof lo)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--z-range expects MIN,MAX, got '%s'", v);
  snprintf(lo, sizeof lo, "%.*s", (int)(comma - v), v);
  talus_status st = app_real("--z-range", lo, -1e7, 1e7, &o->hm.zmin);
  if (!st) st = app_real("--z-range", comma + 1, -1e7, 1e7, &o->hm.zmax);
  if (!st && !(o->hm.zmax > o->hm.zmin))
    st = talus_fail(TALUS_ERR_ARGUMENT, "args", "--z-range %s: MAX must exceed MIN", v);
  o->hm.z_stated = 1;
  return st;
}

/* Consumes one option at a->i into o; returns <0 on error, 0 if unknown. */
static int export_option(app_args *a, export_opts *o) {
  const char *v = NULL;
  int r;
  if ((r = app_take(a, "--output", "-o", &v))) return r < 0 ? r : (o->output = v, 1);
  if ((r = app_take(a, "-of", "--format", &v))) return r < 0 ? r : (o->format = v, 1);
  if ((r = app_take(a, "--size", NULL, &v))) return r < 0 || export_size(v, o) ? -1 : 1;
  if ((r = app_take(a, "--resampling", "-r", &v))) return r < 0 ? r : (o->hm.resampling = v, 1);
  if ((r = app_take(a, "--z-range", NULL, &v))) return r < 0 || export_z_range(v, o) ? -1 : 1;
  if ((r = app_take(a, "-co", "--co", &v))) {
    if (r > 0 && o->nco < EXPORT_MAX_CO) o->co[o->nco++] = v;
    return r;
  }
  if (app_flag(a, "--no-sidecar", NULL)) return o->no_sidecar = 1;
  if (app_flag(a, "--quiet", "-q")) return o->quiet = 1;
  return 0;
}

/* The format: -of, else the output's extension. */
static talus_status export_format(export_opts *o) {
  if (o->format && !talus_hm_format_parse(o->format, &o->hm.format))
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "unknown format '%s' (PNG16, R16, R32 or GTiff; see talus export --help)",
                      o->format);
  if (!o->format && !talus_hm_format_from_path(o->output, &o->hm.format))
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "no -of FORMAT, and the extension of '%s' names none (.png .r16 .raw .r32 "
                      ".tif)",
                      o->output);
  return TALUS_OK;
}

static talus_status export_parse(int argc, char **argv, export_opts *o, int *help) {
  app_args a = {argc, argv, 0};
  while (a.i < argc) {
    const char *arg = argv[a.i];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) return (*help = 1), TALUS_OK;
    if (!strcmp(arg, "--config")) {
      if (a.i + 2 >= argc)
        return talus_fail(TALUS_ERR_ARGUMENT, "args", "--config needs KEY VALUE");
      talus_raster_config_set(argv[a.i + 1], argv[a.i + 2]);
      a.i += 3;
      continue;
    }
    int r = export_option(&a, o);
    if (r < 0) return TALUS_ERR_ARGUMENT;
    if (r > 0) continue;
    if (arg[0] == '-' && arg[1])
      return talus_fail(TALUS_ERR_ARGUMENT, "args", "unknown option '%s' (see talus export --help)",
                        arg);
    if (o->input)
      return talus_fail(TALUS_ERR_ARGUMENT, "args", "more than one input: '%s' and '%s'", o->input,
                        arg);
    o->input = argv[a.i++];
  }
  if (!o->input) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no input raster given");
  if (!o->output) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no output given (-o FILE)");
  o->hm.creation_options = o->co;
  return export_format(o);
}

/* The outputs must be writable, distinct from the input and each other. */
static talus_status export_check_outputs(export_opts *o) {
  export_sidecar_path(o->sidecar, sizeof o->sidecar, o->output);
  const char *paths[2] = {o->output, o->no_sidecar ? NULL : o->sidecar};
  for (int i = 0; i < 2; i++) {
    if (!paths[i]) continue;
    if (app_same_path(paths[i], o->input))
      return talus_fail(TALUS_ERR_ARGUMENT, "output", "output '%s' would overwrite the input",
                        paths[i]);
    talus_status st = app_check_writable(paths[i]);
    if (st) return st;
  }
  return TALUS_OK;
}

/* Writes the heightmap, then its sidecar; removes the heightmap when the
 * sidecar cannot be written. */
static talus_status export_heightmap(export_opts *o) {
  talus_heightmap_info info;
  app_progress bar;
  app_progress_begin(&bar, "exporting", 100, o->quiet);
  talus_status st =
      talus_heightmap_export(o->input, o->output, &o->hm, &info, app_progress_cb, &bar);
  app_progress_end(&bar);
  if (!st && !o->no_sidecar) {
    const char *slash = strrchr(o->output, '/');
    st = talus_heightmap_sidecar(o->sidecar, slash ? slash + 1 : o->output, &info);
    if (st) remove(o->output);
  }
  if (!st)
    talus_info("wrote %s (%s, %d x %d, %.4g m spacing, Z %.6g..%.6g m)", o->output,
               talus_hm_format_name(info.format), info.width, info.height, info.dx, info.zmin,
               info.zmax);
  return st;
}

void export_sidecar_path(char *out, size_t size, const char *output) {
  snprintf(out, size, "%s.json", output);
}

/* Splits spec "FORMAT:PATH" into format[size] and *path. */
static talus_status export_spec_split(const char *spec, char *format, size_t size,
                                      const char **path) {
  const char *colon = strchr(spec, ':');
  if (!colon || colon == spec || !colon[1] || (size_t)(colon - spec) >= size)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--export expects FORMAT:PATH, got '%s'", spec);
  snprintf(format, size, "%.*s", (int)(colon - spec), spec);
  *path = colon + 1;
  return TALUS_OK;
}

talus_status export_spec_check(const char *spec, const char **path) {
  char format[32];
  talus_hm_format f;
  talus_status st = export_spec_split(spec, format, sizeof format, path);
  if (!st && !talus_hm_format_parse(format, &f))
    st = talus_fail(TALUS_ERR_ARGUMENT, "args",
                    "--export %s: unknown format '%s' (PNG16, R16, R32 or GTiff)", spec, format);
  return st;
}

talus_status export_from_erode(const char *input, const char *spec, int quiet) {
  char format[32];
  const char *path = NULL;
  talus_status st = export_spec_split(spec, format, sizeof format, &path);
  char *argv[] = {(char *)input, "-of", format, "-o", (char *)path, "-q", NULL};
  return st ? st : talus_export_app(quiet ? 6 : 5, argv);
}

talus_status talus_export_app(int argc, char **argv) {
  talus_error_clear();
  export_opts *o = calloc(1, sizeof *o);
  int help = 0;
  talus_status st = o ? TALUS_OK : talus_fail(TALUS_ERR_NOMEM, "export", "no memory");
  if (!st) st = export_parse(argc, argv, o, &help);
  if (!st && help) export_usage();
  if (!st && !help) {
    if (o->quiet) talus_log_set_level(0);
    st = export_check_outputs(o);
    if (!st) st = export_heightmap(o);
  }
  free(o);
  return st;
}
