#!/usr/bin/python3
"""render_mesh.py — an orthographic, z-buffered, flat-shaded rendering of an
OBJ written by `talus export` (Y up, x east, z south) to a PNG, to look at
a mesh without a DCC tool. Needs numpy and GDAL's Python bindings
(/usr/bin/python3 on the talus machines).

Usage: render_mesh.py MESH.obj [MESH.obj ...] OUT.png [--azimuth DEG] [--elevation DEG]
                      [--width PX] [--zscale F] [--section AXIS:M] [--box X0:X1:Z0:Z1]
  azimuth: compass direction the viewer looks from (default 200: from the
  south-south-west); elevation above the horizon (default 30).
  section: leave out the triangles whose centre has coordinate AXIS (x east,
  z south) above M metres: a cut through the terrain, whose solid shows
  dark brown (the inside of its faces).
  box: only the triangles whose centre lies in x0..x1, z0..z1 metres (a
  block cut out of the terrain, drawn as large as the width allows).
Several meshes are drawn with the same view side by side, bottom-aligned,
8 white pixels apart (a state before and after, as the README's gallery).
Colours: tops (caps facing up) sandy, walls grey, undersides (cave ceilings,
overhangs, arch soffits) orange, lit from above the viewer's left shoulder.
"""
import argparse
import math
import sys

import numpy as np
from osgeo import gdal


BACKGROUND = [235, 240, 245]  # the sky behind a mesh


def read_obj(path):
    """Vertices (n, 3) and triangles (m, 3) of an OBJ with v and f lines."""
    v, f = [], []
    with open(path) as fh:
        for line in fh:
            if line.startswith("v "):
                v.append([float(t) for t in line.split()[1:4]])
            elif line.startswith("f "):
                f.append([int(t.split("/")[0]) - 1 for t in line.split()[1:4]])
    return np.array(v, dtype=np.float64), np.array(f, dtype=np.int64)


def view_basis(azimuth, elevation):
    """Right, up and towards-viewer unit vectors in mesh coordinates
    (x east, y up, z south) for a viewer at compass azimuth, elevation."""
    a, e = math.radians(azimuth), math.radians(elevation)
    # direction from the scene to the viewer: east = sin a, north = cos a
    to_viewer = np.array([math.sin(a) * math.cos(e), math.sin(e), -math.cos(a) * math.cos(e)])
    right = np.cross([0.0, 1.0, 0.0], to_viewer)
    right /= np.linalg.norm(right)
    up = np.cross(to_viewer, right)
    return right, up, to_viewer


def shade(normals, light):
    """Base colour by face kind, times Lambert light from `light`."""
    lit = 0.35 + 0.65 * np.clip(normals @ light, 0, 1)
    col = np.tile(np.array([150.0, 150.0, 155.0]), (len(normals), 1))  # walls
    col[normals[:, 1] > 0.5] = [205, 185, 140]  # tops
    col[normals[:, 1] < -0.5] = [235, 120, 40]  # undersides: overhangs, ceilings
    return col * lit[:, None]


def select(a, b, c, args):
    """The triangles --section and --box keep."""
    keep = np.ones(len(a), bool)
    if args.section:
        axis, m = args.section.split(":")
        k = {"x": 0, "z": 2}[axis]
        keep &= (a[:, k] + b[:, k] + c[:, k]) / 3 <= float(m)
    if args.box:
        x0, x1, z0, z1 = (float(t) for t in args.box.split(":"))
        cx, cz = (a[:, 0] + b[:, 0] + c[:, 0]) / 3, (a[:, 2] + b[:, 2] + c[:, 2]) / 3
        keep &= (cx >= x0) & (cx <= x1) & (cz >= z0) & (cz <= z1)
    return keep


def render(v, f, args):
    right, up, to_viewer = view_basis(args.azimuth, args.elevation)
    v = v.copy()
    v[:, 1] *= args.zscale
    sx, sy, depth = v @ right, v @ up, v @ to_viewer
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    used = np.unique(f[select(a, b, c, args)])
    lo_x, hi_x, lo_y, hi_y = sx[used].min(), sx[used].max(), sy[used].min(), sy[used].max()
    scale = (args.width - 20) / (hi_x - lo_x)
    height = int((hi_y - lo_y) * scale) + 20
    px, py = (sx - lo_x) * scale + 10, (hi_y - sy) * scale + 10
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    n[:, 1] /= args.zscale
    n /= np.linalg.norm(n, axis=1)[:, None]
    light = 0.55 * to_viewer + 0.7 * np.array([0.0, 1.0, 0.0]) - 0.35 * right
    colour = shade(n, light / np.linalg.norm(light))
    facing = (n @ to_viewer) > 0
    colour[~facing] = [70, 45, 35]  # the inside of a cut solid
    keep = select(a, b, c, args)
    order = np.nonzero(keep if args.section or args.box else facing)[0]
    base = (n[:, 1] < -0.5) & (a[:, 1] <= v[:, 1].min())
    colour[base & facing] = colour[base & facing] * [0.5, 0.5, 0.55] / [235, 120, 40] * 150
    img = np.zeros((height, args.width, 3))
    img[:] = BACKGROUND
    zbuf = np.full((height, args.width), -np.inf)
    for t in order:
        i = f[t]
        x, y, z = px[i], py[i], depth[i]
        x0, x1 = int(max(math.floor(x.min()), 0)), int(min(math.ceil(x.max()), args.width - 1))
        y0, y1 = int(max(math.floor(y.min()), 0)), int(min(math.ceil(y.max()), height - 1))
        if x1 < x0 or y1 < y0:
            continue
        gx, gy = np.meshgrid(np.arange(x0, x1 + 1) + 0.5, np.arange(y0, y1 + 1) + 0.5)
        d = (y[1] - y[2]) * (x[0] - x[2]) + (x[2] - x[1]) * (y[0] - y[2])
        if abs(d) < 1e-12:
            continue
        w0 = ((y[1] - y[2]) * (gx - x[2]) + (x[2] - x[1]) * (gy - y[2])) / d
        w1 = ((y[2] - y[0]) * (gx - x[2]) + (x[0] - x[2]) * (gy - y[2])) / d
        w2 = 1 - w0 - w1
        inside = (w0 >= -1e-9) & (w1 >= -1e-9) & (w2 >= -1e-9)
        zz = w0 * z[0] + w1 * z[1] + w2 * z[2]
        sub = zbuf[y0:y1 + 1, x0:x1 + 1]
        win = inside & (zz > sub)
        sub[win] = zz[win]
        img[y0:y1 + 1, x0:x1 + 1][win] = colour[t]
    return np.clip(img, 0, 255).astype(np.uint8)


def side_by_side(imgs):
    """The images (h, w, 3) in a row, bottom-aligned on the background,
    8 white pixels between them."""
    h = max(i.shape[0] for i in imgs)
    cols = []
    for k, i in enumerate(imgs):
        pad = np.empty((h, i.shape[1], 3), np.uint8)
        pad[:] = BACKGROUND
        pad[h - i.shape[0]:] = i
        cols.append(pad)
        if k + 1 < len(imgs):
            cols.append(np.full((h, 8, 3), 255, np.uint8))
    return np.concatenate(cols, axis=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mesh", nargs="+")
    p.add_argument("png")
    p.add_argument("--azimuth", type=float, default=200.0)
    p.add_argument("--elevation", type=float, default=30.0)
    p.add_argument("--width", type=int, default=1200)
    p.add_argument("--zscale", type=float, default=1.0)
    p.add_argument("--section", default=None)
    p.add_argument("--box", default=None)
    args = p.parse_args()
    imgs = []
    for mesh in args.mesh:
        v, f = read_obj(mesh)
        if not len(f):
            sys.exit("render_mesh.py: no triangles in " + mesh)
        imgs.append(render(v, f, args))
    img = side_by_side(imgs)
    mem = gdal.GetDriverByName("MEM").Create("", img.shape[1], img.shape[0], 3, gdal.GDT_Byte)
    for b in range(3):
        mem.GetRasterBand(b + 1).WriteArray(img[:, :, b])
    gdal.GetDriverByName("PNG").CreateCopy(args.png, mem)


if __name__ == "__main__":
    main()
