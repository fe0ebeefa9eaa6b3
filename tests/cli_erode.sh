#!/usr/bin/env bash
# `talus erode` end to end on a generated scene, as a user runs it: every
# command answers --help; `talus generate` makes a 256 m wide scene in a
# local metric CRS whatever the size, north-up in the scene's metres; --maps, --state, --preview and
# --report write every promised file, georeferenced like the input, ZSTD
# with the floating-point predictor; the preview tints water and overhangs;
# the maps hold what they say (depths and
# thicknesses >= 0, whole column counts >= 1, erosion = after - before);
# the report carries parameters, steps, stage times, speed, memory and a
# closed ledger, and parses when paths hold quotes and backslashes; the progress bar shows steps/s and ETA on a terminal only;
# SIGINT cancels with a non-zero exit and writes nothing.
source "$(dirname "$0")/lib_cli.sh"

for c in erode generate params info; do
  check "$c --help" '"$T" $c --help | grep -q "usage: talus $c"'
done

# georef FILE: size, geotransform and CRS (WKT) as gdalinfo reports them.
georef() {
  gdalinfo -json "$1" 2>/dev/null | python3 -c 'import json, sys
j = json.load(sys.stdin)
print(j["size"], j["geoTransform"], j["coordinateSystem"]["wkt"])'
}

# A scene is 256 m wide at any size: the pixel size is 256 / N metres.
for n in 32 64; do
  "$T" generate rivers-rain -o "$W/s$n.tif" --size $n --seed 3
  px=$(gdalinfo -json "$W/s$n.tif" 2>/dev/null | tr -d ' \n' | grep -oE '"geoTransform":\[[^]]*\]')
  check "generate --size $n: 256 m wide" '[ "$px" = "\"geoTransform\":[0.0,$((256 / n)).0,0.0,256.0,0.0,-$((256 / n)).0]" ]'
done
check "generate: local metric CRS" 'georef "$W/s64.tif" | grep -q "LENGTHUNIT\[\"metre\",1"'

# North-up in the scene's own metres (x east, y north): the arch bridge
# (y 150..160 m, deck top 10 m) lies north of the thick one (y 50..60 m,
# top 30 m). Generated scenes used to be mirrored north-south.
"$T" generate bridges -o "$W/bridges.tif" --size 64
surface_at() { gdallocationinfo -valonly -b 1 -geoloc "$1" "$2" "$3"; }
check "generate: bridges north-up, arch deck at y = 155 m" '[ "$(surface_at "$W/bridges.tif" 128 155)" = 10 ]'
check "generate: bridges north-up, thick deck at y = 55 m" '[ "$(surface_at "$W/bridges.tif" 128 55)" = 30 ]'

# One run with every output.
"$T" erode "$W/s64.tif" -o "$W/out.tif" -c "$SRC/configs/rivers-rain.ini" --steps 100 --maps \
  --state "$W/state.tif" --report "$W/run.json" 2>"$W/summary.txt"
check "erode exits 0" '[ $? -eq 0 ]'
files="out.tif out_water.tif out_sand.tif out_sediment.tif out_erosion.tif out_columns.tif out_water_surface.tif state.tif"
for f in $files out_preview.png run.json; do
  check "$f written" '[ -s "$W/$f" ]'
done

want=$(georef "$W/s64.tif")
for f in $files; do
  check "$f georeferenced like the input" '[ "$(georef "$W/$f")" = "$want" ]'
  pred=3 # floating point; the column counts are Byte: horizontal differencing
  case $f in *_columns.tif) pred=2 ;; esac
  check "$f: ZSTD, predictor $pred, tiled" \
    'gdalinfo "$W/$f" 2>/dev/null | grep -q COMPRESSION=ZSTD && gdalinfo "$W/$f" 2>/dev/null | grep -q PREDICTOR=$pred &&
     gdalinfo "$W/$f" 2>/dev/null | grep -qE "Block=([0-9]+)x\1 "'
done

# values FILE: one value per cell, row-major.
values() { gdal_translate -q -b 1 -of XYZ "$1" /vsistdout/ | awk '{print $3}'; }
min_max() { values "$1" | awk 'NR==1{lo=$1;hi=$1} {if($1<lo)lo=$1; if($1>hi)hi=$1} END{print lo, hi}'; }
for m in water sand sediment; do
  read -r lo hi <<<"$(min_max "$W/out_$m.tif")"
  check "$m >= 0 (min $lo)" 'awk -v v="$lo" "BEGIN{exit !(v >= 0)}"'
done
read -r lo hi <<<"$(min_max "$W/out_water.tif")"
check "rain left water somewhere (max $hi)" 'awk -v v="$hi" "BEGIN{exit !(v > 0)}"'
check "column counts are whole numbers >= 1" \
  '[ "$(values "$W/out_columns.tif" | awk "\$1 < 1 || \$1 != int(\$1)" | wc -l)" -eq 0 ]'
paste <(values "$W/out.tif") <(values "$W/s64.tif") <(values "$W/out_erosion.tif") >"$W/e.txt"
check "erosion map = eroded - initial surface" \
  '[ "$(awk "{d = \$1 - \$2 - \$3; if (d < 0) d = -d; if (d > 1e-4) bad++} END {print bad + 0}" "$W/e.txt")" -eq 0 ]'
paste <(values "$W/out.tif") <(values "$W/out_water.tif") <(values "$W/out_water_surface.tif") >"$W/ws.txt"
check "water surface map = eroded surface + water depth" \
  '[ "$(awk "{d = \$1 + \$2 - \$3; if (d < 0) d = -d; if (d > 1e-4) bad++} END {print bad + 0}" "$W/ws.txt")" -eq 0 ]'
check "the water surface stands above the terrain where water is" \
  '[ "$(awk "\$2 > 0.01 && \$3 > \$1" "$W/ws.txt" | wc -l)" -gt 0 ]'
check "the terrain changed" '[ "$(awk "\$3 != 0" "$W/e.txt" | wc -l)" -gt 0 ]'

check "preview: before | after side by side" \
  'gdalinfo "$W/out_preview.png" 2>/dev/null | grep -qE "Size is (1[3-9][0-9]|[2-9][0-9][0-9]), 64$"'
# The after panel is tinted: the deepest water blue, a bridge deck (two
# columns) orange; the before panel stays a grey hillshade.
rgb() { gdallocationinfo -valonly "$1" "$2" "$3" | tr '\n' ' '; }
deepest=$(values "$W/out_water.tif" | awk 'NR == 1 || $1 > m {m = $1; i = NR - 1} END {print i % 64, int(i / 64), m}')
read -r wx wy wd <<<"$deepest"
read -r r g b <<<"$(rgb "$W/out_preview.png" $((68 + wx)) "$wy")"
check "preview: the deepest water ($wd m) is blue after ($r $g $b)" '[ "$b" -gt $((r + 40)) ]'
read -r r g b <<<"$(rgb "$W/out_preview.png" "$wx" "$wy")"
check "preview: the before panel is grey ($r $g $b)" '[ "$r" = "$g" ] && [ "$g" = "$b" ]'
"$T" erode "$W/bridges.tif" -o "$W/b_out.tif" -c "$SRC/configs/bridges.ini" --steps 2 -q \
  --preview "$W/b_prev.png"
read -r r g b <<<"$(rgb "$W/b_prev.png" $((68 + 32)) 50)"
check "preview: a bridge deck at (128, 55) m is orange ($r $g $b)" '[ "$r" -gt $((b + 60)) ]'
read -r r g b <<<"$(rgb "$W/b_prev.png" $((68 + 32)) 30)"
check "preview: the plain between bridges is grey ($r $g $b)" '[ "$r" = "$g" ] && [ "$g" = "$b" ]'

check "report: parameters, steps, stage and phase times, speed, memory, closed ledger" 'python3 - "$W/run.json" <<EOF
import json, sys
r = json.load(open(sys.argv[1]))
L = r["ledger"]
ok = (r["steps"] == 100 and r["parameters"]["water.rain"] > 0 and r["mcell_steps_per_s"] > 0
      and r["peak_rss_bytes"] > 0 and r["stage_seconds"]["pipes"] > 0
      and min(r["stage_seconds"].values()) >= 0
      and set(r["phase_seconds"]) == {"setup", "simulation", "output"}
      and r["phase_seconds"]["setup"] > 0 and r["phase_seconds"]["output"] > 0
      and r["phase_seconds"]["simulation"] == r["seconds"]
      and abs(L["residual_relative_to_material"]) < 1e-6 and L["flows"]["rain"] > 0
      and L["solid_residual_relative_to_solid_moved"] < 1e-5)
sys.exit(0 if ok else 1)
EOF'

# Paths with a quote and a backslash: the report still parses and names them.
cp "$W/s64.tif" "$W/in \"q\" \\b.tif"
"$T" erode "$W/in \"q\" \\b.tif" -o "$W/we\"ird\\out.tif" --steps 2 -q --no-preview \
  --report "$W/we\"ird\\name.json"
check "report at a path with a quote and a backslash parses" \
  'python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$W/we\"ird\\name.json"'
check "report names the input and output with their quote and backslash" \
  'python3 - "$W/we\"ird\\name.json" <<"EOF"
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["input"].endswith("/in \"q\" \\b.tif") and r["output"].endswith("/we\"ird\\out.tif")
sys.exit(0 if ok else 1)
EOF'

# Progress: the summary and whole progress lines (no bar redrawn with \r)
# when stderr is a file; the bar on a terminal; nothing at all with -q.
check "summary prints the ledger" 'grep -q "mass ledger" "$W/summary.txt" && grep -q "100 steps of 64 x 64" "$W/summary.txt"'
check "no progress bar when not a terminal, lines instead" \
  '! grep -q $'"'"'\r'"'"' "$W/summary.txt" && grep -q "^talus: eroding 100% 100/100 steps" "$W/summary.txt"'
run_tty() { script -qec "$1" /dev/null; }
R="$T erode $W/s64.tif -o $W/tty.tif -c $SRC/configs/rivers-rain.ini --steps 30 --no-preview"
check "progress bar on a terminal" 'run_tty "$R" | grep -q "steps/s  ETA"'
check "-q is silent on a terminal" '[ -z "$(run_tty "$R -q" | tr -d "\r\n ")" ]'

# SIGINT cancels at a step boundary: non-zero exit, no output at all.
"$T" erode "$W/s64.tif" -o "$W/int.tif" --steps 100000000 --maps --report "$W/int.json" \
  2>"$W/int.err" &
pid=$!
for _ in $(seq 100); do
  sleep 0.2
  kill -INT $pid 2>/dev/null || break
done
wait $pid
rc=$?
check "SIGINT: exit 130, as shells expect ($rc)" '[ $rc -eq 130 ]'
check "SIGINT: says cancelled" 'grep -qi "cancel" "$W/int.err"'
check "SIGINT: nothing written" '[ -z "$(find "$W" -name "int*" ! -name int.err)" ]'

# --rain-map placed by georeference: a map twice the terrain's width whose
# western half (beyond the terrain) is dry and eastern half (over it) wet.
# Warped, every cell gets rain; stretched (the map without georeferencing),
# the terrain's western half would stay dry; a map that misses part of the
# terrain is refused naming a cell.
"$T" generate noise -o "$W/wdem.tif" --size 32 2>/dev/null
# The input maps of this test and the --hardness one below: rain maps
# (64 x 32, 1 m pixels) and hardness maps (40 x 40, 0.9 m pixels, so
# bilinear interpolation is at work), each georeferenced in the terrain's
# CRS (geotransform given) or not (None).
/usr/bin/python3 - "$W" <<'PY'
import sys
import numpy as np
from osgeo import gdal
w = sys.argv[1]
crs = gdal.Open(w + "/wdem.tif").GetProjection()
rain = np.zeros((32, 64), np.float32)
rain[:, 32:] = 0.001
yr, xr = np.mgrid[0:32, 0:64]  # rates varying within a tile, for the tiled runs
rainv = (0.0005 + 0.001 * xr / 63.0 * (0.5 + 0.5 * np.sin(yr / 3.0))).astype(np.float32)
y, x = np.mgrid[0:40, 0:40]
hard = (0.2 + 0.6 * x / 39.0 * (0.5 + 0.5 * np.sin(y / 5.0))).astype(np.float32)
fine = (-2, 0.9, 0, 2, 0, -0.9)
for name, gt, v in (("wrain", (-32, 1, 0, 0, 0, -1), rain), ("wrain_nogeo", None, rain),
                    ("wrain_far", (-60, 1, 0, 0, 0, -1), rain),
                    ("wrainv", (-32, 1, 0, 0, 0, -1), rainv), ("wrainv_nogeo", None, rainv),
                    ("wrain_neg", (-32, 1, 0, 0, 0, -1), rainv - 0.001), ("whard", fine, hard),
                    ("whard_nogeo", None, hard), ("whard_bad", fine, hard + 1.5)):
    d = gdal.GetDriverByName("GTiff").Create(w + "/" + name + ".tif", v.shape[1], v.shape[0], 1,
                                             gdal.GDT_Float32)
    if gt:
        d.SetProjection(crs)
        d.SetGeoTransform(gt)
    d.GetRasterBand(1).WriteArray(v)
    d = None
PY
for r in wrain wrain_nogeo; do
  "$T" erode "$W/wdem.tif" -o "$W/o_$r.tif" --set simulation.model=heightfield --steps 1 --maps \
    --rain-map "$W/$r.tif" --no-preview -q --report "$W/o_$r.json"
done
# The same rate (0.001 m/s) on every cell without a map: the warped map's
# rain total must equal it (a cell's water can drain away within the step,
# so wet cells after it undercount what rained).
"$T" erode "$W/wdem.tif" -o "$W/o_uniform.tif" --set simulation.model=heightfield --steps 1 \
  --set water.rain=0.001 --no-preview -q --report "$W/o_uniform.json"
rained() { python3 -c "import json; print(repr(json.load(open('$1'))['ledger']['flows']['rain']))"; }
wet() { /usr/bin/python3 -c "
from osgeo import gdal
print(int((gdal.Open('$1').ReadAsArray() > 0).sum()))"; }
nw=$(wet "$W/o_wrain_water.tif") ns=$(wet "$W/o_wrain_nogeo_water.tif")
ru=$(rained "$W/o_uniform.json") rw=$(rained "$W/o_wrain.json")
check "--rain-map warped by georeference: all 1024 cells rained on (rain $rw m3, uniform $ru; $nw wet)" \
  '[ "$rw" = "$ru" ] && [ "$nw" -ge 1000 ]'
check "--rain-map without georeferencing: stretched, the west half dry ($ns cells wet)" \
  '[ "$ns" -gt 400 ] && [ "$ns" -lt 700 ]'
err=$("$T" erode "$W/wdem.tif" -o "$W/o_far.tif" --set simulation.model=heightfield --steps 1 -q \
  --rain-map "$W/wrain_far.tif" --no-preview 2>&1)
rc=$?
check "--rain-map that misses part of the terrain: refused, nothing written" \
  '[ $rc -eq 1 ] && printf "%s" "$err" | grep -q "does not cover the terrain" && [ ! -e "$W/o_far.tif" ]'

# --hardness in tiled runs: each tile reads its own window of the map,
# warped by georeference (whard) or stretched (whard_nogeo): the tiled run
# writes the one-piece run's bytes. A hardness outside [0, 1] is refused
# before anything is written.
HF=(--set simulation.model=heightfield --steps 12 --maps --no-preview -q)
for h in whard whard_nogeo; do
  "$T" erode "$W/wdem.tif" -o "$W/h1_$h.tif" "${HF[@]}" --hardness "$W/$h.tif"
  "$T" erode "$W/wdem.tif" -o "$W/h4_$h.tif" "${HF[@]}" --hardness "$W/$h.tif" --tile 16
  check "--hardness $h: tiled == one piece" \
    'cmp -s "$W/h1_$h.tif" "$W/h4_$h.tif" && cmp -s "$W/h1_${h}_erosion.tif" "$W/h4_${h}_erosion.tif"'
done
"$T" erode "$W/wdem.tif" -o "$W/h0.tif" "${HF[@]}"
check "--hardness changes the result" '! cmp -s "$W/h0.tif" "$W/h1_whard.tif"'
err=$("$T" erode "$W/wdem.tif" -o "$W/hb.tif" "${HF[@]}" --hardness "$W/whard_bad.tif" \
  --tile 16 --store "$W/hb_store" 2>&1)
rc=$?
check "--hardness outside [0, 1], tiled: refused naming it, nothing written" \
  '[ $rc -eq 1 ] && printf "%s" "$err" | grep -q "outside \[0, 1\]" && [ ! -e "$W/hb.tif" ] &&
   [ ! -e "$W/hb_store" ]'

# --rain-map in tiled runs: every tile buffer, halo included, reads its
# window of the map, warped (wrainv) or stretched (wrainv_nogeo), in memory
# (resident tiles) and on disk (the store path, K 3): the one-piece bytes.
# The whole map is checked first, as in one piece: a map that misses part
# of the terrain or holds a negative rate is refused before any tile is
# built, leaving neither output nor store.
for r in wrainv wrainv_nogeo; do
  "$T" erode "$W/wdem.tif" -o "$W/r1_$r.tif" "${HF[@]}" --rain-map "$W/$r.tif"
  "$T" erode "$W/wdem.tif" -o "$W/r4_$r.tif" "${HF[@]}" --rain-map "$W/$r.tif" --tile 16
  "$T" erode "$W/wdem.tif" -o "$W/r9_$r.tif" "${HF[@]}" --rain-map "$W/$r.tif" --tile 12 \
    --store "$W/r9_store" --steps-per-exchange 3
  for s in '' _water _erosion; do
    check "--rain-map $r$s: tiled == one piece, in memory and on disk" \
      'cmp -s "$W/r1_$r$s.tif" "$W/r4_$r$s.tif" && cmp -s "$W/r1_$r$s.tif" "$W/r9_$r$s.tif"'
  done
done
check "--rain-map changes the result" '! cmp -s "$W/h0.tif" "$W/r1_wrainv.tif"'
for r in wrain_far wrain_neg; do
  err=$("$T" erode "$W/wdem.tif" -o "$W/rb.tif" "${HF[@]}" --rain-map "$W/$r.tif" --tile 16 \
    --store "$W/rb_store" 2>&1)
  rc=$?
  check "--rain-map $r, tiled: refused as in one piece, nothing written" \
    '[ $rc -eq 1 ] && printf "%s" "$err" | grep -qE "does not cover the terrain|rain rate .* outside \[0, inf\]" &&
     [ ! -e "$W/rb.tif" ] && [ ! -e "$W/rb_store" ]'
done

# -of FORMAT: the surface and the --maps in any GDAL driver that writes
# Float32 (the state stays GeoTIFF). -of GTiff writes the bytes of no -of;
# COG holds the GeoTIFF's values (same checksums) with the -co given to the
# driver, and a tiled run writes the one-piece run's bytes; HFA maps take
# the output's extension. Drivers that cannot take the heights (PNG: 16-bit
# codes only), unknown, read-only and raster-less ones are refused before
# anything is read, leaving no file; a copy the driver fails leaves none.
OF=(--steps 12 --maps --no-preview -q)
"$T" erode "$W/s64.tif" -o "$W/of_none.tif" "${OF[@]}" --state "$W/of_none_state.tif"
"$T" erode "$W/s64.tif" -o "$W/of_gtiff.tif" -of GTiff "${OF[@]}" --state "$W/of_gtiff_state.tif"
check "-of GTiff: the bytes of no -of" 'same_as of_none of_gtiff'
"$T" erode "$W/s64.tif" -o "$W/of_cog.tif" -of COG "${OF[@]}" --state "$W/of_cog_state.tif"
"$T" erode "$W/s64.tif" -o "$W/of_cogt.tif" -of COG "${OF[@]}" --state "$W/of_cogt_state.tif" \
  --tile 16 --store "$W/of_store"
sums() { gdalinfo -checksum "$1" 2>/dev/null | grep Checksum; }
for s in '' _water _sand _sediment _columns _erosion _water_surface; do
  check "-of COG$s: a COG with the GeoTIFF's values" \
    'gdalinfo "$W/of_cog$s.tif" | grep -q "LAYOUT=COG" && [ -n "$(sums "$W/of_cog$s.tif")" ] &&
     [ "$(sums "$W/of_cog$s.tif")" = "$(sums "$W/of_none$s.tif")" ]'
  check "-of COG$s: tiled == one piece" 'cmp -s "$W/of_cog$s.tif" "$W/of_cogt$s.tif"'
done
for s in '' _water _erosion _water_surface; do
  check "unit type m on the surface and the maps in metres$s (GTiff and COG)" \
    'gdalinfo "$W/of_none$s.tif" | grep -q "Unit Type: m$" &&
     gdalinfo "$W/of_cog$s.tif" | grep -q "Unit Type: m$"'
done
check "no unit type on the column count" '! gdalinfo "$W/of_none_columns.tif" | grep -q "Unit Type"'
check "the state's bands carry their units (m, kg/m2, m3/s)" \
  'u=$(gdalinfo "$W/of_none_state.tif" | grep "Unit Type");
   echo "$u" | grep -q "Unit Type: m$" && echo "$u" | grep -q "Unit Type: kg/m2$" &&
   echo "$u" | grep -q "Unit Type: m3/s$"'
check "-of COG: the state stays a GeoTIFF, tiled == one piece" \
  '! gdalinfo "$W/of_cog_state.tif" | grep -q "LAYOUT=COG" && cmp -s "$W/of_cog_state.tif" "$W/of_cogt_state.tif"'
# (GDAL once wrote of_cog.tif.IMD here, reading $W/summary.txt as ALOS metadata)
check "-of COG: no temporary left" '[ -z "$(find "$W" -name "of_*rows*" -o -name "of_*partial*" -o -name "of_*.IMD")" ] && [ ! -e "$W/of_store" ]'
"$T" erode "$W/s64.tif" -o "$W/of_deflate.tif" -of COG "${OF[@]}" -co COMPRESS=DEFLATE
check "-of COG -co COMPRESS=DEFLATE: the driver takes the -co" \
  'gdalinfo "$W/of_deflate.tif" | grep -q "COMPRESSION=DEFLATE" && [ "$(sums "$W/of_deflate.tif")" = "$(sums "$W/of_none.tif")" ]'
"$T" erode "$W/s64.tif" -o "$W/of_hfa.img" -of HFA "${OF[@]}"
check "-of HFA: an Erdas image, maps named .img, the GeoTIFF's values" \
  'gdalinfo "$W/of_hfa.img" | grep -q "^Driver: HFA" && [ "$(sums "$W/of_hfa_water.img")" = "$(sums "$W/of_none_water.tif")" ] &&
   [ "$(sums "$W/of_hfa.img")" = "$(sums "$W/of_none.tif")" ]'
for f in PNG NOPE CEOS "ESRI Shapefile"; do
  err=$("$T" erode "$W/s64.tif" -o "$W/of_bad.x" -of "$f" "${OF[@]}" --report "$W/of_bad.json" 2>&1)
  rc=$?
  check "-of $f: refused ($err), nothing written" \
    '[ $rc -eq 1 ] && [ -z "$(find "$W" -name "of_bad*")" ]'
done
check "-of PNG: says how to get a 16-bit heightmap" \
  '"$T" erode "$W/s64.tif" -o "$W/of_bad.png" -of PNG 2>&1 | grep -q "export PNG16:PATH"'
err=$("$T" erode "$W/s64.tif" -o "$W/of_fail.tif" -of COG "${OF[@]}" -co COMPRESS=JPEG 2>&1)
rc=$?
check "-of COG, a copy the driver fails: an error, nothing left" \
  '[ $rc -eq 1 ] && printf "%s" "$err" | grep -q "as COG" && [ -z "$(find "$W" -name "of_fail*")" ]'

echo "cli_erode: $pass passed, $fail failed"
[ $fail -eq 0 ]
