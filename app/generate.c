/*
 * generate.c — `talus generate SCENE -o OUT`: the initial terrain of one of
 * the paper's scenes (or fBm noise) as a talus state GeoTIFF in a local
 * metric CRS. Band 1 is the surface, so any GIS shows the terrain; `talus
 * erode` reads the full layered state back (multi-column cells included).
 *
 * Scene coordinates: the geotransform is north-up (row 0 north, negative
 * pixel height) and its coordinates are the scene's metres, x east and y
 * north (talus_scene_geotransform), so the scene appears as the paper
 * draws it.
 */
#include "app.h"
#include "app/scenes.h"
#include "domain.h"
#include "io/state.h"

#include <stdlib.h>
#include <string.h>

#define LOCAL_METRIC_WKT "LOCAL_CS[\"talus local metric grid\",UNIT[\"metre\",1]]"

static void generate_usage(void) {
  printf("usage: talus generate SCENE -o OUT.tif [--size N] [--seed S] [--layers NZ]\n"
         "Writes the initial terrain of a scene as a talus state GeoTIFF, north-up, in the\n"
         "scene's metres (x east, y north; the paper's scenes span 0..256 m).\n"
         "  SCENE         one of:");
  for (int i = 0; i < talus_scene_count(); i++)
    printf(" %s", talus_scene_name(i));
  printf("\n  -o FILE       output GeoTIFF (required)\n"
         "  --size N      N x N cells (default 256); the paper's scenes are 256 m wide\n"
         "  --seed S      seed of the noise terrains (default 1)\n"
         "  --layers NZ   column slots per cell, 1..16 (default 8)\n"
         "  -co NAME=VALUE  GeoTIFF creation option; repeatable\n"
         "  -q, --quiet   no messages but errors\n"
         "  -h, --help, --version\n");
}

typedef struct generate_opts {
  const char *scene, *output;
  int64_t size, seed, layers;
  const char *co[65]; /* NULL-terminated -co list */
  int nco;
} generate_opts;

/* Parses argv into o; *stop is set when --help or --version ends the
 * command before it runs. */
static talus_status generate_parse(int argc, char **argv, generate_opts *o, int *stop) {
  app_args a = {argc, argv, 0};
  app_common c = {0};
  o->size = 256, o->seed = 1, o->layers = 8;
  while (a.i < argc) {
    const char *v = NULL, *arg = argv[a.i];
    int r;
    if (app_common_flag(&a, &c)) {
      if (c.help) generate_usage();
      if ((*stop = app_common_done(&c))) return TALUS_OK;
    } else if ((r = app_take(&a, "--output", "-o", &v))) {
      if (r < 0) return TALUS_ERR_ARGUMENT;
      o->output = v;
    } else if ((r = app_take(&a, "--size", NULL, &v))) {
      if (r < 0 || app_int("--size", v, 8, 65536, &o->size)) return TALUS_ERR_ARGUMENT;
    } else if ((r = app_take(&a, "--seed", NULL, &v))) {
      if (r < 0 || app_int("--seed", v, 0, 4294967295ll, &o->seed)) return TALUS_ERR_ARGUMENT;
    } else if ((r = app_take(&a, "--layers", NULL, &v))) {
      if (r < 0 || app_int("--layers", v, 1, 16, &o->layers)) return TALUS_ERR_ARGUMENT;
    } else if ((r = app_take(&a, "-co", "--co", &v))) {
      if (r < 0) return TALUS_ERR_ARGUMENT;
      if (o->nco < 64) o->co[o->nco++] = v;
    } else if (arg[0] == '-') {
      return talus_fail(TALUS_ERR_ARGUMENT, "args",
                        "unknown option '%s' (see talus generate --help)", arg);
    } else if (o->scene) {
      return talus_fail(TALUS_ERR_ARGUMENT, "args", "more than one scene: '%s' and '%s'", o->scene,
                        arg);
    } else {
      o->scene = arg;
      a.i++;
    }
  }
  if (!o->scene) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no scene given (see --help)");
  if (!o->output) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no output given (-o FILE.tif)");
  return app_check_geotiff_name("-o", o->output);
}

/* Writes the generated state with the scene's own georeferencing. */
static talus_status generate_write(const generate_opts *o, talus_domain *d) {
  talus_georef geo = {{0}, (char *)LOCAL_METRIC_WKT, 0, 0.0};
  talus_status st = talus_scene_geotransform(o->scene, talus_domain_nx(d), geo.gt);
  if (st) return st;
  talus_write_options wo = {.creation_options = o->co};
  return talus_state_write(o->output, d->tile, d->ctx.step, (double)d->ctx.P.cell_size, &geo, &wo);
}

talus_status talus_generate_app(int argc, char **argv) {
  talus_error_clear();
  generate_opts o = {0};
  int stop = 0;
  talus_status st = generate_parse(argc, argv, &o, &stop);
  if (st || stop) return st;
  st = app_check_writable(o.output);
  talus_tile *tile = NULL;
  talus_domain *d = NULL;
  double cell = 0.0;
  if (!st)
    st = talus_scene_build(o.scene, (int)o.size, (int)o.layers, (uint32_t)o.seed, &tile, &cell);
  if (!st) st = talus_domain_wrap(tile, cell, NULL, &d);
  if (!st) st = generate_write(&o, d);
  talus_domain_free(d);
  return st;
}
