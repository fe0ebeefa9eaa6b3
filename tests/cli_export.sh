#!/usr/bin/env bash
# `talus export` and `talus erode --export`: the erode option writes the
# bytes `talus export` writes from erode's output (file and sidecar); -of
# any GDAL driver (COG, HFA: float metres; PNM: 16-bit codes); a
# state and its surface export alike; GDAL reads the PNG as 16 bits with
# the codes' full range; RAW sizes are exact; every bad input (unknown
# format, bad size, unwritable path, NoData only) fails with one message,
# a non-zero exit and no file left behind; meshes smooth by default,
# blocky with --mesh-style blocks; --section cuts a state open
# (air under rock where the cave's tunnel is, none over the plain), and so
# does the section a layered `talus erode` writes beside its preview.
source "$(dirname "$0")/lib_cli.sh"

"$T" generate cave -o "$W/cave.tif" --size 64
gdal_translate -q -b 1 "$W/cave.tif" "$W/cave_dem.tif" # band 1 alone: a DEM, not a state
mkdir -p "$W/a" "$W/b"
"$T" erode "$W/cave.tif" -o "$W/out.tif" -c "$SRC/configs/cave.ini" --steps 20 -q --no-preview \
  --state "$W/state.tif" --export PNG16:"$W/a/t.png" --export r16:"$W/a/t.r16" \
  --export GLB:"$W/a/m.glb"
"$T" export "$W/out.tif" -of PNG16 -o "$W/b/t.png" -q
"$T" export "$W/out.tif" -of R16 -o "$W/b/t.r16" -q
"$T" export "$W/state.tif" -o "$W/b/s.png" -q
"$T" export "$W/state.tif" -o "$W/b/m.glb" -q
"$T" export "$W/state.tif" -o "$W/b/m.obj" --tile 40 -q
check "erode --export GLB == talus export of the state" 'cmp -s "$W/a/m.glb" "$W/b/m.glb"'
"$T" export "$W/state.tif" -o "$W/b/mf.obj" -q
"$T" export "$W/state.tif" -o "$W/b/mm.obj" --merge -q
nf=$(grep -c "^f " "$W/b/mm.obj")
check "--merge: fewer faces than the unmerged mesh ($nf; 20 steps of rain roughen the cave's flats)" \
  '[ $nf -gt 0 ] && [ $nf -lt $(grep -c "^f " "$W/b/mf.obj") ]'
"$T" export "$W/state.tif" -o "$W/b/mk.obj" --mesh-style blocks -q
"$T" export "$W/state.tif" -o "$W/b/ms.obj" --mesh-style smooth --smooth-step 8 -q
check "--mesh-style blocks: axis normals only, more faces than the smooth default" \
  '[ $(grep -c "^vn " "$W/b/mk.obj") -eq 6 ] &&
   [ $(grep -c "^f " "$W/b/mk.obj") -gt $(grep -c "^f " "$W/b/mf.obj") ]'
check "smooth: sloping caps state normals of their own" '[ $(grep -c "^vn " "$W/b/mf.obj") -gt 6 ]'
check "--mesh-style smooth --smooth-step 8 (the default: two 4 m cells) == the default" \
  'cmp -s "$W/b/ms.obj" "$W/b/mf.obj"'
"$T" export "$W/state.tif" -o "$W/b/mb.obj" --merge --max-triangles $nf -q
check "--max-triangles at the merged count: written, the same mesh" 'cmp -s "$W/b/mm.obj" "$W/b/mb.obj"'
check "--tile 40 of 64 x 64: four OBJ tiles" \
  '[ $(ls "$W/b" | grep -c "^m_x[01]_y[01].obj$") -eq 4 ]'
"$T" export "$W/state.tif" -o "$W/b/m0.obj" --multi-only --margin 0 -q
"$T" export "$W/state.tif" -o "$W/b/m2.obj" --multi-only -q
check "--multi-only --margin 0 is smaller than the default margin 2" \
  '[ $(grep -c "^f " "$W/b/m0.obj") -gt 0 ] &&
   [ $(grep -c "^f " "$W/b/m0.obj") -lt $(grep -c "^f " "$W/b/m2.obj") ]'
check "erode --export PNG16 == talus export" 'cmp -s "$W/a/t.png" "$W/b/t.png"'
check "erode --export R16 == talus export" 'cmp -s "$W/a/t.r16" "$W/b/t.r16"'
check "erode --export sidecar == talus export's" 'cmp -s "$W/a/t.png.json" "$W/b/t.png.json"'
check "a state exports as its surface" 'cmp -s "$W/b/s.png" "$W/b/t.png"'
check "PNG is 16-bit" 'gdalinfo "$W/b/t.png" | grep -q "Type=UInt16"'
check "PNG codes span 0..65535" \
  'gdalinfo -mm "$W/b/t.png" | grep -q "Computed Min/Max=0.000,65535.000"'
check "R16 of 64 x 64 is 8192 bytes" '[ $(stat -c %s "$W/b/t.r16") -eq 8192 ]'

"$T" export "$W/out.tif" -o "$W/u.r16" --size 4097x33 -q
check "--size WxH: 4097 x 33 x 2 bytes" '[ $(stat -c %s "$W/u.r16") -eq $((4097 * 33 * 2)) ]'
check "sidecar states the size" \
  'python3 -c "import json; d=json.load(open(\"$W/u.r16.json\")); exit(d[\"width\"]!=4097 or d[\"height\"]!=33)"'
mkdir -p "$W/tiles"
"$T" export "$W/out.tif" -o "$W/tiles/t.png" --size 129 --tiles 4x2 -q
check "--tiles 4x2: 8 PNG tiles with their sidecars" \
  '[ $(ls "$W/tiles" | grep -c "^t_x[0-3]_y[01].png$") -eq 8 ] &&
   [ $(ls "$W/tiles" | grep -c "^t_x[0-3]_y[01].png.json$") -eq 8 ]'
check "a tile of 129 / 4x2 is 33 x 65" 'gdalinfo "$W/tiles/t_x3_y1.png" | grep -q "Size is 33, 65"'
"$T" export "$W/out.tif" -o "$W/g.tif" --size 1009 -q
check "GTiff --size 1009" 'gdalinfo "$W/g.tif" | grep -q "Size is 1009, 1009"'

# -of any GDAL driver: COG and HFA hold the float metres of GTiff exactly,
# PNM (no float) the codes of PNG16; erode --export COG writes the same.
mkdir -p "$W/g"
"$T" export "$W/out.tif" -of GTiff -o "$W/g/h.tif" -q
"$T" export "$W/out.tif" -of COG -co COMPRESS=DEFLATE -o "$W/g/h_cog.tif" -q
"$T" export "$W/out.tif" -of HFA -o "$W/g/h.img" -q
"$T" export "$W/out.tif" -of PNM -o "$W/g/h.pgm" -q
"$T" erode "$W/cave.tif" -o "$W/g/e.tif" -c "$SRC/configs/cave.ini" --steps 20 -q --no-preview \
  --export COG:"$W/g/e_cog.tif"
check "-of COG -co COMPRESS=DEFLATE: a cloud-optimised GeoTIFF" \
  'gdalinfo "$W/g/h_cog.tif" | grep -q "LAYOUT=COG" && gdalinfo "$W/g/h_cog.tif" | grep -q "COMPRESSION=DEFLATE"'
check "-of COG and -of HFA: float32 metres equal to GTiff's, georeferenced alike" \
  '/usr/bin/python3 -c "
from osgeo import gdal
a = gdal.Open(\"$W/g/h.tif\"); ref = a.ReadAsArray()
for f in (\"h_cog.tif\", \"h.img\"):
    d = gdal.Open(\"$W/g/\" + f)
    assert d.GetRasterBand(1).DataType == gdal.GDT_Float32, f
    assert (d.ReadAsArray() == ref).all(), f
    assert d.GetGeoTransform() == a.GetGeoTransform(), f
"'
check "-of PNM (no float): the 16-bit codes of PNG16" \
  '/usr/bin/python3 -c "
from osgeo import gdal
a = gdal.Open(\"$W/b/t.png\").ReadAsArray(); b = gdal.Open(\"$W/g/h.pgm\").ReadAsArray()
assert b.dtype.name == \"uint16\" and (a == b).all()
"'
check "the sidecar names the driver" 'grep -q "\"format\": \"COG\"" "$W/g/h_cog.tif.json"'
check "erode --export COG == talus export -of COG of its output" \
  '"$T" export "$W/g/e.tif" -of COG -o "$W/g/e2_cog.tif" -q && cmp -s "$W/g/e_cog.tif" "$W/g/e2_cog.tif"'

# refusals: one message, exit 1, nothing written
refused() { # NAME PATTERN ARGS...: talus export ARGS fails saying PATTERN
  local name=$1 pat=$2
  shift 2
  "$T" export "$@" >"$W/msg" 2>&1
  local rc=$?
  check "$name: exit 1" '[ $rc -eq 1 ]'
  check "$name: says '$pat'" 'grep -q "$pat" "$W/msg"'
}
refused "unknown format" "unknown format 'PNG8'" "$W/out.tif" -of PNG8 -o "$W/r1.png"
refused "no format" "names none" "$W/out.tif" -o "$W/r2.obj2"
refused "unknown GDAL driver" "nor a GDAL driver" "$W/out.tif" -of NOSUCH -o "$W/r15.x"
refused "read-only GDAL driver" "cannot create files" "$W/out.tif" -of AIG -o "$W/r16.x"
refused "GDAL driver of Byte only" "cannot write UInt16" "$W/out.tif" -of WEBP -o "$W/r17.webp"
refused "size 1" "integer in \[2" "$W/out.tif" -o "$W/r3.png" --size 1
refused "size text" "integer in \[2" "$W/out.tif" -o "$W/r4.png" --size 12y4
refused "unwritable" "cannot write" "$W/out.tif" -o "$W/nodir/r5.png"
refused "z range" "MAX must exceed MIN" "$W/out.tif" -o "$W/r6.png" --z-range 5,1
refused "missing input" "r7-missing.tif" "$W/r7-missing.tif" -o "$W/r7.png"
refused "output is the input" "overwrite the input" "$W/out.tif" -o "$W/out.tif"
gdal_create -q -of GTiff -outsize 16 16 -ot Float32 -a_nodata -9999 -burn -9999 "$W/nd.tif"
refused "NoData only" "no valid height" "$W/nd.tif" -o "$W/r8.png"
refused "mesh of a heightmap" "not a talus state" "$W/out.tif" -o "$W/r10.obj"
refused "size of a mesh" "are for heightmaps" "$W/state.tif" -o "$W/r11.ply" --size 33
refused "tiles not sharing edges" "do not split" "$W/out.tif" -o "$W/r14.png" --size 100 --tiles 4
refused "crop off the map" "leaves the 64 x 64 map" "$W/state.tif" -o "$W/r13.obj" --crop 60,0,8,8
refused "over the triangle budget" "over --max-triangles 100; try --merge" "$W/state.tif" \
  -o "$W/r18.obj" --max-triangles 100
refused "--merge for a heightmap" "are for meshes" "$W/out.tif" -o "$W/r19.png" --merge
refused "--mesh-style for a heightmap" "are for meshes" "$W/out.tif" -o "$W/r20.png" \
  --mesh-style blocks
refused "unknown mesh style" "expects blocks or smooth" "$W/state.tif" -o "$W/r21.obj" \
  --mesh-style cubes
"$T" erode "$W/cave.tif" -o "$W/e.tif" --steps 5 -q --export OBJ:"$W/r12.obj" 2>"$W/msg"
rc=$?
check "erode --export OBJ without --state: refused" '[ $rc -eq 1 ] && grep -q "add --state" "$W/msg"'
"$T" erode "$W/cave.tif" -o "$W/e.tif" --steps 5 -q --export PNG8:"$W/r9.png" 2>"$W/msg"
rc=$?
check "erode --export PNG8 refused before the run" '[ $rc -eq 1 ] && [ ! -e "$W/e.tif" ]'
"$T" erode "$W/cave.tif" -o "$W/e2.png" --steps 5 -q -of PNG 2>"$W/msg"
rc=$?
check "erode -of PNG (no float heights): refused pointing at --export PNG16:PATH, nothing written" \
  '[ $rc -eq 1 ] && grep -q -- "--export PNG16:PATH" "$W/msg" && [ ! -e "$W/e2.png" ]'
# --section: the cut through the cave's tunnel (x = 40 cells, 160 m) shows
# air under rock; a cut over the plain (x = 8, 32 m) none.
"$T" export "$W/state.tif" --section x=40 -o "$W/b/sec_tunnel.png" -q
"$T" export "$W/state.tif" --section x=8 -o "$W/b/sec_plain.png" -q
under_rock() { # PNG: pixel columns with a rock pixel above an air pixel
  /usr/bin/python3 - "$1" <<'PY'
import sys
from osgeo import gdal
a = gdal.Open(sys.argv[1]).ReadAsArray()
rock, air = (115, 77, 51), (235, 242, 255)
is_ = lambda c: (a[0] == c[0]) & (a[1] == c[1]) & (a[2] == c[2])
r, s = is_(rock), is_(air)
print(sum(1 for x in range(a.shape[2])
          if any(r[y, x] and s[y + 1:, x].any() for y in range(a.shape[1]))))
PY
}
nt=$(under_rock "$W/b/sec_tunnel.png") np=$(under_rock "$W/b/sec_plain.png")
check "--section through the tunnel: air under rock ($nt pixel columns)" '[ "$nt" -ge 8 ]'
check "--section over the plain: no air under rock ($np)" '[ "$np" = 0 ]'
check "--section: 8 px per cell across 64 cells, RGB" \
  'gdalinfo "$W/b/sec_tunnel.png" | grep -q "Size is 512," &&
   [ $(gdalinfo "$W/b/sec_tunnel.png" | grep -c "^Band") -eq 3 ]'
refused "--section outside the map" "outside the map" "$W/state.tif" --section y=64 -o "$W/r20.png"
refused "--section of a DEM" "not a talus state" "$W/cave_dem.tif" --section y=3 -o "$W/r21.png"
refused "--section to a non-PNG" "writes a PNG" "$W/state.tif" --section y=3 -o "$W/r22.tif"
refused "--section bad spec" "expects y=ROW" "$W/state.tif" --section z=3 -o "$W/r23.png"
refused "--section-px without --section" "is for --section" "$W/out.tif" --section-px 2 \
  -o "$W/r24.png"
check "nothing half-written" '[ -z "$(ls "$W" | grep -E "^r[0-9]|partial")" ]'

# erode's preview section: a layered run writes <preview>_section.png beside
# the preview, cut along the row with the most cells of several columns
# (here along the cave's tunnel: air under rock), the same bytes tiled; a
# heightfield run and --no-preview write none.
"$T" erode "$W/cave.tif" -o "$W/p1.tif" -c "$SRC/configs/cave.ini" --steps 20 -q
"$T" erode "$W/cave.tif" -o "$W/p2.tif" -c "$SRC/configs/cave.ini" --steps 20 -q --tile 32 \
  --steps-per-exchange 1
nt=$(under_rock "$W/p1_preview_section.png")
check "erode: the preview's section shows the tunnel, air under rock ($nt pixel columns)" \
  '[ -s "$W/p1_preview.png" ] && [ "$nt" -ge 32 ]'
check "erode: the tiled run's section == the one-piece run's" \
  'cmp -s "$W/p1_preview_section.png" "$W/p2_preview_section.png"'
"$T" erode "$W/cave_dem.tif" -o "$W/h.tif" -c "$SRC/configs/heightfield-default.ini" --steps 2 -q
"$T" erode "$W/cave.tif" -o "$W/n.tif" -c "$SRC/configs/cave.ini" --steps 2 -q --no-preview
check "no section for a heightfield run or with --no-preview" \
  '[ -s "$W/h_preview.png" ] && [ ! -e "$W/h_preview_section.png" ] &&
   [ -z "$(ls "$W" | grep "^n_preview")" ]'

"$T" export --help >"$W/help"
check "export --help lists the formats" 'grep -q "PNG16" "$W/help" && grep -q -- "--size" "$W/help"'
echo "cli_export: $pass passed, $fail failed"
[ $fail -eq 0 ]
