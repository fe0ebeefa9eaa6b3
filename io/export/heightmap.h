/*
 * heightmap.h — engine heightmaps out of any height raster (an eroded
 * surface, a DEM, or band 1 "surface" of a talus state): 16-bit PNG, RAW
 * r16, RAW r32 and float GeoTIFF, at any size, with a JSON sidecar that
 * tells an engine how to place the terrain at its real size.
 *
 * Design notes
 * ------------
 * - Resampling is GDAL's (RasterIO with a resampling kernel), pixel-is-area:
 *   an output of W × H samples covers the input's extent, so the sample
 *   spacing is dx = nx·cell_x / W (likewise y) and the sample centres run
 *   from the first to the last over (W − 1)·dx. Engines place vertex i at
 *   i·dx: the terrain lands at the input's size less half a sample at each
 *   edge. Native size (no --size) reads the values unchanged.
 * - 16 bits use the full stated range [zmin, zmax]: q = round((h − zmin) /
 *   (zmax − zmin) · 65535), so zmin → 0, zmax → 65535 and the round trip
 *   zmin + q·(zmax − zmin)/65535 is within half a quantum. The range is the
 *   resampled valid heights' min and max unless the caller states one
 *   (heights outside a stated range are clamped; a flat map writes 0).
 * - Engine tile grids: a window of the output grid is written as its own
 *   file (win_*), read from the same resampled rows, so the samples that
 *   neighbouring tiles share (their edge rows and columns) are equal; the
 *   tiles take one range (talus_heightmap_scan, then z_stated).
 * - Two windowed passes of TALUS_RASTER_WINDOW_ROWS output rows: the range,
 *   then the file. PNG has no windowed writer in GDAL (CreateCopy only), so
 *   the 16-bit rows are streamed into a temporary GeoTIFF beside the output
 *   that the PNG driver then copies; memory stays a window whatever the size.
 * - NoData (and non-finite) heights become zmin in PNG16, R16 and R32 (an
 *   engine has no hole) and stay NoData in the GeoTIFF; a map with no valid
 *   height is a TALUS_ERR_DATA. Every file is written under a partial name
 *   and renamed (io/raster's rule): it appears whole or not at all.
 * - RAW files are little-endian whatever the host, rows north to south.
 */
#ifndef TALUS_IO_EXPORT_HEIGHTMAP_H
#define TALUS_IO_EXPORT_HEIGHTMAP_H

#include "io/raster/raster.h"

typedef enum talus_hm_format {
  TALUS_HM_PNG16 = 0, /* 16-bit greyscale PNG (UInt16) */
  TALUS_HM_R16 = 1,   /* RAW unsigned 16-bit little-endian, no header */
  TALUS_HM_R32 = 2,   /* RAW float32 little-endian metres, no header */
  TALUS_HM_GTIFF = 3, /* float32 GeoTIFF in metres, georeferenced */
  TALUS_HM_GDAL = 4,  /* any GDAL driver (options' driver): float32 metres, or 16-bit codes
                       * (coded) where the driver takes no Float32; io/export/driver.h */
  TALUS_HM_FORMATS = 5
} talus_hm_format;

/* The format's name as -of takes it ("PNG16", "R16", "R32", "GTiff"; "GDAL"
 * for a GDAL driver, whose own name the options and the info carry). */
const char *talus_hm_format_name(talus_hm_format f);
/* Parses a format name (any case; "PNG" is PNG16, "RAW" R16, "TIF" GTiff)
 * into *f; 0 when unknown. */
int talus_hm_format_parse(const char *name, talus_hm_format *f);
/* The format a file name's extension implies (.png, .r16/.raw, .r32,
 * .tif/.tiff) into *f; 0 when it implies none. */
int talus_hm_format_from_path(const char *path, talus_hm_format *f);

/* Resampling kernels GDAL offers RasterIO (the names of gdalwarp -r). */
const char *talus_hm_resampling_names(void);

typedef struct talus_heightmap_options {
  talus_hm_format format;
  int width, height;                   /* output samples; 0 = the input's size */
  const char *resampling;              /* "bilinear" (NULL), "cubic", "average", "nearest", ... */
  int z_stated;                        /* 1: [zmin, zmax] below is the range, else the data's */
  double zmin, zmax;                   /* [m] */
  const char *const *creation_options; /* GTiff or driver -co (NULL-terminated, may be NULL) */
  const char *driver;                  /* TALUS_HM_GDAL: the GDAL driver's short name */
  int coded;                           /* TALUS_HM_GDAL: 1 UInt16 codes, 0 float32 metres */
  int win_x0, win_y0, win_w, win_h;    /* the part of the output grid to write (an engine
                                        * tile); win_w = 0: all of it */
} talus_heightmap_options;

/* What was written: the facts the sidecar states. */
typedef struct talus_heightmap_info {
  talus_hm_format format;
  char driver[32];           /* TALUS_HM_GDAL: the driver; else the format's name */
  int coded;                 /* 1: 16-bit codes over [zmin, zmax]; 0: metres */
  int src_nx, src_ny;        /* input size */
  double src_dx, src_dy;     /* input pixel size [m] (talus_cellsize_of) */
  int width, height;         /* output samples (of the window) */
  int x0, y0;                /* the window's first sample in the output grid */
  double dx, dy;             /* output sample spacing [m] */
  double zmin, zmax;         /* the range the 16-bit codes span [m] */
  double data_min, data_max; /* the valid output heights' range [m] */
  int64_t nodata_samples;    /* samples with no valid height */
} talus_heightmap_info;

/*
 * Writes the heightmap of band 1 of `input` to `output` as o says, and fills
 * *info (may be NULL). progress (may be NULL) sees 0..1 over both passes;
 * returning 0 cancels (TALUS_ERR_CANCELLED, nothing written). Errors: an
 * unreadable input TALUS_ERR_IO/FORMAT, no valid height TALUS_ERR_DATA, a
 * bad size or range TALUS_ERR_ARGUMENT, an unwritable output TALUS_ERR_IO.
 */
talus_status talus_heightmap_export(const char *input, const char *output,
                                    const talus_heightmap_options *o, talus_heightmap_info *info,
                                    talus_progress_fn progress, void *user);

/* Pass 1 alone: fills *info (the range of the valid heights over the whole
 * output grid, sizes, spacing) without writing, e.g. to give every tile
 * of a grid one stated range. Errors as talus_heightmap_export. */
talus_status talus_heightmap_scan(const char *input, const talus_heightmap_options *o,
                                  talus_heightmap_info *info, talus_progress_fn progress,
                                  void *user);

/*
 * Writes the JSON sidecar of a heightmap written as info says to `path`
 * (partial + rename): file, format, sizes, sample spacing, the Z range and
 * encoding, and the placement figures of Unreal (landscape scale in cm, Z
 * scale = range_cm · 128 / 65535 since a 16-bit code spans 1/128 of a
 * local unit, location Z) and Unity (terrain size, height offset).
 * `file` is the heightmap's name as the sidecar records it.
 */
talus_status talus_heightmap_sidecar(const char *path, const char *file,
                                     const talus_heightmap_info *info);

#endif /* TALUS_IO_EXPORT_HEIGHTMAP_H */
