#!/usr/bin/env python3
"""wall_notches.py — how far horizontal erosion has cut into the walls of a
layered scene (the arches scene's 16 m walls): from a `talus erode --state`
file and the generated input whose cells above 0 m are the walls.

  tools/wall_notches.py STATE.tif INPUT.tif [--width M] [--section OUT.png X ...]

For every straight line across a wall of --width metres (default 16: the
arches walls), at heights every 0.1 m up to 1 m below its top, the run
of open cells (air or water; rock and sand are solid) from each face
inward; a face's notch depth is its largest run over the heights. Prints the
median and 90th percentile of the depth per face and of both faces
together, how many lines are open all the way across at some height, the
face's angle between 2 and 12 m (how far the face recedes over those 10 m),
and the open volume under the walls' roofs with the sand left in it.
--section draws cross-sections across the wall lying between y = 110 and
146 m (the arches scene's middle wall) at the given x [m]: rock brown,
sand yellow, water blue, air white, 8 pixels a metre.
"""
import argparse

import numpy as np
from osgeo import gdal

FIELDS = 11  # bands per layer of a state (io/state.h): bedrock, sand, water, ceiling, ...


class State:
    """The columns of a state file: count, and per layer bedrock B, sand S,
    water W and ceiling C (layer k spans from C of layer k−1 up to its C)."""

    def __init__(self, path):
        self.ds = gdal.Open(path)  # kept: GDAL frees bands with their dataset
        if self.ds is None:
            raise SystemExit(f"wall_notches: cannot open {path}")
        layers = (self.ds.RasterCount - 2) // FIELDS
        band = lambda b: np.nan_to_num(self.ds.GetRasterBand(b).ReadAsArray().astype(np.float64))
        self.count = band(2).astype(int)
        self.B, self.S, self.W, self.C = (
            np.stack([band(first + FIELDS * k) for k in range(layers)]) for first in (3, 4, 5, 6))
        gt = self.ds.GetGeoTransform()
        self.cell, self.north_up = abs(gt[1]), gt[5] < 0

    def solid_at(self, z):
        """Cells solid (rock or sand) at height z."""
        solid = np.zeros(self.count.shape, bool)
        floor = np.full(self.count.shape, -np.inf)
        for k in range(self.B.shape[0]):
            live = k < self.count
            solid |= live & (z >= floor) & (z < self.B[k] + self.S[k])
            floor = np.where(live, self.C[k], floor)
        return solid


def wall_lines(wall, cell, width):
    """(axis, line, a, b): each straight run [a, b) of wall cells across a
    wall `width` m thick, along rows (axis 1) and columns (axis 0)."""
    for axis in (0, 1):
        grid = wall if axis == 0 else wall.T
        for line in range(grid.shape[1]):
            edges = np.flatnonzero(np.diff(np.concatenate([[0], grid[:, line].astype(int), [0]])))
            for a, b in zip(edges[::2], edges[1::2]):
                if abs((b - a) * cell - width) < 1e-3:
                    yield axis, line, a, b


def notches(st, top, width):
    """Per wall line: notch depth of each face [m], open across at some
    height below the wall's top less 1 m (top: the input's heights), and
    the face's retreat from 2 to 12 m [m] (NaN where a height has no
    rock)."""
    wall = top > 0
    zs = np.arange(0.05, top.max(), 0.1)
    solids = [st.solid_at(z) for z in zs]
    at2, at12 = st.solid_at(2.0), st.solid_at(12.0)
    out = []
    for axis, line, a, b in wall_lines(wall, st.cell, width):
        cut = lambda g: (g if axis == 0 else g.T)[a:b, line]
        south = north = 0
        through = False
        below = cut(top).min() - 1.0
        for z, s in zip(zs, solids):
            if z >= below:
                break
            run = cut(s)
            if not run.any():
                through = True
                continue
            south = max(south, int(np.argmax(run)))
            north = max(north, int(np.argmax(run[::-1])))
        lo, hi = cut(at2), cut(at12)
        recede = (np.argmax(hi) - np.argmax(lo)) * st.cell if lo.any() and hi.any() else np.nan
        out.append((south * st.cell, north * st.cell, through, recede))
    return out


def under_roofs(st, wall):
    """Open volume [m³] under the walls' roofs (columns with a column above
    them) and the sand left in those columns."""
    area, air, sand = st.cell**2, 0.0, 0.0
    for k in range(st.B.shape[0]):
        roofed = (k + 1 < st.count) & wall
        sand += (st.S[k] * roofed).sum() * area
        air += (np.clip(st.C[k] - st.B[k] - st.S[k] - st.W[k], 0, None) * roofed).sum() * area
    return air, sand


def section(st, out, xs):
    """Cross-sections across the middle wall (y 110..146 m) at each x [m]."""
    pz, n = 0.125, st.count.shape[0]
    zs = np.arange(0, 34, pz)[::-1]
    panels = []
    for xm in xs:
        x, cols = int(xm / st.cell), []
        for y in range(int(110 / st.cell), int(146 / st.cell)):
            r = n - 1 - y if st.north_up else y
            px, floor = np.full((len(zs), 3), 255, np.uint8), -np.inf
            for k in range(st.count[r, x]):
                b, s, w = st.B[k, r, x], st.S[k, r, x], st.W[k, r, x]
                px[(zs >= floor) & (zs < b)] = (112, 76, 52)
                px[(zs >= b) & (zs < b + s)] = (220, 190, 90)
                px[(zs >= b + s) & (zs < b + s + w)] = (80, 120, 220)
                floor = st.C[k, r, x]
            cols.append(np.repeat(px[:, None, :], max(1, int(st.cell / pz)), 1))
        panels += [np.concatenate(cols, 1), np.zeros((len(zs), 4, 3), np.uint8)]
    img = np.concatenate(panels, 1)
    mem = gdal.GetDriverByName("MEM").Create("", img.shape[1], img.shape[0], 3, gdal.GDT_Byte)
    for b in range(3):
        mem.GetRasterBand(b + 1).WriteArray(img[:, :, b])
    gdal.GetDriverByName("PNG").CreateCopy(out, mem)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("state")
    ap.add_argument("input")
    ap.add_argument("--width", type=float, default=16.0)
    ap.add_argument("--section", nargs="+", metavar=("OUT.png", "X"))
    o = ap.parse_args()
    st = State(o.state)
    src = gdal.Open(o.input)
    if src is None:
        raise SystemExit(f"wall_notches: cannot open {o.input}")
    top = src.GetRasterBand(1).ReadAsArray().astype(np.float64)
    wall = top > 0
    if wall.shape != st.count.shape:
        raise SystemExit("wall_notches: the state and the input differ in size")
    rows = notches(st, top, o.width)
    if not rows:
        raise SystemExit(f"wall_notches: no wall {o.width} m thick in {o.input}")
    faces = np.array([r[:2] for r in rows])
    both = faces.sum(1)
    recede = np.array([r[3] for r in rows])
    angle = np.degrees(np.arctan2(10.0, max(np.nanmedian(recede), 1e-9)))
    air, sand = under_roofs(st, wall)
    print(f"{o.state}: {st.cell:g} m cells, {len(rows)} lines across {o.width:g} m walls")
    print(f"  notch depth per face: median {np.median(faces):.2f} m, p90 {np.percentile(faces, 90):.2f}")
    print(f"  both faces: median {np.median(both):.2f} m, p90 {np.percentile(both, 90):.2f} m")
    print(f"  lines open across at some height: {sum(r[2] for r in rows)}")
    print(f"  face from 2 to 12 m: recedes {np.nanmedian(recede):.2f} m (median): {angle:.0f} degrees")
    print(f"  under the roofs: {air:.0f} m3 open, {sand:.0f} m3 of sand")
    if o.section:
        section(st, o.section[0], [float(x) for x in o.section[1:]])


if __name__ == "__main__":
    main()
