/*
 * export.c — `talus export INPUT -o OUT [-of FORMAT] …`: what leaves the
 * program for engines and DCC tools, from a finished run's output or
 * --state without re-running the erosion. Heightmaps (PNG16, R16, R32,
 * GTiff, io/export/heightmap.h) with a JSON sidecar "<OUT>.json", and
 * meshes of a state's solid with its overhangs (OBJ, PLY, GLB,
 * io/export/mesh.h), whole or one per tile.
 *
 * Design notes
 * ------------
 * - Texturing masks of a state (--mask; io/export/masks.h) in any GDAL
 *   driver; a vertical cross-section of a state as a PNG (--section;
 *   io/export/section.h), to see overhangs, arches and caves cut open.
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
#include "io/export/driver.h"
#include "io/export/heightmap.h"
#include "io/export/masks.h"
#include "io/export/mesh.h"
#include "io/export/section.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Prints `talus export --help`. */
static void export_usage(void) {
  printf("usage: talus export INPUT -o OUTPUT [-of FORMAT] [options]\n"
         "Writes a heightmap for a game engine or DCC tool from a raster: an eroded surface\n"
         "(talus erode -o), a talus --state file (its band 1, the surface) or any DEM; or a\n"
         "mesh of a state's solid (bedrock + sand) with every overhang, arch and cave; or\n"
         "texturing masks of a state (--mask).\n"
         "  -o, --output FILE   the heightmap; its JSON sidecar is FILE.json\n"
         "  -of FORMAT          PNG16 (16-bit PNG), R16 (RAW uint16 little-endian), R32\n"
         "                      (RAW float32 little-endian, metres) or GTiff (float32 metres),\n"
         "                      or any GDAL driver that writes files (COG, HFA, netCDF, ...):\n"
         "                      float32 metres, or 16-bit codes as PNG16's where the driver\n"
         "                      takes no float; default from the extension: .png .r16/.raw .r32\n"
         "                      .tif\n"
         "  --size N | WxH      output samples (default: the input's); any size, e.g. Unity\n"
         "                      2^n+1 (33..4097) or Unreal 1009, 2017, 4033, 8129; resampled\n"
         "                      by GDAL over the input's extent (pixel-is-area)\n"
         "  -r, --resampling R  %s\n"
         "  --z-range MIN,MAX   the range the 16-bit codes span [m] (default: the data's\n"
         "                      min and max, so min -> 0 and max -> 65535); heights outside\n"
         "                      are clamped; use one range for every tile of a world\n"
         "  --tiles C[xR]       an engine grid of C x R heightmaps OUTPUT_x<i>_y<j>.ext, each\n"
         "                      with its sidecar, sharing their edge rows and columns (Unreal\n"
         "                      World Partition, Unity terrain groups) and one Z range; the\n"
         "                      size must be C*(t-1)+1, e.g. --size 4033 --tiles 4 (1009 each);\n"
         "                      with --mask, the masks' splat maps cut the same way\n"
         "  --no-sidecar        do not write FILE.json (heightmaps and masks)\n"
         "  -co NAME=VALUE      creation option of GTiff or the GDAL driver; repeatable\n"
         "  --config KEY VALUE  GDAL configuration option\n"
         "  -q, --quiet         no progress bar\n"
         "  -h, --help, --version\n"
         "The sidecar gives the sample spacing (X/Y scale), the Z range, offset and\n"
         "quantum, Unreal's landscape scale in cm (Z = range_cm * 128 / 65535, about\n"
         "range_m * 100 / 512) and location Z, and Unity's terrain size and height offset.\n"
         "NoData becomes the minimum height in PNG16, R16 and R32 and stays NoData in GTiff.\n"
         "Meshes (-of OBJ, PLY or GLB, or .obj .ply .glb; INPUT a talus state): watertight\n"
         "(every edge shared by two triangles), with normals, metres, Y up, x east, z south\n"
         "from the map's north-west corner.\n"
         "  --mesh-style S      smooth (default): a corner where neighbouring caps step by at\n"
         "                      most --smooth-step is one vertex at their mean height (ramps\n"
         "                      are ramps; cliffs, overhang rims, thin sheets stay); blocks:\n"
         "                      every column a flat-topped box, axis-aligned faces\n"
         "  --smooth-step M     the highest step smoothed [m] (default two cells)\n"
         "  --multi-only        only cells of more than one column (what a heightmap cannot\n"
         "                      hold) and those within --margin of them\n"
         "  --margin N          cells around them (default 2)\n"
         "  --base Z            bottom of the lowest column [m] (default: the lowest surface\n"
         "                      of column 0 less max(1 m, a cell))\n"
         "  --crop X0,Y0,W,H    only the cells of that rectangle, closed along its edges (a\n"
         "                      section: its cut walls show caves and arches in profile)\n"
         "  --tile N            one mesh per N x N cells, OUTPUT_x<i>_y<j>.ext; tiles share\n"
         "                      their edge vertices exactly\n"
         "  --merge             fewer triangles: every vertex inside a flat cap or wall goes\n"
         "                      and its neighbours' polygon is re-triangulated (still closed,\n"
         "                      same surface and volume; tiles keep their edge vertices)\n"
         "  --max-triangles N   refuse (write nothing) a mesh, or a tile's, of more than N\n"
         "                      triangles\n"
         "Masks for texturing (INPUT a talus state; flow, wear and deposition need a run with\n"
         "--set simulation.masks=true, which sums them every step and saves them in --state):\n"
         "  --mask M[,M...]     1 to 4 of flow (water that left the cell over the run, m3),\n"
         "                      wear / deposition (solid the cell lost / gained, summed per\n"
         "                      step, m), water, sediment, sand (on the top column at the end,\n"
         "                      m); several are packed as the R, G, B, A channels (two: RGB)\n"
         "  -of DRIVER          any GDAL driver that writes files (PNG, GTiff, COG, JPEG, ...);\n"
         "                      default from the extension: .png PNG, .tif GTiff\n"
         "  --bits 8|16|32      8- or 16-bit codes of the 0-1 masks, or 32: float32 in the\n"
         "                      physical units (default 32 for GTiff and COG, else 8)\n"
         "  --size N | WxH, -r  a splat map of N x N (W x H) samples over the map, resampled\n"
         "                      by GDAL after the codes are computed (e.g. Unity 1024)\n"
         "  --mask-scale M=V    the value that reads as 1 (defaults: wear, deposition, water,\n"
         "                      sand 1 m, sediment 0.1 m, flow 1 m2); linear, clamped, except\n"
         "                      flow: log10(1 + m3 / cell size / V) / 3 (three decades of\n"
         "                      discharge per metre of width); the same for every tile and\n"
         "                      resolution of a map, never stretched to the map's range\n"
         "A cross-section of a state (INPUT a talus state, OUTPUT a .png): one row or column\n"
         "cut open, rock brown, sand yellow, water blue, air pale; overhangs, arches and caves\n"
         "show as air under rock. No vertical exaggeration unless it would exceed 1024 px:\n"
         "  --section y=ROW | x=COLUMN   the cut, in cells from the top-left (north-west)\n"
         "  --section-px N      pixels per cell (default: up to 1024 px across, at most 8)\n",
         talus_hm_resampling_names());
}

#define EXPORT_MAX_CO 64

/* Parsed `talus export` options; strings point into argv. */
typedef struct export_opts {
  const char *input, *output, *format;
  talus_heightmap_options hm;
  const char *co[EXPORT_MAX_CO + 1];
  int nco, no_sidecar, quiet;
  int mesh; /* a mesh format was asked for */
  talus_mesh_format mesh_format;
  talus_mesh_options mo;
  int mesh_style; /* --mesh-style or --smooth-step given */
  int64_t tile;
  int tiles_x, tiles_y; /* --tiles CxR: an engine grid of heightmaps or masks */
  int masks;            /* --mask was given: texturing masks of a state */
  talus_mask_options mk;
  int section; /* --section was given: a cross-section PNG of a state */
  talus_section_options so;
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

/* Parses --tiles "C" or "CxR" (tiles across, down). */
static talus_status export_tiles(const char *v, export_opts *o) {
  int c = 0, r = 0, n = sscanf(v, "%dx%d", &c, &r);
  if (n == 1) r = c;
  if (n < 1 || c < 1 || r < 1 || c > 1024 || r > 1024)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--tiles expects C or CxR (1..1024), got '%s'",
                      v);
  o->tiles_x = c, o->tiles_y = r;
  return TALUS_OK;
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

/* Parses --crop "X0,Y0,W,H" (cells). */
static talus_status export_crop(const char *v, export_opts *o) {
  talus_mesh_options *m = &o->mo;
  if (sscanf(v, "%d,%d,%d,%d", &m->crop_x0, &m->crop_y0, &m->crop_w, &m->crop_h) != 4 ||
      m->crop_x0 < 0 || m->crop_y0 < 0 || m->crop_w < 1 || m->crop_h < 1)
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--crop expects X0,Y0,W,H in cells (W, H >= 1), got '%s'", v);
  m->crop = 1;
  return TALUS_OK;
}

/* Parses --mesh-style "blocks" or "smooth". */
static talus_status export_style(const char *v, export_opts *o) {
  if (strcmp(v, "blocks") && strcmp(v, "smooth"))
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--mesh-style expects blocks or smooth, got '%s'",
                      v);
  o->mo.blocks = !strcmp(v, "blocks"), o->mesh_style = 1;
  return TALUS_OK;
}

/* Parses --mask "NAME[,NAME...]" (1..TALUS_MASK_MAX names). */
static talus_status export_masks(const char *v, export_opts *o) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", v);
  o->masks = 1, o->mk.n = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int m = talus_mask_parse(t);
    if (m < 0 || o->mk.n == TALUS_MASK_MAX)
      return talus_fail(TALUS_ERR_ARGUMENT, "args",
                        m < 0 ? "--mask: unknown mask '%s' (flow, wear, deposition, water, "
                                "sediment, sand)"
                              : "--mask: at most 4 masks per file (RGBA), got more at '%s'",
                        t);
    o->mk.kind[o->mk.n++] = (talus_mask)m;
  }
  return o->mk.n ? TALUS_OK : talus_fail(TALUS_ERR_ARGUMENT, "args", "--mask names no mask");
}

/* Parses --mask-scale "NAME=VALUE". */
static talus_status export_mask_scale(const char *v, export_opts *o) {
  char name[32];
  const char *eq = strchr(v, '=');
  int m = -1;
  if (eq && eq - v < (long)sizeof name) {
    snprintf(name, sizeof name, "%.*s", (int)(eq - v), v);
    m = talus_mask_parse(name);
  }
  if (m < 0)
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--mask-scale expects MASK=VALUE with a mask name, got '%s'", v);
  return app_real("--mask-scale", eq + 1, 1e-12, 1e12, &o->mk.scale[m]);
}

/* Parses --section "y=ROW" (a row, cells along x) or "x=COLUMN". */
static talus_status export_section_at(const char *v, export_opts *o) {
  int64_t n = 0;
  if ((v[0] != 'x' && v[0] != 'y') || v[1] != '=')
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--section expects y=ROW or x=COLUMN (cells from the top-left), got '%s'", v);
  if (app_int("--section", v + 2, 0, 1 << 30, &n)) return TALUS_ERR_ARGUMENT;
  o->section = 1, o->so.along_x = v[0] == 'y', o->so.index = (int)n;
  return TALUS_OK;
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
  if ((r = app_take(a, "--mask", NULL, &v))) return r < 0 || export_masks(v, o) ? -1 : 1;
  if ((r = app_take(a, "--mask-scale", NULL, &v))) return r < 0 || export_mask_scale(v, o) ? -1 : 1;
  if (app_flag(a, "--multi-only", NULL)) return o->mo.multi_only = 1;
  if (app_flag(a, "--merge", NULL)) return o->mo.merge = 1;
  if ((r = app_take(a, "--mesh-style", NULL, &v))) return r < 0 || export_style(v, o) ? -1 : 1;
  if ((r = app_take(a, "--smooth-step", NULL, &v)))
    return r < 0 || app_real("--smooth-step", v, 1e-6, 1e6, &o->mo.smooth_step)
               ? -1
               : (o->mesh_style = 1);
  if ((r = app_take(a, "--max-triangles", NULL, &v)))
    return r < 0 || app_int("--max-triangles", v, 1, INT64_MAX / 2, &o->mo.max_triangles) ? -1 : 1;
  int64_t n = 0;
  if ((r = app_take(a, "--section", NULL, &v))) return r < 0 || export_section_at(v, o) ? -1 : 1;
  if ((r = app_take(a, "--section-px", NULL, &v)))
    return r < 0 || app_int("--section-px", v, 1, 64, &n) ? -1 : (o->so.px = (int)n, 1);
  if ((r = app_take(a, "--bits", NULL, &v)))
    return r < 0 || app_int("--bits", v, 8, 32, &n) ? -1 : (o->mk.bits = (int)n, 1);
  if ((r = app_take(a, "--margin", NULL, &v)))
    return r < 0 || app_int("--margin", v, 0, 1000, &n) ? -1 : (o->mo.margin = (int)n, 1);
  if ((r = app_take(a, "--tile", NULL, &v)))
    return r < 0 || app_int("--tile", v, 1, 1 << 20, &o->tile) ? -1 : 1;
  if ((r = app_take(a, "--tiles", NULL, &v))) return r < 0 || export_tiles(v, o) ? -1 : 1;
  if ((r = app_take(a, "--crop", NULL, &v))) return r < 0 || export_crop(v, o) ? -1 : 1;
  if ((r = app_take(a, "--base", NULL, &v)))
    return r < 0 || app_real("--base", v, -1e7, 1e7, &o->mo.base) ? -1 : (o->mo.base_given = 1);
  return 0;
}

/* A heightmap in GDAL driver `name`: float32 metres where it takes
 * Float32, else 16-bit codes where it takes UInt16 (*coded set); the
 * driver's refusal when it takes neither or cannot write, a message naming
 * talus's own formats when no such driver exists. */
static talus_status export_gdal_format(const char *name, int *coded) {
  *coded = 0;
  if (!talus_export_driver_check(name, "Float32")) return TALUS_OK;
  *coded = 1;
  talus_status st = talus_export_driver_check(name, "UInt16");
  if (!st || !strstr(talus_last_error(), "unknown GDAL driver")) return st;
  return talus_fail(TALUS_ERR_ARGUMENT, "args",
                    "unknown format '%s': not PNG16, R16, R32, GTiff, OBJ, PLY or GLB, nor a GDAL "
                    "driver that writes files (`gdalinfo --formats`; see talus export --help)",
                    name);
}

/* The format: -of, else the output's extension. */
static talus_status export_format(export_opts *o) {
  if (o->format) {
    o->mesh = talus_mesh_format_parse(o->format, &o->mesh_format);
    if (o->mesh || talus_hm_format_parse(o->format, &o->hm.format)) return TALUS_OK;
    o->hm.format = TALUS_HM_GDAL, o->hm.driver = o->format;
    return export_gdal_format(o->format, &o->hm.coded);
  }
  o->mesh = talus_mesh_format_from_path(o->output, &o->mesh_format);
  if (!o->mesh && !talus_hm_format_from_path(o->output, &o->hm.format))
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "no -of FORMAT, and the extension of '%s' names none (.png .r16 .raw .r32 "
                      ".tif .obj .ply .glb)",
                      o->output);
  return TALUS_OK;
}

/* 1 when an option only meshes take was given. */
static int export_mesh_options_given(const export_opts *o) {
  const talus_mesh_options *m = &o->mo;
  return m->multi_only || m->base_given || o->tile || m->crop || m->merge || m->max_triangles ||
         o->mesh_style;
}

/* Settles a mask export: the GDAL driver (-of, else PNG for .png and GTiff
 * for .tif) and the bits (default float for GTiff and COG, else 8). */
static talus_status export_settle_masks(export_opts *o) {
  const char *dot = strrchr(o->output, '.');
  o->mk.driver = o->format;
  if (!o->mk.driver && dot && !strcasecmp(dot, ".png")) o->mk.driver = "PNG";
  if (!o->mk.driver && dot && (!strcasecmp(dot, ".tif") || !strcasecmp(dot, ".tiff")))
    o->mk.driver = "GTiff";
  if (!o->mk.driver)
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "no -of DRIVER, and the extension of '%s' names none (.png .tif)", o->output);
  int gtiff = !strcasecmp(o->mk.driver, "GTiff") || !strcasecmp(o->mk.driver, "COG");
  if (!o->mk.bits) o->mk.bits = gtiff ? 32 : 8;
  if (o->mk.bits != 8 && o->mk.bits != 16 && o->mk.bits != 32)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--bits takes 8, 16 or 32 (float), got %d",
                      o->mk.bits);
  if (o->mk.bits == 32) o->mk.bits = 0;
  o->mk.creation_options = o->co;
  o->mk.width = o->hm.width, o->mk.height = o->hm.height, o->mk.resampling = o->hm.resampling;
  if (o->hm.z_stated || export_mesh_options_given(o))
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--mask takes neither --z-range nor the mesh options");
  return TALUS_OK;
}

/* Settles a section export: a PNG, and none of the other outputs' options. */
static talus_status export_settle_section(export_opts *o) {
  const char *dot = strrchr(o->output, '.');
  if (o->format ? strcasecmp(o->format, "PNG") != 0 : !(dot && !strcasecmp(dot, ".png")))
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--section writes a PNG (-o FILE.png)");
  if (o->masks || o->hm.width || o->hm.z_stated || o->tiles_x || o->mk.bits ||
      export_mesh_options_given(o))
    return talus_fail(TALUS_ERR_ARGUMENT, "args",
                      "--section takes none of the heightmap, mask and mesh options");
  o->no_sidecar = 1;
  return TALUS_OK;
}

/* Settles the format and refuses the options that do not fit it. */
static talus_status export_settle(export_opts *o) {
  o->hm.creation_options = o->co;
  if (o->section) return export_settle_section(o);
  if (o->so.px) return talus_fail(TALUS_ERR_ARGUMENT, "args", "--section-px is for --section");
  if (o->masks) return export_settle_masks(o);
  if (o->mk.bits) return talus_fail(TALUS_ERR_ARGUMENT, "args", "--bits is for masks (--mask)");
  talus_status st = export_format(o);
  if (!st && !o->mesh && export_mesh_options_given(o))
    st = talus_fail(TALUS_ERR_ARGUMENT, "args",
                    "--multi-only, --base, --crop, --tile, --merge, --max-triangles, --mesh-style "
                    "and --smooth-step are for meshes (-of OBJ, PLY or GLB)");
  if (!st && o->mesh && (o->hm.width || o->hm.z_stated || o->tiles_x))
    st = talus_fail(TALUS_ERR_ARGUMENT, "args",
                    "--size, --z-range and --tiles are for heightmaps (--tile N for meshes)");
  if (o->mesh) o->no_sidecar = 1;
  return st;
}

/* Parses argv into o (*stop set when --help or --version ends the
 * command), then settles the format and refuses options that do not fit
 * it (export_settle). */
static talus_status export_parse(int argc, char **argv, export_opts *o, int *stop) {
  app_args a = {argc, argv, 0};
  app_common c = {0};
  while (a.i < argc) {
    if (app_common_flag(&a, &c)) {
      o->quiet = c.quiet;
      if (c.help) export_usage();
      if ((*stop = app_common_done(&c))) return TALUS_OK;
      continue;
    }
    int r = app_gdal_config(&a);
    if (!r) r = export_option(&a, o);
    if (r < 0) return TALUS_ERR_ARGUMENT;
    if (!r && app_input(&a, "export", &o->input)) return TALUS_ERR_ARGUMENT;
  }
  if (!o->input) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no input raster given");
  if (!o->output) return talus_fail(TALUS_ERR_ARGUMENT, "args", "no output given (-o FILE)");
  return export_settle(o);
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
    talus_info("wrote %s (%s, %d x %d, %.4g m spacing, Z %.6g..%.6g m)", o->output, info.driver,
               info.width, info.height, info.dx, info.zmin, info.zmax);
  return st;
}

/* "<output less its extension>_x<i>_y<j><extension>" into out[size]. */
static void export_tile_path(char *out, size_t size, const char *output, int64_t i, int64_t j) {
  const char *slash = strrchr(output, '/'), *dot = strrchr(slash ? slash + 1 : output, '.');
  int stem = dot ? (int)(dot - output) : (int)strlen(output);
  snprintf(out, size, "%.*s_x%lld_y%lld%s", stem, output, (long long)i, (long long)j,
           dot ? dot : "");
}

/* Writes tile (i, j) of t × u samples with one stated range, and its
 * sidecar. */
static talus_status export_hm_tile(export_opts *o, const talus_heightmap_info *all, int i, int j,
                                   int t, int u, char *path, size_t size) {
  talus_heightmap_options hm = o->hm;
  talus_heightmap_info info;
  char side[TALUS_PATH_BUF + 8];
  hm.z_stated = all->zmax > all->zmin, hm.zmin = all->zmin, hm.zmax = all->zmax;
  hm.win_x0 = i * (t - 1), hm.win_y0 = j * (u - 1), hm.win_w = t, hm.win_h = u;
  export_tile_path(path, size, o->output, i, j);
  talus_status st = talus_heightmap_export(o->input, path, &hm, &info, NULL, NULL);
  export_sidecar_path(side, sizeof side, path);
  const char *slash = strrchr(path, '/');
  if (!st && !o->no_sidecar) st = talus_heightmap_sidecar(side, slash ? slash + 1 : path, &info);
  if (st) remove(path);
  return st;
}

/* Removes tiles (0, 0) .. the n-th (row by row) and their sidecars. */
static void export_hm_untile(const export_opts *o, int n) {
  char path[TALUS_PATH_BUF], side[TALUS_PATH_BUF + 8];
  for (int k = 0; k < n; k++) {
    export_tile_path(path, sizeof path, o->output, k % o->tiles_x, k / o->tiles_x);
    export_sidecar_path(side, sizeof side, path);
    remove(path), remove(side);
  }
}

/* An engine grid of heightmaps sharing their edges and one Z range (the
 * whole grid's, or --z-range); all tiles or none. */
static talus_status export_hm_tiles(export_opts *o) {
  talus_heightmap_info all;
  char path[TALUS_PATH_BUF];
  talus_status st = talus_heightmap_scan(o->input, &o->hm, &all, NULL, NULL);
  talus_export_grid grid = {o->tiles_x, o->tiles_y, NULL, NULL};
  int t = 0, u = 0;
  if (!st) st = talus_export_grid_split(&grid, all.width, all.height, &t, &u);
  int done = 0;
  for (int j = 0; !st && j < o->tiles_y; j++)
    for (int i = 0; !st && i < o->tiles_x; i++, done++)
      st = export_hm_tile(o, &all, i, j, t, u, path, sizeof path);
  if (st) export_hm_untile(o, done);
  if (!st)
    talus_info("wrote %d x %d tiles of %d x %d samples (Z %.6g..%.6g m)", o->tiles_x, o->tiles_y, t,
               u, all.zmin, all.zmax);
  return st;
}

/* Meshes the cells of rectangle (x0, y0, w, h) strip by strip into m. */
static talus_status export_mesh_rect(talus_mesh_source *s, int x0, int y0, int w, int h,
                                     talus_mesh *m, app_progress *bar) {
  talus_status st = TALUS_OK;
  for (int y = y0; y < y0 + h && !st; y += TALUS_RASTER_WINDOW_ROWS) {
    int rows = y0 + h - y < TALUS_RASTER_WINDOW_ROWS ? y0 + h - y : TALUS_RASTER_WINDOW_ROWS;
    st = talus_mesh_add_rect(s, x0, y, w, rows, m);
    if (!st && bar && !app_progress_cb((double)(y + rows - y0) / h, NULL, bar))
      st = talus_fail(TALUS_ERR_CANCELLED, "export", "cancelled");
  }
  return st;
}

/* --merge, then --max-triangles: the mesh of `what` as it will be written,
 * or a refusal naming its size (nothing is written). */
static talus_status export_mesh_budget(const export_opts *o, talus_mesh *m, const char *what) {
  size_t before = m->nt;
  talus_status st = o->mo.merge ? talus_mesh_merge_coplanar(m) : TALUS_OK;
  if (!st && o->mo.merge && !o->quiet)
    talus_info("%s: %zu triangles merged into %zu", what, before, m->nt);
  if (!st && o->mo.max_triangles && (int64_t)m->nt > o->mo.max_triangles)
    st = talus_fail(TALUS_ERR_ARGUMENT, "export",
                    "%s has %zu triangles, over --max-triangles %lld; try %s--multi-only, --crop "
                    "or --tile",
                    what, m->nt, (long long)o->mo.max_triangles, o->mo.merge ? "" : "--merge, ");
  return st;
}

/* One mesh per --tile N x N cells; tiles with nothing selected are left
 * out. */
static talus_status export_mesh_tiles(export_opts *o, talus_mesh_source *s) {
  int nx = talus_mesh_source_nx(s), ny = talus_mesh_source_ny(s), written = 0;
  char path[TALUS_PATH_BUF];
  talus_status st = TALUS_OK;
  for (int64_t ty = 0; ty * o->tile < ny && !st; ty++)
    for (int64_t tx = 0; tx * o->tile < nx && !st; tx++) {
      int x0 = (int)(tx * o->tile), y0 = (int)(ty * o->tile);
      int w = nx - x0 < o->tile ? nx - x0 : (int)o->tile,
          h = ny - y0 < o->tile ? ny - y0 : (int)o->tile;
      talus_mesh m = {0};
      st = export_mesh_rect(s, x0, y0, w, h, &m, NULL);
      export_tile_path(path, sizeof path, o->output, tx, ty);
      if (!st && m.nt) st = export_mesh_budget(o, &m, path);
      if (!st && m.nt) st = talus_mesh_write(&m, o->mesh_format, path);
      written += !st && m.nt;
      talus_mesh_free(&m);
    }
  if (!st)
    talus_info("wrote %d mesh tiles of %lld x %lld cells", written, (long long)o->tile,
               (long long)o->tile);
  return st;
}

/* The rectangle of cells a mesh covers: the map, or its crop within it. */
static talus_status export_mesh_extent(const export_opts *o, const talus_mesh_source *s, int r[4]) {
  int nx = talus_mesh_source_nx(s), ny = talus_mesh_source_ny(s);
  const talus_mesh_options *m = &o->mo;
  r[0] = 0, r[1] = 0, r[2] = nx, r[3] = ny;
  if (!m->crop) return TALUS_OK;
  if (m->crop_x0 + m->crop_w > nx || m->crop_y0 + m->crop_h > ny)
    return talus_fail(TALUS_ERR_ARGUMENT, "args", "--crop %d,%d,%d,%d leaves the %d x %d map",
                      m->crop_x0, m->crop_y0, m->crop_w, m->crop_h, nx, ny);
  r[0] = m->crop_x0, r[1] = m->crop_y0, r[2] = m->crop_w, r[3] = m->crop_h;
  return TALUS_OK;
}

/* Tile (i, j)'s file name of --tiles (a talus_export_grid's path_of). */
static void export_grid_path(void *user, int i, int j, char *buf, size_t size) {
  export_tile_path(buf, size, ((const export_opts *)user)->output, i, j);
}

/* The sidecar of every file written: the one, or each tile's. */
static talus_status export_mask_sidecars(const export_opts *o, double cell) {
  char path[TALUS_PATH_BUF], side[TALUS_PATH_BUF + 8];
  int n = o->tiles_x ? o->tiles_x * o->tiles_y : 1;
  talus_status st = TALUS_OK;
  for (int k = 0; k < n && !st; k++) {
    if (o->tiles_x)
      export_tile_path(path, sizeof path, o->output, k % o->tiles_x, k / o->tiles_x);
    else
      snprintf(path, sizeof path, "%s", o->output);
    export_sidecar_path(side, sizeof side, path);
    const char *slash = strrchr(path, '/');
    st = talus_mask_sidecar(side, slash ? slash + 1 : path, &o->mk, cell);
  }
  return st;
}

/* The masks of the state o->input: one file, or an engine grid of tiles
 * sharing their edges (--tiles), each with its sidecar; all or nothing. */
static talus_status export_mask_file(export_opts *o) {
  app_progress bar;
  app_progress_begin(&bar, "exporting", 100, o->quiet);
  double cell = 0.0;
  talus_export_grid grid = {o->tiles_x, o->tiles_y, export_grid_path, o};
  o->mk.grid = o->tiles_x ? &grid : NULL;
  talus_status st = talus_mask_export(o->input, o->output, &o->mk, &cell, app_progress_cb, &bar);
  app_progress_end(&bar);
  if (!st && !o->no_sidecar && (st = export_mask_sidecars(o, cell))) {
    if (o->tiles_x) /* the files are ours: none stays without its sidecar */
      export_hm_untile(o, o->tiles_x * o->tiles_y);
    else
      remove(o->output), remove(o->sidecar);
  }
  if (!st)
    talus_info("wrote %s%s (%d mask%s, %s, %s)", o->tiles_x ? "the tiles of " : "", o->output,
               o->mk.n, o->mk.n > 1 ? "s" : "",
               o->mk.bits ? (o->mk.bits == 8 ? "8-bit 0-1" : "16-bit 0-1") : "float32 physical",
               o->mk.driver);
  return st;
}

/* The mesh of the state o->input: one file, or one per tile. */
static talus_status export_mesh(export_opts *o) {
  talus_mesh_source *s = NULL;
  int r[4];
  talus_status st = talus_mesh_source_open(o->input, &o->mo, &s);
  if (!st) st = export_mesh_extent(o, s, r);
  if (!st && o->tile) st = export_mesh_tiles(o, s);
  if (!st && !o->tile) {
    talus_mesh m = {0};
    app_progress bar;
    app_progress_begin(&bar, "meshing", 100, o->quiet);
    st = export_mesh_rect(s, r[0], r[1], r[2], r[3], &m, &bar);
    app_progress_end(&bar);
    if (!st) st = export_mesh_budget(o, &m, o->output);
    if (!st) st = talus_mesh_write(&m, o->mesh_format, o->output);
    if (!st)
      talus_info("wrote %s (%zu vertices, %zu triangles, %.9g m3 enclosed above the base %g m)",
                 o->output, m.nv, m.nt, talus_mesh_volume(&m), talus_mesh_source_base(s));
    talus_mesh_free(&m);
  }
  talus_mesh_source_close(s);
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

/* The masks of an --export format "MASKS" or "MASKS=M[,M...]" into
 * list[size] (the default splat map: flow,wear,deposition,water); 0 when
 * the format names no masks. */
static int export_spec_masks(const char *format, char *list, size_t size) {
  if (strncasecmp(format, "MASKS", 5) || (format[5] && format[5] != '=')) return 0;
  snprintf(list, size, "%s", format[5] ? format + 6 : "flow,wear,deposition,water");
  return 1;
}

talus_status export_spec_check(const char *spec, const char **path, int *kind) {
  char format[EXPORT_SPEC_MAX], list[EXPORT_SPEC_MAX];
  talus_hm_format f;
  talus_mesh_format mf;
  int coded = 0;
  talus_status st = export_spec_split(spec, format, sizeof format, path);
  *kind = EXPORT_HEIGHTMAP;
  if (!st && export_spec_masks(format, list, sizeof list)) {
    export_opts o = {0};
    *kind = EXPORT_MASKS;
    return export_masks(list, &o) ? talus_fail_context(TALUS_ERR_ARGUMENT, "--export %s", spec)
                                  : TALUS_OK;
  }
  if (!st && talus_mesh_format_parse(format, &mf)) *kind = EXPORT_MESH;
  if (!st && !*kind && !talus_hm_format_parse(format, &f) && export_gdal_format(format, &coded))
    st = talus_fail_context(TALUS_ERR_ARGUMENT, "--export %s", spec);
  return st;
}

talus_status export_from_erode(const char *output, const char *state, const char *spec, int quiet) {
  char format[EXPORT_SPEC_MAX], list[EXPORT_SPEC_MAX];
  const char *path = NULL;
  int kind = 0;
  talus_status st = export_spec_check(spec, &path, &kind);
  if (!st) export_spec_split(spec, format, sizeof format, &path);
  if (st) return st;
  const char *input = kind ? state : output;
  char *argv[] = {(char *)input, "-of", format, "-o", (char *)path, "-q", NULL};
  if (kind == EXPORT_MASKS) { /* the file's extension picks the driver */
    export_spec_masks(format, list, sizeof list);
    argv[1] = "--mask", argv[2] = list;
  }
  return talus_export_app(quiet ? 6 : 5, argv);
}

/* Writes the cross-section PNG of the input state (--section). */
static talus_status export_section(export_opts *o) {
  talus_section_info in;
  talus_status st = talus_section_png(o->input, &o->so, o->output, &in);
  if (!st && !o->quiet)
    talus_info("wrote %s (%s %d: %d cells, %d of several columns; %d x %d px, %.3g m per pixel "
               "across, %.3g up, z %.1f..%.1f m)",
               o->output, o->so.along_x ? "row" : "column", o->so.index, in.cells, in.multi,
               in.width, in.height, in.m_per_px_x, in.m_per_px_z, in.zlo, in.zhi);
  return st;
}

talus_status talus_export_app(int argc, char **argv) {
  talus_error_clear();
  export_opts *o = calloc(1, sizeof *o);
  int help = 0;
  talus_status st = o ? TALUS_OK : talus_fail(TALUS_ERR_NOMEM, "export", "no memory");
  if (!st) o->mo.margin = 2; /* --margin's default */
  if (!st) st = export_parse(argc, argv, o, &help);
  if (!st && !help) {
    st = export_check_outputs(o);
    if (!st && o->section) st = export_section(o);
    if (!st && o->masks) st = export_mask_file(o);
    if (!st && o->mesh) st = export_mesh(o);
    if (!st && !o->mesh && !o->masks && !o->section)
      st = o->tiles_x ? export_hm_tiles(o) : export_heightmap(o);
  }
  free(o);
  return st;
}
