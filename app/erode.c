/*
 * erode.c — `talus erode`: read a DEM or a talus state (and optional
 * hardness and rain maps), run the configured model (layered or
 * heightfield) for N steps, write the eroded surface, optional maps, the
 * state, a preview and a run report.
 *
 * Nothing is written until the run has finished: outputs are checked for
 * writability first (so a bad path fails in a second, not after an hour),
 * then each file is written to a temporary name and renamed by io/. A
 * cancelled or failed run leaves no output behind: a failure after some
 * files were renamed into place (say, the report) removes those too.
 */
#include "erode.h"
#include "export_app.h"
#include "io/state.h"
#include "io/export/driver.h"
#include "mpi/ranks.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void erode_usage(void) {
  printf(
      "usage: talus erode INPUT -o OUTPUT.tif [-of FORMAT] [options]\n"
      "Erodes a DEM (any GDAL raster, band 1 = height) or a talus state file. A DEM given\n"
      "no -c preset runs the built-in configs/dem-heightfield.ini (channels incised along\n"
      "the drainage, hillslopes nearly unchanged); a state continues with the parameters\n"
      "its run recorded (-c and --set apply over them).\n"
      "  -o, --output FILE      eroded surface, float32 metres (required): GeoTIFF, or -of's\n"
      "  -of FORMAT             GDAL driver of OUTPUT and the --maps (default GTiff; the\n"
      "                         --state stays GeoTIFF): any driver that writes Float32\n"
      "                         files, e.g. COG (with overviews), HFA, netCDF; the run\n"
      "                         streams a GeoTIFF under OUTPUT.rows.tif that the driver\n"
      "                         copies at the end. PNG holds no float: refused, use\n"
      "                         --export PNG16:PATH (a quantised 16-bit heightmap)\n"
      "  -c FILE                configuration preset (INI); repeatable, later wins\n"
      "  --set SECTION.KEY=VAL  override one key (see `talus params`); repeatable\n"
      "  --steps N              simulation steps (default 1000; with erosion.spinup > 0,\n"
      "                         as with the DEM presets: the spin-up + the --strength steps;\n"
      "                         a state continues with what is left of its spin-up)\n"
      "  --seconds T            simulated seconds instead of --steps: T / dt steps, rounded\n"
      "                         up, dt the run's time step (simulation.dt, shorter on cells\n"
      "                         finer than water.finest_cell: the scene presets' runs are\n"
      "                         the same seconds on any grid)\n"
      "  --strength S           light, medium (default) or heavy: erosion.spinup + 1000, 2500\n"
      "                         or 6000 droplet batches' steps when --steps is not given\n"
      "                         (x particles.every: dem-heightfield's batches come every 2\n"
      "                         steps, so medium is 1500 + 5000); the DEM presets' suggested\n"
      "                         run is medium\n"
      "  --maps                 also write <out>_water, _sand, _sediment, _erosion, _columns,\n"
      "                         _water_surface .tif (with -of: OUTPUT's extension)\n"
      "  --state FILE           write the full layered state (continue with `talus erode FILE`)\n"
      "  --preview FILE.png     hillshade before|after (default <out>_preview.png); the after\n"
      "                         panel tints water blue (faint when shallow, 63 %% at 0.3 m)\n"
      "                         and cells of more than one column (overhangs, caves, arches)\n"
      "                         orange; a layered run also writes <preview>_section.png, a\n"
      "                         cross-section along the row with the most such cells\n"
      "  --no-preview           do not write the preview (nor the section)\n"
      "  --report FILE.json     run report: parameters, timings, memory, mass ledger\n"
      "  --export FORMAT:PATH   also write PATH as `talus export OUT -of FORMAT -o PATH` would\n"
      "                         (PNG16, R16, R32, GTiff or a GDAL driver such as COG, with\n"
      "                         PATH.json; OBJ, PLY, GLB from the --state, which they need;\n"
      "                         MASKS[=M,...] the --mask splat map of the --state, default\n"
      "                         flow,wear,deposition,water, with simulation.masks turned on);\n"
      "                         repeatable\n"
      "  --cell-size M          cell size in metres (overrides the raster)\n"
      "  --z-scale F            multiply input heights by F\n"
      "  --nodata POLICY        outflow (default), wall or fill\n"
      "  --hardness FILE        per-cell hardness in [0,1] (band 1, heightfield model or\n"
      "                         thermal.enable); default thermal.hardness. Placed on the grid\n"
      "                         by georeference when both rasters have it (warped, bilinear;\n"
      "                         it must cover the terrain), else stretched over the terrain;\n"
      "                         tiled runs read it tile by tile\n"
      "  --rain-map FILE        per-cell rain rate [m/s] (band 1, heightfield model; placed\n"
      "                         like --hardness); tiled runs read each tile's window,\n"
      "                         halo included\n"
      "  -co NAME=VALUE         creation option of GTiff, or of -of's driver (then for\n"
      "                         OUTPUT and the --maps only); repeatable\n"
      "  --config KEY VALUE     GDAL configuration option\n"
      "  --threads N            CPU threads (default: all cores)\n"
      "  --device D             auto (default: the GPU if there is one, else the CPU), cpu or\n"
      "                         cuda (fail without a GPU); one GPU per MPI rank\n"
      "  --dry-run              print the plan (one piece or tiles, K, halo, store, memory\n"
      "                         and disk it needs) and run nothing\n"
      "  -q, --quiet            no progress bar or summary\n"
      "  -h, --help, --version\n"
      "Large maps (tiled runs; output bytes equal those of a run in one piece):\n"
      "  --mem-limit SIZE       memory the run may use, e.g. 512M, 4G (default: 3/4 of the\n"
      "                         RAM); a map that does not fit in one piece runs tiled, on disk\n"
      "                         when its tiles do not fit in memory either\n"
      "  --tile N               run in tiles of N x N cells (default when tiled: the largest\n"
      "                         multiple of 256 up to 2048 that fits the limit)\n"
      "  --steps-per-exchange K steps between halo exchanges (default: tile / (32 R), 1..8;\n"
      "                         on disk tile / (8 R), 1..32; R the step radius): halo K*R;\n"
      "                         larger K means more redundant halo work, fewer exchanges\n"
      "                         and less store I/O\n"
      "  --store DIR            keep tiles zstd-compressed in DIR (default when tiles do not\n"
      "                         fit in memory: <out>.store); removed after a successful run\n"
      "  --store-level N        zstd level of the disk store's tiles, -7..19 (default 1;\n"
      "                         negative: faster, bigger files; higher: smaller, slower);\n"
      "                         the tiles read back are the same at any level\n"
      "  --resume               continue a killed run from its --store DIR (same input,\n"
      "                         parameters, --steps, --tile and --steps-per-exchange)\n");
}

/* Parses the value of --device; returns 1, or -1 with the error recorded. */
static int erode_device_option(const char *v, erode_opts *o) {
  static const char *const names[] = {"auto", "cpu", "cuda"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(v, names[i])) return o->device = (talus_device)i, 1;
  talus_fail(TALUS_ERR_ARGUMENT, "args", "--device must be auto, cpu or cuda, not '%s'", v);
  return -1;
}

/* Steps after the spin-up per --strength (light, medium, heavy). Medium
 * is the DEM presets' suggested run: on Big Tujunga 30 m it incises the
 * channels by metres; heavy cuts deeper and may pass 5 % of the relief. */
static const char *const strength_names[] = {"light", "medium", "heavy"};
static const int64_t strength_steps[] = {1000, 2500, 6000};

/* Parses the value of --strength; returns 1, or -1 with the error recorded. */
static int erode_strength_option(const char *v, erode_opts *o) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(v, strength_names[i])) return o->strength = ERODE_STRENGTH_LIGHT + i, 1;
  talus_fail(TALUS_ERR_ARGUMENT, "args", "--strength must be light, medium or heavy, not '%s'", v);
  return -1;
}

/* The step count when --steps is absent: with a spin-up (the DEM presets)
 * or --strength, what is left of erosion.spinup (none for a state past
 * it) + the strength's steps (medium by default), times particles.every
 * when droplets run, so a strength is the same number of droplet batches
 * (the droplets do most of a DEM run's erosion; dem-heightfield runs them
 * every 2 steps to give the rivers time to carry their load); otherwise
 * the 1000 the parser set. */
static void erode_default_steps(erode_opts *o, const talus_params *p) {
  double spinup = 0.0, droplets = 0.0, every = 1.0;
  talus_params_get(p, "erosion.spinup", &spinup);
  if (o->steps_given || o->seconds > 0.0 || (!o->strength && !(spinup > 0.0))) return;
  talus_params_get(p, "particles.enable", &droplets);
  if (droplets != 0.0) talus_params_get(p, "particles.every", &every);
  int s = o->strength ? o->strength : ERODE_STRENGTH_MEDIUM;
  int64_t left = (int64_t)spinup - o->input_step;
  o->steps = (left > 0 ? left : 0) +
             strength_steps[s - ERODE_STRENGTH_LIGHT] * (every >= 1.0 ? (int64_t)every : 1);
}

/* The run's time step, said and used: where water.finest_cell shortens
 * dt on this grid, says so (a run's step is then not the preset's
 * simulation.dt); with --seconds T, sets the steps of that dt which cover
 * T, the last one ending at or after it. dt is derived on the input's
 * cells from its metadata, as the run derives it. */
static talus_status erode_time_steps(erode_opts *o, const talus_params *p) {
  double finest = 0.0, dt0 = 0.0;
  talus_params_get(p, "water.finest_cell", &finest);
  talus_params_get(p, "simulation.dt", &dt0);
  if (!(o->seconds > 0.0) && !(finest > 0.0)) return TALUS_OK;
  talus_kparams P;
  talus_status st = erode_input_kparams(o, p, &P, NULL);
  if (st) return st;
  if (!o->quiet && (double)P.dt != dt0)
    talus_info("water.finest_cell = %g m on %g m cells: the water runs as on %g m cells, in steps "
               "of %g s (simulation.dt %g s x %g)",
               finest, (double)P.cell_size, finest, (double)P.dt, dt0,
               (double)P.cell_size / finest);
  if (!(o->seconds > 0.0)) return TALUS_OK;
  /* dt is a float: 7 s of 0.7 s steps read as 10.0000002 steps, and mean 10 */
  double x = o->seconds / (double)P.dt, n = fabs(x - round(x)) <= 1e-6 * x ? round(x) : ceil(x);
  if (!(n <= (double)((int64_t)1 << 40)))
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--seconds %g in steps of %g s is %.3g steps: too many", o->seconds,
                      (double)P.dt, n);
  o->steps = (int64_t)n;
  if (!o->quiet)
    talus_info("--seconds %g: %lld steps of %g s", o->seconds, (long long)o->steps, (double)P.dt);
  return TALUS_OK;
}

/* Moves d to the backend --device asks for (picked, and the GPU set up,
 * once: as for a tiled run's context). */
static talus_status erode_device(const erode_opts *o, talus_domain *d) {
  return talus_backend_choose_reported(o->device, &d->ctx.backend);
}

/* The tiling options (erode_tiled.c); returns <0 on error, 0 if unknown. */
static int erode_tile_option(app_args *a, erode_opts *o) {
  const char *v = NULL;
  int64_t n = 0;
  int r;
  if ((r = app_take(a, "--tile", NULL, &v))) {
    if (r < 0 || app_int("--tile", v, 8, 1 << 20, &n)) return -1;
    return o->tile = (int)n, 1;
  }
  if ((r = app_take(a, "--steps-per-exchange", NULL, &v))) {
    if (r < 0 || app_int("--steps-per-exchange", v, 1, 4096, &n)) return -1;
    return o->steps_per_exchange = (int)n, 1;
  }
  if ((r = app_take(a, "--mem-limit", NULL, &v)))
    return r < 0 || app_size("--mem-limit", v, &o->mem_limit) ? -1 : 1;
  if ((r = app_take(a, "--store", NULL, &v))) return r < 0 ? r : (o->store_dir = v, 1);
  if ((r = app_take(a, "--store-level", NULL, &v))) {
    if (r < 0 || app_int("--store-level", v, TALUS_STORE_LEVEL_MIN, TALUS_STORE_LEVEL_MAX, &n))
      return -1;
    return o->store_level = (int)n, 1;
  }
  if (app_flag(a, "--resume", NULL)) return o->resume = 1;
  return 0;
}

/* Takes one --export FORMAT:PATH (checked now, run after the erosion); a
 * MASKS export turns simulation.masks on. Returns 1, or -1 with the error
 * recorded. */
static int erode_export_option(const char *v, erode_opts *o) {
  const char *path = NULL;
  int kind = 0;
  if (o->nexports >= ERODE_MAX_EXPORTS || o->nsets >= ERODE_MAX_LIST) {
    talus_fail(TALUS_ERR_ARGUMENT, "args", "at most %d --export options", ERODE_MAX_EXPORTS);
    return -1;
  }
  if (export_spec_check(v, &path, &kind)) return -1;
  o->exports[o->nexports++] = v;
  if (kind == EXPORT_MASKS) o->sets[o->nsets++] = "simulation.masks=true";
  return 1;
}

/* Runs every --export on the eroded surface, as `talus export OUTPUT -of
 * FORMAT -o PATH` does (rank 0 only: it alone holds the outputs). */
static talus_status erode_exports(const erode_opts *o) {
  talus_status st = TALUS_OK;
  for (int e = 0; !st && e < o->nexports && talus_mpi_rank() == 0; e++)
    st = export_from_erode(o->output, o->state, o->exports[e], o->quiet);
  return st;
}

/* Consumes one option at a->i into o; returns <0 on error, 0 if unknown. */
static int erode_option(app_args *a, erode_opts *o) {
  const char *v = NULL;
  int r;
  if ((r = app_take(a, "--output", "-o", &v))) return r < 0 ? r : (o->output = v, 1);
  if ((r = app_take(a, "-c", NULL, &v))) {
    if (r > 0 && o->nconfigs < ERODE_MAX_LIST) o->configs[o->nconfigs++] = v;
    return r;
  }
  if ((r = app_take(a, "--set", NULL, &v))) {
    if (r > 0 && o->nsets < ERODE_MAX_LIST) o->sets[o->nsets++] = v;
    return r;
  }
  if ((r = app_take(a, "-co", "--co", &v))) {
    if (r > 0 && o->nco < ERODE_MAX_LIST) o->co[o->nco++] = v;
    return r;
  }
  if ((r = app_take(a, "--steps", NULL, &v))) {
    o->steps_given = 1;
    return r < 0 ? r : (app_int("--steps", v, 0, (int64_t)1 << 40, &o->steps) ? -1 : 1);
  }
  if ((r = app_take(a, "--strength", NULL, &v))) return r < 0 ? r : erode_strength_option(v, o);
  if ((r = app_take(a, "--seconds", NULL, &v)))
    return r < 0 || app_real("--seconds", v, 1e-9, 1e12, &o->seconds) ? -1 : 1;
  if ((r = app_take(a, "--threads", NULL, &v))) {
    int64_t n = 0;
    if (r < 0 || app_int("--threads", v, 1, 4096, &n)) return -1;
    o->threads = (int)n;
    return 1;
  }
  if ((r = app_take(a, "--device", NULL, &v))) return r < 0 ? r : erode_device_option(v, o);
  if ((r = erode_tile_option(a, o))) return r;
  if ((r = app_take(a, "--state", NULL, &v))) return r < 0 ? r : (o->state = v, 1);
  if ((r = app_take(a, "--preview", NULL, &v))) return r < 0 ? r : (o->preview = v, 1);
  if ((r = app_take(a, "--report", NULL, &v))) return r < 0 ? r : (o->report = v, 1);
  if ((r = app_take(a, "--hardness", NULL, &v))) return r < 0 ? r : (o->hardness = v, 1);
  if ((r = app_take(a, "--rain-map", NULL, &v))) return r < 0 ? r : (o->rain_map = v, 1);
  if ((r = app_take(a, "--export", NULL, &v))) return r < 0 ? r : erode_export_option(v, o);
  if ((r = app_take(a, "-of", "--format", &v))) return r < 0 ? r : (o->format = v, 1);
  if (app_flag(a, "--maps", NULL)) return o->maps = 1;
  if (app_flag(a, "--no-preview", NULL)) return o->no_preview = 1;
  if (app_flag(a, "--dry-run", NULL)) return o->dry_run = 1;
  return 0;
}

/* Options that map onto configuration keys: applied after the presets,
 * in command-line order with the --set overrides. */
static int erode_key_option(app_args *a, erode_opts *o) {
  static const char *const map[][2] = {{"--cell-size", "input.cell_size"},
                                       {"--z-scale", "input.z_scale"},
                                       {"--nodata", "input.nodata"}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    const char *v = NULL;
    int r = app_take(a, map[i][0], NULL, &v);
    if (r <= 0) {
      if (r < 0) return r;
      continue;
    }
    if (o->nsets >= ERODE_MAX_LIST || o->nkeys >= ERODE_KEY_OPTS) {
      talus_fail(TALUS_ERR_ARGUMENT, "args", "too many overrides");
      return -1;
    }
    char *buf = o->keybuf[o->nkeys++];
    snprintf(buf, sizeof o->keybuf[0], "%s=%s", map[i][1], v);
    o->sets[o->nsets++] = buf;
    return 1;
  }
  return 0;
}

/* -of: GTiff (or none) keeps the .tif name rule; another driver must
 * write Float32 files (Byte too for --maps' column counts), checked before
 * anything is read. A driver of 16-bit codes only (PNG) is refused with
 * the way to the heightmap rule of talus export, which quantises. */
static talus_status erode_check_format(const erode_opts *o) {
  if (!erode_converts(o)) return app_check_geotiff_name("-o", o->output);
  talus_status st = talus_export_driver_check(o->format, "Float32");
  if (st && !talus_export_driver_check(o->format, "UInt16"))
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "-of %s: the driver writes no Float32 bands and talus erode writes heights "
                      "in metres; for a 16-bit heightmap add --export PNG16:PATH (or %s:PATH: "
                      "heights quantised over their range, given in PATH.json), or run talus "
                      "export OUT -of %s afterwards",
                      o->format, o->format, o->format);
  if (st) st = talus_export_driver_check(o->format, "Float32"); /* its reason, not UInt16's */
  if (!st && o->maps && (st = talus_export_driver_check(o->format, "Byte")))
    talus_fail_context(st, "-of %s --maps (the column counts are Byte)", o->format);
  return st;
}

/* Parses argv into o; *stop is set when --help or --version ends the
 * command before it runs. */
static talus_status erode_parse(int argc, char **argv, erode_opts *o, int *stop) {
  app_args a = {argc, argv, 0};
  app_common c = {0};
  o->steps = 1000;
  o->store_level = TALUS_STORE_LEVEL_DEFAULT;
  while (a.i < argc) {
    if (app_common_flag(&a, &c)) {
      o->quiet = c.quiet;
      if (c.help) erode_usage();
      if ((*stop = app_common_done(&c))) return TALUS_OK;
      continue;
    }
    int r = app_gdal_config(&a);
    if (!r) r = erode_option(&a, o);
    if (!r) r = erode_key_option(&a, o);
    if (r < 0) return TALUS_ERR_ARGUMENT;
    if (!r && app_input(&a, "erode", &o->input)) return TALUS_ERR_ARGUMENT;
  }
  if (!o->input) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no input raster given");
  if (o->seconds > 0.0 && (o->steps_given || o->strength))
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--seconds counts the steps: give it without %s",
                      o->steps_given ? "--steps" : "--strength");
  if (!o->output) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no output given (-o FILE.tif)");
  talus_status st = erode_check_format(o);
  if (!st && o->state) st = app_check_geotiff_name("--state", o->state);
  if (st) return st;
  for (int e = 0; e < o->nexports && !st; e++) {
    const char *path = NULL;
    int kind = 0;
    if (!export_spec_check(o->exports[e], &path, &kind) && kind && !o->state)
      st = talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--export %s: a mesh or masks are made from the layered state; add --state "
                      "FILE.tif",
                      o->exports[e]);
  }
  if (st) return st;
  if (o->resume && !o->store_dir)
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--resume needs --store DIR: the store of the run to continue");
  return TALUS_OK;
}

/* The built-in preset a DEM given no -c runs, by its cell size: the paper's
 * defaults are for metre-scale scenes and leave a real DEM looking
 * untouched. dem-heightfield was measured to incise channels from 1 m
 * (Big Tujunga rescaled) to 90 m (Mandakini) cells; outside [min, max] it
 * still runs, with a warning that it was not checked there. */
static const struct {
  double min_cell, max_cell; /* [m] */
  const char *preset;
} erode_dem_presets[] = {{1.0, 150.0, "dem-heightfield"}};

/* Picks the DEM preset for o->input by its cell size (input.cell_size
 * from p when set, else the raster's) into o->dem_preset, o->dem_cell. */
static void erode_dem_preset(erode_opts *o, const talus_params *p) {
  double cell = 0.0;
  talus_params_get(p, "input.cell_size", &cell);
  if (!(cell > 0.0) && talus_raster_cell_size(o->input, &cell)) cell = 0.0;
  talus_error_clear(); /* an unreadable input is reported by the load, in its words */
  int n = (int)(sizeof erode_dem_presets / sizeof erode_dem_presets[0]), i = 0;
  while (i < n - 1 && cell > erode_dem_presets[i].max_cell)
    i++;
  o->dem_preset = i + 1;
  o->dem_cell = cell;
}

/* Says which DEM preset runs, for how many steps, and warns outside the
 * cell sizes it was checked on. */
static void erode_dem_preset_say(const erode_opts *o) {
  if (!o->dem_preset) return;
  double cell = o->dem_cell, lo = erode_dem_presets[o->dem_preset - 1].min_cell,
         hi = erode_dem_presets[o->dem_preset - 1].max_cell;
  const char *name = erode_dem_presets[o->dem_preset - 1].preset;
  talus_info("a DEM of %.3g m cells and no -c preset: running the built-in preset %s (%lld "
             "steps; talus presets lists the others)",
             cell, name, (long long)o->steps);
  if (cell > 0.0 && (cell < lo || cell > hi))
    talus_warn("preset %s was checked on cells of %.3g to %.3g m, not %.3g m: pick one with -c",
               name, lo, hi, cell);
}

/* What a state input brings to its run, read in one open (io/state.h):
 * its recorded parameters as the base of the run, so `talus erode STATE`
 * continues with the model and keys that wrote it (none recorded: the
 * defaults, as before states recorded them); its step, for what is left
 * of the spin-up; and its hardness, which the heightfield model softens as
 * it runs, so --hardness would undo that: the state's band wins, and the
 * user is told. */
static talus_status erode_state_input(erode_opts *o, talus_params *p) {
  talus_bands_reader *r = NULL;
  talus_state_header h;
  talus_status st = talus_bands_reader_open(o->input, &r);
  if (!st) st = talus_state_header_reader(r, &h);
  if (!st) o->input_step = h.step;
  const char *ini = st ? NULL : talus_state_reader_params(r);
  if (ini) {
    char name[TALUS_PATH_MAX + 32];
    snprintf(name, sizeof name, "the parameters recorded in %s", o->input);
    st = talus_params_load_text(p, ini, name);
  }
  if (!st && o->hardness && talus_bands_reader_find(r, TALUS_STATE_HARD_NAME) >= 0) {
    talus_warn("%s holds its run's hardness (softened where it deposited): --hardness %s is "
               "ignored",
               o->input, o->hardness);
    o->hardness = NULL;
  }
  talus_bands_reader_close(r);
  return st;
}

/* Loads the base (a state's recorded parameters, or the built-in preset
 * erode_dem_preset picks for a DEM given no -c), presets, then --set
 * overrides, in that order; keeps the result's INI text for --state. */
static talus_status erode_params(erode_opts *o, talus_params **out) {
  talus_status st = talus_params_create(out);
  int state = talus_state_probe(o->input);
  for (int i = 0; !st && i < o->nsets; i++)
    st = app_param_override(*out, o->sets[i]);
  if (!st && o->nconfigs == 0 && !state) {
    erode_dem_preset(o, *out);
    talus_params_free(*out);
    *out = NULL;
    st = talus_params_create(out);
    if (!st) st = talus_params_load_builtin(*out, erode_dem_presets[o->dem_preset - 1].preset);
  }
  if (!st && state) st = erode_state_input(o, *out);
  for (int i = 0; !st && i < o->nconfigs; i++)
    st = talus_params_load(*out, o->configs[i]);
  for (int i = 0; !st && i < o->nsets; i++)
    st = app_param_override(*out, o->sets[i]);
  if (!st && !(o->params_ini = talus_params_ini_text(*out, "state"))) st = TALUS_ERR_NOMEM;
  return st;
}

/* The files a run writes, and what lay at each path before the run: a
 * failed run removes exactly the files it wrote (each was renamed into
 * place, so it has a new inode) and never one it did not touch. */
typedef struct erode_outputs {
  int n;
  char path[ERODE_MAX_OUTPUTS][ERODE_PATH_MAX];
  dev_t dev[ERODE_MAX_OUTPUTS];
  ino_t ino[ERODE_MAX_OUTPUTS];
} erode_outputs;

/* Every path we will write must be writable, and distinct from the input
 * and from each other (else one output would silently replace another),
 * before the run starts. */
static talus_status erode_check_outputs(erode_opts *o, const talus_params *p, erode_outputs *w) {
  if (!o->no_preview && !o->preview) {
    app_derived_path(o->preview_buf, sizeof o->preview_buf, o->output, "_preview.png");
    o->preview = o->preview_buf;
  }
  double model = 0.0;
  talus_params_get(p, "simulation.model", &model);
  if (!o->no_preview && model == 0.0) { /* layered: overhangs a hillshade cannot show */
    size_t n = strlen(o->preview);
    size_t stem = n >= 4 && !strcasecmp(o->preview + n - 4, ".png") ? n - 4 : n;
    snprintf(o->section_buf, sizeof o->section_buf, "%.*s_section.png", (int)stem, o->preview);
    o->section = o->section_buf;
  }
  int n = erode_output_paths(o, w->path);
  for (int i = 0; i < n; i++) {
    if (app_same_path(w->path[i], o->input))
      return talus_fail(TALUS_ERR_ARGUMENT, "output", "output '%s' would overwrite the input",
                        w->path[i]);
    for (int j = 0; j < i; j++)
      if (app_same_path(w->path[i], w->path[j]))
        return talus_fail(TALUS_ERR_ARGUMENT, "output", "'%s' and '%s' are the same file",
                          w->path[j], w->path[i]);
    talus_status st = app_check_writable(w->path[i]);
    if (st) return st;
  }
  for (w->n = 0; w->n < n; w->n++) {
    struct stat sb;
    int there = stat(w->path[w->n], &sb) == 0;
    w->dev[w->n] = there ? sb.st_dev : 0;
    w->ino[w->n] = there ? sb.st_ino : 0;
  }
  return TALUS_OK;
}

/* After a failure: removes the outputs this run wrote before it failed. */
static void erode_remove_written(const erode_outputs *w) {
  for (int i = 0; i < w->n; i++) {
    struct stat sb;
    if (stat(w->path[i], &sb) == 0 && S_ISREG(sb.st_mode) &&
        (sb.st_dev != w->dev[i] || sb.st_ino != w->ino[i]))
      remove(w->path[i]);
  }
}

/* The NoData mask of a state read whole, from its surface band. */
static talus_status erode_state_mask(const talus_bands *b, const talus_state_header *h,
                                     uint8_t **out) {
  size_t n = (size_t)b->nx * b->ny;
  uint8_t *mask = calloc(n, 1);
  *out = mask;
  if (!mask) return talus_fail(TALUS_ERR_NOMEM, "state", "no memory for the mask");
  for (size_t i = 0; i < n; i++)
    mask[i] = (uint8_t)talus_state_nodata(&b->geo, b->band[h->surface][i]);
  return TALUS_OK;
}

/* Column counts, then every stored layer field and accumulator, into the
 * domain's tile. */
static talus_status erode_state_fill(const talus_bands *b, const talus_state_header *h,
                                     talus_domain *d) {
  talus_tile *t = d->tile;
  if (h->columns < 0) return talus_fail(TALUS_ERR_FORMAT, "state", "state has no 'columns' band");
  talus_status st = talus_state_set_counts(t, t->buf, b->band[h->columns]);
  char name[TALUS_STATE_NAME_MAX];
  for (int k = 0; k < t->nz && !st; k++)
    for (int f = 0; f < TALUS_STATE_FIELDS; f++) {
      talus_state_band_name(k, f, name);
      int bi = talus_bands_find(b, name);
      if (bi < 0) continue; /* layers above the highest count are not stored */
      talus_state_set_layer(t, t->buf, f, k, b->band[bi]);
    }
  for (int a = 0; t->acc && a < TALUS_ACC_PLANES && !st; a++) {
    int bi = talus_bands_find(b, talus_state_acc_name(a));
    if (bi >= 0) talus_state_set_acc(t, t->buf, a, b->band[bi]);
  }
  for (int j = 0; t->fd && j < 4 && !st; j++) { /* heightfield.neighbours = 8 */
    int bi = talus_bands_find(b, talus_state_fdiag_name(j));
    if (bi >= 0) talus_state_set_fdiag(t, t->buf, j, b->band[bi]);
  }
  int hb = talus_bands_find(b, TALUS_STATE_HARD_NAME);
  if (t->hard && hb >= 0 && !st) talus_state_set_hard(t, t->buf, b->band[hb]);
  /* heightfield.grade_share keeps the drop of the run's first input; a
   * state without it takes its own terrain's (domain_init_grade_in) */
  int gb = talus_bands_find(b, TALUS_STATE_GRADE_NAME);
  if (talus_hf_grade_in(&d->ctx.P) && gb >= 0 && !st) {
    st = talus_tile_ensure(t, (void **)&t->grade_in, sizeof(float), "input drop");
    if (!st) talus_state_set_grade(t, t->buf, b->band[gb]);
  }
  return st;
}

/* A new domain from a state read whole (the format is io/state.h's; the
 * domain is app's). p supplies the physics; the state supplies geometry,
 * layers and step. */
static talus_status erode_state_domain(const talus_bands *b, const talus_params *params,
                                       talus_domain **out) {
  *out = NULL;
  talus_state_header h;
  talus_status st = talus_state_header_bands(b, &h);
  if (st) return st;
  talus_params *p = NULL;
  st = talus_params_copy(params, &p);
  char nz[32];
  snprintf(nz, sizeof nz, "%d", h.layers);
  if (!st) st = talus_params_set(p, "simulation.layers", nz);
  /* a state that holds accumulators keeps summing them */
  if (!st && talus_bands_find(b, talus_state_acc_name(0)) >= 0)
    st = talus_params_set(p, "simulation.masks", "1");
  uint8_t *mask = NULL;
  if (!st) st = erode_state_mask(b, &h, &mask);
  talus_domain *d = NULL;
  if (!st) st = talus_domain_create(&d, b->nx, b->ny, h.cell, b->band[h.bed0], mask, p);
  if (!st) st = erode_state_fill(b, &h, d);
  if (!st) d->ctx.step = h.step;
  free(mask);
  talus_params_free(p);
  if (st) {
    talus_domain_free(d);
    return st;
  }
  *out = d;
  return TALUS_OK;
}

/* Reads the input into a new domain: a talus state, or a DEM. */
static talus_status erode_load(const erode_opts *o, const talus_params *p, talus_domain **d,
                               talus_georef *geo) {
  if (talus_state_probe(o->input)) {
    talus_bands b;
    talus_status st = talus_bands_read(o->input, &b);
    if (st) return st;
    st = erode_state_domain(&b, p, d);
    if (!st) st = talus_georef_copy(geo, &b.geo);
    talus_bands_free(&b);
    return st;
  }
  talus_dem_options dopt = {0};
  double v = 0;
  talus_params_get(p, "input.nodata", &v);
  dopt.nodata_policy = (int)v;
  talus_params_get(p, "input.cell_size", &dopt.cell_size);
  dopt.z_scale = 1.0;
  talus_params_get(p, "input.z_scale", &dopt.z_scale);
  talus_dem dem;
  talus_status st = talus_dem_read(o->input, &dopt, &dem);
  if (st) return st;
  st = talus_domain_create(d, dem.nx, dem.ny, dem.cell_size, dem.height, dem.nodata, p);
  if (!st) st = talus_georef_copy(geo, &dem.geo);
  talus_dem_free(&dem);
  return st;
}

/* Applies the per-cell input maps (--hardness, --rain-map), each warped
 * onto the domain's grid by georeference (geo), or stretched over it when
 * either lacks georeferencing (and then says so). */
static talus_status erode_maps(const erode_opts *o, talus_domain *d, const talus_georef *geo) {
  const char *paths[2] = {o->hardness, o->rain_map};
  const talus_field fields[2] = {TALUS_FIELD_HARDNESS, TALUS_FIELD_RAIN};
  talus_status st = TALUS_OK;
  for (int i = 0; i < 2 && !st; i++) {
    if (!paths[i]) continue;
    float *v = NULL;
    int warped = 0;
    st = talus_raster_read_resampled(paths[i], talus_domain_nx(d), talus_domain_ny(d), geo, &v,
                                     &warped);
    if (!st && !warped && !o->quiet)
      talus_info("%s: the map or the terrain has no georeferencing; stretched over the terrain",
                 paths[i]);
    if (!st && (st = talus_domain_set_field(d, fields[i], 0, v)))
      talus_fail_context(st, "%s", paths[i]);
    talus_free(v);
  }
  return st;
}

/* The run after its parameters: outputs checked, one piece or tiled, the
 * outputs written. d and geo are the one-piece run's, freed by the caller. */
static talus_status erode_run(erode_opts *o, const talus_params *p, erode_outputs *w,
                              talus_domain **d, talus_georef *geo) {
  int tiled = 0;
  talus_status st = erode_check_outputs(o, p, w);
  if (!st) st = erode_use_tiles(o, p, &tiled);
  if (!st && tiled) return erode_tiled(o, p);
  if (!st) st = erode_load(o, p, d, geo);
  if (!st) st = erode_check_params(&(*d)->ctx.P);
  if (!st) st = erode_maps(o, *d, geo);
  if (!st) st = erode_device(o, *d);
  if (!st) st = erode_run_and_write(o, *d, geo, p);
  return st;
}

talus_status talus_erode_app(int argc, char **argv) {
  talus_error_clear();
  erode_opts *o = calloc(1, sizeof *o);
  erode_outputs *w = calloc(1, sizeof *w);
  talus_params *p = NULL;
  talus_domain *d = NULL;
  talus_georef geo = {0};
  int stop = 0;
  talus_status st = o && w ? TALUS_OK : talus_fail(TALUS_ERR_NOMEM, "erode", "no memory");
  if (o) o->t_start = talus_now();
  if (!st) st = talus_mpi_begin();
  if (!st) st = erode_parse(argc, argv, o, &stop);
  if (!st && !stop) {
    app_signals_catch();
    if (o->threads) omp_set_num_threads(o->threads);
    st = erode_params(o, &p);
    if (!st) erode_default_steps(o, p);
    if (!st) st = erode_time_steps(o, p);
    if (!st) erode_dem_preset_say(o);
    if (!st && o->dry_run) /* the plan only: nothing checked for writing, nothing run */
      st = erode_dry_run(o, p);
    else if (!st)
      st = erode_run(o, p, w, &d, &geo);
    if (!st && !o->dry_run) st = erode_exports(o);
    /* Under mpirun a failed rank's exit makes mpirun SIGTERM the others:
     * rank 0, which holds the agreed message, must live to print it. */
    if (talus_mpi_size() == 1) app_signals_restore();
  }
  if (st && w && talus_mpi_rank() == 0) erode_remove_written(w);
  if (st && talus_mpi_rank() != 0) /* every rank holds the agreed error: rank 0 shows it */
    if (!freopen("/dev/null", "w", stderr)) st = TALUS_ERR_IO;
  talus_mpi_end();
  talus_domain_free(d);
  talus_georef_free(&geo);
  talus_params_free(p);
  free(w);
  if (o) free(o->params_ini);
  free(o);
  return st;
}
