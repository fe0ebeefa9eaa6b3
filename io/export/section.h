/*
 * section.h — a vertical cross-section of a layered state as a PNG: one row
 * (or column) of cells cut open, so overhangs, arches, caves and what fills
 * them show as a heightmap preview cannot show them. Rock is brown, sand
 * yellow, water blue, air pale sky, NoData black.
 *
 * Scale: each cell is `px` pixels wide (auto: up to 1024 pixels in all,
 * at most 8 per cell), and a pixel is as many metres tall as it is wide
 * (no vertical exaggeration) unless the section's height range would need
 * more than max_height pixels; then it is squeezed to max_height and
 * talus_section_info says by how much. The range is the lowest top of
 * bedrock of column 0 to the highest water surface, plus a margin of
 * max(1 m, 5 %).
 *
 * Reads only the cut's row or column of the state's bands (windowed), so it
 * works on states of any size.
 */
#ifndef TALUS_IO_EXPORT_SECTION_H
#define TALUS_IO_EXPORT_SECTION_H

#include "talus_status.h"

#include <stdint.h>

typedef struct talus_section_options {
  int along_x;    /* 1: the cut is row `index` (cells along x); 0: column `index` */
  int index;      /* the row or column, in cells from the top-left */
  int px;         /* pixels per cell; 0 = automatic */
  int max_height; /* pixels; 0 = 1024 */
} talus_section_options;

typedef struct talus_section_info {
  int width, height; /* pixels */
  double zlo, zhi;   /* the height range drawn [m] */
  double m_per_px_x; /* metres per pixel across */
  double m_per_px_z; /* metres per pixel up (> m_per_px_x when squeezed) */
  int cells, multi;  /* cells cut, and those holding more than one column */
} talus_section_info;

/* A cut held in memory: per layer k and field f (0 bedrock top B, 1 sand,
 * 2 water, 3 ceiling C; io/state.h's order), n values along it, and each
 * cell's column count (0: NoData). talus erode fills one from its tiles
 * for the preview's section (app/erode_output.c). */
typedef struct talus_section_cut {
  int n, L;
  double cell; /* [m] */
  float *v;    /* [L][4][n] */
  uint8_t *count;
} talus_section_cut;

/* Allocates c's arrays for n cells and L layers (zeroed); free with
 * talus_section_cut_free. */
talus_status talus_section_cut_alloc(talus_section_cut *c, int n, int L, double cell);
void talus_section_cut_free(talus_section_cut *c);
/* Field f of layer k along the cut. */
float *talus_section_cut_field(const talus_section_cut *c, int k, int f);
/* Draws cut c as section.h says and writes it to png_path. info may be
 * NULL. */
talus_status talus_section_cut_png(const talus_section_cut *c, const talus_section_options *o,
                                   const char *png_path, talus_section_info *info);

/* Draws the section of state `state_path` and writes it to png_path (a
 * partial name renamed into place). Not a state: TALUS_ERR_FORMAT; a row
 * or column outside the map: TALUS_ERR_RANGE. info may be NULL. */
talus_status talus_section_png(const char *state_path, const talus_section_options *o,
                               const char *png_path, talus_section_info *info);

#endif /* TALUS_IO_EXPORT_SECTION_H */
