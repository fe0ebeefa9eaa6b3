#!/usr/bin/env bash
# `talus export --mask` and `talus erode --export MASKS`: texturing masks of
# a run with simulation.masks.
# A tiled run's masks are the bytes of a monolithic run's; float masks are
# the state's accumulators and top-column fields exactly; 8- and 16-bit
# masks pack up to four as RGBA with the documented normalisation, which
# does not depend on the window exported (no per-map stretch); --size
# resamples them to an engine's size; COG and any
# GDAL driver that writes files; every bad request fails with a message
# and no file.
source "$(dirname "$0")/lib_cli.sh"

"$T" generate rivers-rain --size 96 -o "$W/rr.tif"
R=(-c rivers-rain --steps 200 -q --no-preview)
"$T" erode "$W/rr.tif" -o "$W/m.tif" "${R[@]}" --set simulation.masks=true --state "$W/m_state.tif"
"$T" erode "$W/rr.tif" -o "$W/t.tif" "${R[@]}" --set simulation.masks=true --state "$W/t_state.tif" \
  --tile 40 --steps-per-exchange 2
"$T" erode "$W/rr.tif" -o "$W/p.tif" "${R[@]}" --state "$W/p_state.tif"
check "the accumulators change no other output" 'cmp -s "$W/m.tif" "$W/p.tif"'

for s in m t; do
  "$T" export "$W/${s}_state.tif" --mask flow,wear,deposition,water -o "$W/${s}_splat.png" -q
  "$T" export "$W/${s}_state.tif" --mask flow,sand --bits 16 -o "$W/${s}_fs16.png" -q
  "$T" export "$W/${s}_state.tif" --mask flow,wear,deposition,water -o "$W/${s}_phys.tif" -q
done
check "tiled run: the RGBA splat map == monolithic" 'cmp -s "$W/m_splat.png" "$W/t_splat.png"'
check "tiled run: the 16-bit masks == monolithic" 'cmp -s "$W/m_fs16.png" "$W/t_fs16.png"'
check "splat map: 4 Byte bands, RGBA" \
  '[ "$(gdalinfo "$W/m_splat.png" | grep -c "Type=Byte")" -eq 4 ] &&
   gdalinfo "$W/m_splat.png" | grep -q "ColorInterp=Alpha"'
check "two 16-bit masks: RGB with an empty blue channel" \
  '[ "$(gdalinfo "$W/m_fs16.png" | grep -c "Type=UInt16")" -eq 3 ] &&
   gdalinfo -mm "$W/m_fs16.png" | grep -q "Computed Min/Max=0.000,0.000"'

# The float masks are the state's bands; the codes their normalisation.
check "float masks == the state's accumulators and top-column water; codes as documented" \
  '/usr/bin/python3 - "$W" <<"PY"
import sys
import numpy as np
from osgeo import gdal
w = sys.argv[1]
st = gdal.Open(w + "/m_state.tif")
band = {st.GetRasterBand(i).GetDescription(): st.GetRasterBand(i).ReadAsArray().astype(np.float64)
        for i in range(1, st.RasterCount + 1)}
cell = float(st.GetMetadataItem("TALUS_CELL_SIZE"))
ph = gdal.Open(w + "/m_phys.tif")
f, we, de, wa = (ph.GetRasterBand(i).ReadAsArray().astype(np.float64) for i in range(1, 5))
assert ph.GetRasterBand(1).GetUnitType() == "m3" and ph.GetRasterBand(2).GetUnitType() == "m"
assert (f == band["acc.flow"]).all() and (we == band["acc.wear"]).all()
assert (de == band["acc.deposition"]).all()
cols = band["columns"].astype(int)
top = np.zeros_like(wa)
for k in range(cols.max()):
    top[cols == k + 1] = band["layer%d.water" % k][cols == k + 1]
assert (wa == top).all()
assert f.max() > 0 and we.max() > 0 and de.max() > 0 and wa.max() > 0
sp = gdal.Open(w + "/m_splat.png").ReadAsArray().astype(np.float64)
flow = np.clip(np.log10(1 + f / cell / 1.0) / 3.0, 0, 1)
assert (sp[0] == np.round(flow * 255)).mean() > 0.999, "flow codes"
assert (sp[1] == np.round(np.clip(we / 1.0, 0, 1) * 255)).mean() > 0.999, "wear codes"
assert (sp[3] == np.round(np.clip(wa / 1.0, 0, 1) * 255)).mean() > 0.999, "water codes"
print("flow code range", sp[0].min(), sp[0].max(), "wear", sp[1].max(), "deposition", sp[2].max())
PY'

check "the sidecar states each channel's mask, unit, scale and formulas" \
  '/usr/bin/python3 -c "
import json
d = json.load(open(\"$W/m_splat.png.json\"))
assert d[\"file\"] == \"m_splat.png\" and d[\"bits\"] == 8 and d[\"driver\"] == \"PNG\"
c = d[\"channels\"]
assert [x[\"channel\"] for x in c] == list(\"RGBA\")
assert [x[\"mask\"] for x in c] == [\"flow\", \"wear\", \"deposition\", \"water\"]
assert c[0][\"unit\"] == \"m3\" and \"log10\" in c[0][\"normalisation\"] and c[1][\"scale\"] == 1
p = json.load(open(\"$W/m_phys.tif.json\"))
assert p[\"bits\"] == 32 and \"normalisation\" not in p[\"channels\"][0]
"'

# Engine sizes: --size resamples the computed codes (or values) by GDAL.
"$T" export "$W/m_state.tif" --mask flow,wear,deposition,water --size 192 -r nearest \
  -o "$W/m192.png" -q
"$T" export "$W/m_state.tif" --mask wear --size 48 -r average -o "$W/m48.tif" -q
check "--size 192 -r nearest: each code twice over; --size 48 -r average: 2 x 2 means" \
  '/usr/bin/python3 -c "
import numpy as np
from osgeo import gdal
a = gdal.Open(\"$W/m_splat.png\").ReadAsArray(); b = gdal.Open(\"$W/m192.png\").ReadAsArray()
assert b.shape == (4, 192, 192) and (b[:, ::2, ::2] == a).all() and (b[:, 1::2, 1::2] == a).all()
p = gdal.Open(\"$W/m_phys.tif\")
w = p.GetRasterBand(2).ReadAsArray().astype(np.float64)
d = gdal.Open(\"$W/m48.tif\")
m = d.ReadAsArray().astype(np.float64)
ref = w.reshape(48, 2, 48, 2).mean(axis=(1, 3))
assert m.shape == (48, 48) and np.allclose(m, ref, rtol=1e-5, atol=1e-7), abs(m - ref).max()
assert abs(d.GetGeoTransform()[1] - 2 * p.GetGeoTransform()[1]) < 1e-9
"'

# No per-map stretch: a window of the state exports to the same codes.
gdal_translate -q -srcwin 10 20 40 30 "$W/m_state.tif" "$W/crop_state.tif"
"$T" export "$W/crop_state.tif" --mask flow,wear,deposition,water -o "$W/crop.png" -q
check "a 40 x 30 window exports the codes of the whole map's window" \
  '/usr/bin/python3 -c "
from osgeo import gdal
a = gdal.Open(\"$W/m_splat.png\").ReadAsArray()[:, 20:50, 10:50]
b = gdal.Open(\"$W/crop.png\").ReadAsArray()
assert (a == b).all()
"'
"$T" export "$W/m_state.tif" --mask flow --mask-scale flow=10 -o "$W/f10.png" -q
"$T" export "$W/m_state.tif" --mask flow -o "$W/f1.png" -q
check "--mask-scale flow=10: the sidecar states it" \
  'grep -q "\"scale\": 10" "$W/f10.png.json"'
"$T" export "$W/m_state.tif" --mask flow -o "$W/ns.png" --no-sidecar -q
check "--no-sidecar: no JSON" '[ -s "$W/ns.png" ] && [ ! -e "$W/ns.png.json" ]'
check "--mask-scale flow=10 lowers the codes (a tenth of the discharge per code)" \
  '/usr/bin/python3 -c "
from osgeo import gdal
a = gdal.Open(\"$W/f1.png\").ReadAsArray().astype(int); b = gdal.Open(\"$W/f10.png\").ReadAsArray().astype(int)
assert (b <= a).all() and (b < a).any()
"'

# talus erode --export MASKS: the same library call on the run's state,
# with simulation.masks turned on by the export itself.
"$T" erode "$W/rr.tif" -o "$W/e.tif" "${R[@]}" --state "$W/e_state.tif" \
  --export MASKS:"$W/e_splat.png" --export MASKS=flow,sand:"$W/e_fs.tif"
check "erode --export MASKS == talus export --mask flow,wear,deposition,water of a masks run" \
  'cmp -s "$W/e_splat.png" "$W/m_splat.png" && [ -s "$W/e_splat.png.json" ]'
"$T" export "$W/e_state.tif" --mask flow,sand -o "$W/e_fs2.tif" -q
check "erode --export MASKS=flow,sand:F.tif == talus export --mask flow,sand" \
  'cmp -s "$W/e_fs.tif" "$W/e_fs2.tif"'
"$T" erode "$W/rr.tif" -o "$W/e2.tif" "${R[@]}" --export MASKS:"$W/e2.png" 2>"$W/e2.err"
check "erode --export MASKS without --state: refused before the run" \
  '[ $? -ne 0 ] && grep -q "add --state" "$W/e2.err" && [ ! -e "$W/e2.tif" ]'
"$T" erode "$W/rr.tif" -o "$W/e3.tif" "${R[@]}" --state "$W/e3_state.tif" \
  --export MASKS=lava:"$W/e3.png" 2>"$W/e3.err"
check "erode --export MASKS=lava: refused before the run" \
  '[ $? -ne 0 ] && grep -q "unknown mask" "$W/e3.err" && [ ! -e "$W/e3.tif" ]'

# GDAL drivers: COG with -co, and clear refusals.
"$T" export "$W/m_state.tif" --mask flow,wear -of COG -co COMPRESS=DEFLATE -o "$W/cog.tif" -q
check "-of COG -co COMPRESS=DEFLATE: a cloud-optimised GeoTIFF" \
  'gdalinfo "$W/cog.tif" | grep -q "LAYOUT=COG" && gdalinfo "$W/cog.tif" | grep -q "COMPRESSION=DEFLATE"'
bad() { # bad NAME PATTERN ARGS...: the export fails, says PATTERN, leaves no file
  local out="$W/bad_$1.png" pat=$2
  shift 2
  "$T" export "$@" -o "$out" -q 2>"$W/bad.err" && return 1
  grep -q -- "$pat" "$W/bad.err" && [ ! -e "$out" ] && [ ! -e "$out.partial" ] &&
    [ ! -e "$out.json" ]
}
check "flow from a state without accumulators: refused, naming simulation.masks" \
  'bad noacc simulation.masks "$W/p_state.tif" --mask flow'
"$T" export "$W/p_state.tif" --mask water,sand -o "$W/ws.png" -q
check "water and sand need no accumulators" '[ -s "$W/ws.png" ]'
check "an unknown mask is refused" 'bad unknown "unknown mask" "$W/m_state.tif" --mask lava'
check "five masks are refused" \
  'bad five "at most 4" "$W/m_state.tif" --mask flow,wear,deposition,water,sand'
check "an unknown GDAL driver is refused" \
  'bad nodriver "unknown GDAL driver" "$W/m_state.tif" --mask flow -of NOSUCH'
check "a driver that only reads is refused" \
  'bad readonly "cannot create" "$W/m_state.tif" --mask flow -of AIG'
check "float masks in PNG are refused (PNG writes Byte and UInt16)" \
  'bad float "cannot write Float32" "$W/m_state.tif" --mask flow -of PNG --bits 32'
check "--bits 12 is refused" 'bad bits "8, 16 or 32" "$W/m_state.tif" --mask flow --bits 12'
check "a DEM is not a state" 'bad dem "not a talus state" "$W/m.tif" --mask water'

# An engine grid of splat maps (--tiles): each tile is the whole map's
# window, the tiles share their edge rows and columns, each has its
# sidecar; a size that does not split leaves no tile at all.
mkdir -p "$W/grid"
"$T" export "$W/m_state.tif" --mask flow,wear,deposition --size 97 -o "$W/grid/whole.png" -q
"$T" export "$W/m_state.tif" --mask flow,wear,deposition --size 97 --tiles 2x3 \
  -o "$W/grid/g.png" -q
check "--mask --tiles 2x3: 6 tiles with their sidecars" \
  '[ $(ls "$W/grid" | grep -c "^g_x[01]_y[0-2].png$") -eq 6 ] &&
   [ $(ls "$W/grid" | grep -c "^g_x[01]_y[0-2].png.json$") -eq 6 ]'
check "every mask tile is its window of the whole map, edges shared" \
  '/usr/bin/python3 - "$W/grid" <<"PY"
import sys
import numpy as np
from osgeo import gdal
def read(p):
    d = gdal.Open(p)
    return np.stack([d.GetRasterBand(b + 1).ReadAsArray() for b in range(d.RasterCount)])
d = sys.argv[1]
whole = read(d + "/whole.png")
for j in range(3):
    for i in range(2):
        t = read("%s/g_x%d_y%d.png" % (d, i, j))
        assert t.shape == (3, 33, 49), t.shape
        assert np.array_equal(t, whole[:, 32 * j:32 * j + 33, 48 * i:48 * i + 49]), (i, j)
PY'
mkdir -p "$W/nogrid"
"$T" export "$W/m_state.tif" --mask flow --size 100 --tiles 2 -o "$W/nogrid/g.png" -q \
  2>"$W/nogrid.err"
check "--mask --tiles on a size that does not split: refused, no tile left" \
  'grep -q "do not split" "$W/nogrid.err" && [ -z "$(ls "$W/nogrid")" ]'

echo "cli_masks: $pass passed, $fail failed"
[ $fail -eq 0 ]
