/*
 * state.h — the layered-state file format, and its one owner: the layered
 * state as one multi-band GeoTIFF, so a run can be continued exactly
 * (`talus erode state.tif …`) and GIS tools still see the terrain in band 1.
 * Everything that writes, reads or recognises a state (talus generate, the
 * outputs of talus erode, its monolithic and windowed inputs) goes through
 * the calls below; none spells a band name or a metadata key itself.
 *
 * Format (metadata TALUS_STATE=1, TALUS_STATE_VERSION=1):
 *   band 1 "surface"  top S = B + s of the topmost column (NoData on masked cells)
 *   band 2 "columns"  column count
 *   then per layer k < L (L = highest count in the map), 11 bands named
 *   "layer<k>.<field>" for field in bedrock, sand, water, ceiling, sediment,
 *   damage, stability, flux_r, flux_u, flux_l, flux_d; absent slots are NaN.
 *   then, when the run sums them (simulation.masks), the accumulators of
 *   kernels/accum.h: "acc.flow" [m³], "acc.wear" [m], "acc.deposition" [m].
 *   then, with heightfield.neighbours = 8, the diagonal fluxes "hf.flux_ru",
 *   "hf.flux_lu", "hf.flux_ld", "hf.flux_rd" [m³/s];
 *   then, where a stage reads it (the heightfield model, thermal.enable),
 *   "hardness" (0..1): the heightfield model softens it where it deposits
 *   (eq. 11), so it is state, not input; a state that holds it runs on it
 *   and ignores --hardness and thermal.hardness.
 *   Metadata: TALUS_LAYERS (allocated Nz), TALUS_STEP (global step),
 *   TALUS_CELL_SIZE [m].
 * Every persistent field is stored losslessly, so continuing from a state
 * gives the bytes of an uninterrupted run.
 *
 * Layering: io/state sits beside io/raster and above the kernels; it sees
 * tiles (kernels/state.h) and rasters (io/raster/raster.h), never a domain
 * (app/). Making a domain out of a state is app's (erode.c).
 */
#ifndef TALUS_IO_STATE_H
#define TALUS_IO_STATE_H

#include "io/raster/raster.h"
#include "kernels/state.h"

#define TALUS_STATE_FIELDS 11 /* fields stored per layer */
/* The fields of a layer, in band order (f of talus_state_band). */
enum {
  TALUS_STATE_BEDROCK = 0,
  TALUS_STATE_SAND = 1,
  TALUS_STATE_WATER = 2,
  TALUS_STATE_CEILING = 3,
  TALUS_STATE_SEDIMENT = 4
};
#define TALUS_STATE_NAME_MAX 32 /* a band name with its NUL */
#define TALUS_STATE_META     5  /* metadata items a state file carries */

/* 1 if `path` is a raster carrying TALUS_STATE metadata and at least the
 * bands of one layer (surface, columns, layer 0), else 0 (also when it
 * cannot be opened; nothing is recorded as an error). A band cut from a
 * state (gdal_translate -b 1 keeps the metadata) is a DEM. */
int talus_state_probe(const char *path);
/* The same rule for the open raster r; *layers gets its TALUS_LAYERS (0
 * when absent or not a state). */
int talus_state_reader_probe(const talus_bands_reader *r, int *layers);

/* Bands of a state file of L layers: surface, columns, 11 per layer. */
int talus_state_band_count(int L);
/* The optional band groups of a state (the `acc` argument below, a
 * bitmask; 1 alone is the accumulators, as before the diagonal fluxes). */
enum { TALUS_STATE_ACC = 1, TALUS_STATE_FDIAG = 2, TALUS_STATE_HARD = 4, TALUS_STATE_GRADE = 8 };
#define TALUS_STATE_HARD_NAME  "hardness"      /* the band of the hardness plane */
#define TALUS_STATE_GRADE_NAME "hf.input_drop" /* the band of t->grade_in */
/* The optional band groups a tile holds: TALUS_STATE_ACC with t->acc,
 * TALUS_STATE_FDIAG with t->fd (heightfield.neighbours = 8),
 * TALUS_STATE_HARD with t->hard, TALUS_STATE_GRADE with t->grade_in
 * (heightfield.grade_share: the input's drop, which a resumed run must
 * keep reading, not its own terrain's). */
int talus_state_extras(const talus_tile *t);
/* Bands of a state file of L layers with the optional groups of acc
 * (TALUS_STATE_*): talus_state_band_count(L), + TALUS_ACC_PLANES with the
 * accumulators, + 4 with the diagonal fluxes. */
int talus_state_bands(int L, int acc);
/* Index of the band of diagonal flux plane j (RU, LU, LD, RD) in a state
 * of L layers with the groups of acc. */
int talus_state_fdiag_band(int L, int acc, int j);
/* Its band name ("hf.flux_ru", "hf.flux_lu", "hf.flux_ld", "hf.flux_rd"). */
const char *talus_state_fdiag_name(int j);
/* Fills diagonal flux plane j of the cells of r of t from band. */
void talus_state_set_fdiag(talus_tile *t, talus_rect r, int j, const float *band);
/* Index of the hardness band (TALUS_STATE_HARD) in a state of L layers with
 * the groups of acc: after every other group but the input drop. */
int talus_state_hard_band(int L, int acc);
/* Index of the input drop's band (TALUS_STATE_GRADE): the last. */
int talus_state_grade_band(int L, int acc);
/* Fills the input drop plane (t->grade_in) of the cells of r of t from band. */
void talus_state_set_grade(talus_tile *t, talus_rect r, const float *band);
/* Fills the hardness plane of the cells of r of t from band. */
void talus_state_set_hard(talus_tile *t, talus_rect r, const float *band);
/* Index of the band of accumulator a (TALUS_ACC_*) in a state of L layers. */
int talus_state_acc_band(int L, int a);
/* The band name of accumulator a ("acc.flow", "acc.wear", "acc.deposition"). */
const char *talus_state_acc_name(int a);
/* Index of the band of field f (0 .. TALUS_STATE_FIELDS-1) of layer k. */
int talus_state_band(int k, int f);
/* The band name "layer<k>.<field>" of field f of layer k, into buf. */
void talus_state_band_name(int k, int f, char buf[TALUS_STATE_NAME_MAX]);
/* The band (reader index) of every field f of every layer k of the open
 * state r into band[k][f], -1 where absent (layers above the map's highest
 * column count are not stored); returns the layers stored: those whose
 * bedrock band exists, counted from layer 0. The one lookup of a state's
 * layer bands by name (erode's windowed input, meshes, sections). */
int talus_state_layer_bands(const talus_bands_reader *r,
                            int band[TALUS_NZ_MAX][TALUS_STATE_FIELDS]);
/* The names of all talus_state_bands(L, acc) bands, in order, into
 * names[] (names[i] points into buf[i] or at a constant; buf holds
 * talus_state_bands(L, acc) entries). */
void talus_state_band_names(int L, int acc, char (*buf)[TALUS_STATE_NAME_MAX], const char **names);
/* The unit type of each of those bands into units[] (NULL where it has
 * none: the column count): m for heights and thicknesses, kg/m2 for
 * stability, m3/s for fluxes, m3 for acc.flow. */
void talus_state_band_units(int L, int acc, const char **units);

/* The metadata block of a state file: text holds the items, list the
 * NULL-terminated "KEY=VALUE" list talus_geotiff_write takes (pointing
 * into text, so the struct must not be copied after the call). */
typedef struct talus_state_meta {
  char text[TALUS_STATE_META][64];
  char *params; /* "TALUS_PARAMS=<INI>", owned; NULL without parameters */
  const char *list[TALUS_STATE_META + 2];
} talus_state_meta;
/* Fills m for a state of nz allocated layers at global step `step` with
 * cells of `cell` metres, run with the parameters `params_ini` (INI text,
 * talus_params_ini_text; NULL: none recorded). A state records its run's
 * parameters so that `talus erode STATE` continues the same run (the same
 * model and keys) with no -c; -c and --set still apply over them.
 * TALUS_ERR_NOMEM when the parameters cannot be copied. Free with
 * talus_state_metadata_free. */
talus_status talus_state_metadata(talus_state_meta *m, int nz, int64_t step, double cell,
                                  const char *params_ini);
void talus_state_metadata_free(talus_state_meta *m);
/* The parameters (INI text) the open state r records, owned by r, or NULL
 * when it records none (a state written before they were recorded, or by
 * talus generate). */
const char *talus_state_reader_params(const talus_bands_reader *r);

/* The highest column count of t's buffer, or L when that is higher (start
 * with 1; fold tile after tile to get a map's layers). */
int talus_state_layers(const talus_tile *t, int L);
/* The stored value of field f of layer k of the cell at buffer index idx:
 * NaN where the cell has no such layer. */
float talus_state_value(const talus_tile *t, size_t idx, int f, int k);

/* Writes t's whole buffer (a whole map: a domain's tile, with its
 * accumulators when t->acc) as a state file
 * at `path`, at global step `step` with cells of `cell` metres. geo (may
 * be NULL) gives the georeferencing and the NoData written on masked
 * cells; wo may be NULL. */
talus_status talus_state_write(const char *path, const talus_tile *t, int64_t step, double cell,
                               const talus_georef *geo, const talus_write_options *wo);

/* What a state's metadata says, and where its first bands are. */
typedef struct talus_state_header {
  int layers;                 /* TALUS_LAYERS: allocated slots per cell, as read (atoi) */
  int64_t step;               /* TALUS_STEP: the global step */
  double cell;                /* TALUS_CELL_SIZE [m] */
  int surface, columns, bed0; /* bands "surface", "columns", "layer0.bedrock"; -1 if absent */
} talus_state_header;
/* The header of a state read whole. Fails (TALUS_ERR_FORMAT) unless the
 * three metadata items and the surface and layer0.bedrock bands exist. */
talus_status talus_state_header_bands(const talus_bands *b, talus_state_header *h);
/* The header of a state open for windowed reads. Fails (TALUS_ERR_FORMAT)
 * unless the three metadata items and the surface, columns and
 * layer0.bedrock bands exist. */
talus_status talus_state_header_reader(const talus_bands_reader *r, talus_state_header *h);

/* 1 when a cell whose surface band holds v is NoData under geo. */
int talus_state_nodata(const talus_georef *geo, float v);
/* Column counts of global rectangle r (inside t->buf) from the columns
 * band's values over r (r.w × r.h, row-major); masked cells are skipped.
 * A count outside [1, t->nz] is a TALUS_ERR_FORMAT naming the cell. */
talus_status talus_state_set_counts(talus_tile *t, talus_rect r, const float *columns);
/* Field f of layer k over global rectangle r (inside t->buf) from its
 * band's values over r (r.w × r.h, row-major), on the cells that have
 * that layer (set the counts first). */
void talus_state_set_layer(talus_tile *t, talus_rect r, int f, int k, const float *band);
/* Accumulator a of global rectangle r (inside t->buf, which has acc) from
 * its band's values over r (r.w × r.h, row-major); masked cells too. */
void talus_state_set_acc(talus_tile *t, talus_rect r, int a, const float *band);
/* The stored value of accumulator a of the cell at buffer index idx (t
 * has acc). */
float talus_state_acc_value(const talus_tile *t, size_t idx, int a);

#endif /* TALUS_IO_STATE_H */
