#!/usr/bin/env python3
"""render_dz.py — where a run took and laid material: the after surface as a
grey hillshade (sun from the north-west, 45 degrees up), red where it was
lowered, blue where it was raised, full colour at |dz| >= --clip metres.
Beside a hillshade preview, which cannot show decimetres of deposition on a
valley floor, it shows fans and incised channels at a glance.

  tools/render_dz.py BEFORE.tif AFTER.tif OUT.png [--clip M] [--scale N]

Reads band 1 of both (same grid; NoData of BEFORE is drawn black) and
prints the raised and lowered volumes.
"""
import argparse
import sys

import numpy as np
from osgeo import gdal


def cell_metres(src):
    """(x, y) size of a cell of src in metres: the geotransform's, or for a
    geographic CRS (degrees) its metres at the raster's centre latitude."""
    gt = src.GetGeoTransform()
    sx, sy = abs(gt[1]), abs(gt[5])
    srs = src.GetSpatialRef()
    if srs is not None and srs.IsGeographic():
        lat = np.radians(gt[3] + gt[5] * src.RasterYSize / 2.0)
        sx, sy = sx * 111320.0 * np.cos(lat), sy * 110540.0
    return sx, sy


def hillshade(z, cell):
    """Lambertian shade of z (2-D, metres) for cells of cell = (x, y) metres."""
    gy, gx = np.gradient(z, cell[1], cell[0])
    slope = np.arctan(np.hypot(gx, gy))
    aspect = np.arctan2(-gx, gy)
    alt, az = np.radians(45.0), np.radians(315.0)
    shade = np.sin(alt) * np.cos(slope) + np.cos(alt) * np.sin(slope) * np.cos(az - np.pi / 2 - aspect)
    return np.clip(shade, 0.0, 1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("out")
    ap.add_argument("--clip", type=float, default=3.0, help="|dz| of full colour [m]")
    ap.add_argument("--scale", type=int, default=1, help="pixels per cell")
    a = ap.parse_args()
    src_b, src_a = gdal.Open(a.before), gdal.Open(a.after)
    if src_b is None or src_a is None:
        sys.exit("render_dz: cannot open the rasters")
    zb = src_b.GetRasterBand(1).ReadAsArray().astype(np.float64)
    za = src_a.GetRasterBand(1).ReadAsArray().astype(np.float64)
    if zb.shape != za.shape:
        sys.exit("render_dz: the rasters differ in size")
    nd = src_b.GetRasterBand(1).GetNoDataValue()
    bad = ~np.isfinite(zb) | ~np.isfinite(za) | ((zb == nd) if nd is not None else False)
    cell = cell_metres(src_b)
    dz = np.where(bad, 0.0, za - zb)
    grey = 0.25 + 0.75 * hillshade(np.where(bad, np.nanmean(za[~bad]), za), cell)
    rgb = np.repeat(grey[..., None], 3, axis=2)
    t = np.clip(dz / a.clip, -1.0, 1.0)[..., None]
    lowered, raised = np.clip(-t, 0.0, 1.0), np.clip(t, 0.0, 1.0)
    rgb = rgb * (1 - lowered) + lowered * np.array([0.85, 0.1, 0.05])
    rgb = rgb * (1 - raised) + raised * np.array([0.05, 0.25, 0.95])
    rgb[bad] = 0.0
    img = (np.clip(rgb, 0, 1) * 255 + 0.5).astype(np.uint8)
    if a.scale > 1:
        img = img.repeat(a.scale, 0).repeat(a.scale, 1)
    mem = gdal.GetDriverByName("MEM").Create("", img.shape[1], img.shape[0], 3, gdal.GDT_Byte)
    for i in range(3):
        mem.GetRasterBand(i + 1).WriteArray(img[..., i])
    if gdal.GetDriverByName("PNG").CreateCopy(a.out, mem) is None:
        sys.exit("render_dz: cannot write " + a.out)
    area = cell[0] * cell[1]
    print("render_dz: %s: raised %.4g m3, lowered %.4g m3 (clip %g m)"
          % (a.out, dz[dz > 0].sum() * area, -dz[dz < 0].sum() * area, a.clip))


if __name__ == "__main__":
    main()
