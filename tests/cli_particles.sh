#!/usr/bin/env bash
# Droplets end to end through the CLI (configs/particles.ini, kernels/
# particles.h): on a 200 x 150 window of a DEM (or the fBm noise scene
# when $TALUS_TEST_DATA is unset), `talus erode` writes the same bytes in
# one piece, on 1 and 2 threads, tiled (cores 37 and 64, K 1 and 2, their
# halo K x (L + r + 1) = K x 67 with a path of 64 cells: the preset's 128
# makes K 2's halo of 262 cells more than 4 tiles of 37 or 64 wide, which
# erode refuses; the preset is in metres, so the path and brush are set
# in cells of the input's size, $PT) and on a disk store; the report books the droplets' flows with
# eroded = deposited + outflow + lost. Then the same
# on layered stacks with the layered pipes (particles-game.ini, gully-arch).
source "$(dirname "$0")/lib_cli.sh"
run() {
  local name=$1
  shift
  "$T" erode "$W/in.tif" -o "$W/$name.tif" --maps --state "$W/${name}_state.tif" --no-preview -q \
    -c "$SRC/configs/particles.ini" "${PT[@]}" --steps 12 "$@"
}

DEM=${TALUS_TEST_DATA:-$SRC/../shared/data/dem}/bigtujunga_srtm30m_utm11.tif
if [ -f "$DEM" ]; then
  gdal_translate -q -srcwin 400 100 200 150 "$DEM" "$W/in.tif"
  PT=(--set particles.path_length=1920 --set particles.brush_radius=60) # 64 and 2 cells of 30 m
else
  PT=(--set particles.path_length=64 --set particles.brush_radius=2) # 1 m cells
  "$T" generate noise -o "$W/noise.tif" --size 160 -q
  # a DEM, not a state: without the state's TALUS_* metadata
  gdal_translate -q -b 1 -co PROFILE=GeoTIFF --config GDAL_PAM_ENABLED NO "$W/noise.tif" "$W/in.tif"
fi

run mono --threads 1 --report "$W/mono.json"
check "droplets eroded and the identity is exact" \
  'python3 -c "import json; f=json.load(open(\"$W/mono.json\"))[\"ledger\"][\"flows\"]; assert f[\"pt_erosion\"] > 0; assert abs(f[\"pt_erosion\"] - f[\"pt_deposit\"] - f[\"pt_outflow\"] - f[\"pt_lost\"]) <= 1e-9 * f[\"pt_erosion\"]"'
run two --threads 2
check "2 threads == 1 thread" 'same_as mono two'
# Deleting the load left at the end of a life is allowed but said: matter
# is not conserved (and, on DEMs, pits can run away).
"$T" erode "$W/in.tif" -o "$W/lost.tif" --no-preview -c "$SRC/configs/particles.ini" \
  "${PT[@]}" --steps 2 --set particles.deposit_at_death=false 2>"$W/lost.err"
"$T" erode "$W/in.tif" -o "$W/kept.tif" --no-preview -c "$SRC/configs/particles.ini" \
  "${PT[@]}" --steps 2 2>"$W/kept.err"
check "deposit_at_death=false warns that matter is not conserved; the preset does not" \
  'grep -q "matter is not conserved" "$W/lost.err" && ! grep -q "deposit_at_death" "$W/kept.err"'
# A batch denser than 2^-6 a cell overshoots (its droplets do not see
# each other): said, while the preset's 2^-8 says nothing.
"$T" erode "$W/in.tif" -o "$W/dense.tif" --no-preview -c "$SRC/configs/particles.ini" \
  "${PT[@]}" --steps 1 --set particles.density_log2=4 2>"$W/dense.err"
check "density_log2=4 warns that dense batches overshoot; the preset does not" \
  'grep -q "batches this dense overshoot" "$W/dense.err" && ! grep -q "density_log2" "$W/kept.err"'

for core in 37 64; do
  for K in 1 2; do
    run "t${core}k$K" --tile $core --steps-per-exchange $K
    check "tile $core K $K == one piece" 'same_as mono "t${core}k$K"'
  done
done
run disk --tile 64 --steps-per-exchange 2 --store "$W/store"
check "disk store == one piece" 'same_as mono disk'

# Layered stacks (configs/particles-game.ini) on the gully-arch scene with
# rain, so the layered pipes run with the droplets: the same bytes in one
# piece, on 2 threads, tiled and on a disk store; the arch still spans.
# The identity holds in integer units of 2^-32 m; the report's m³ are
# those times the cell area (2.67² m² here), so their sum is checked to
# double rounding.
"$T" generate gully-arch -o "$W/arch.tif" --size 96 -q
lay() {
  local name=$1
  shift
  "$T" erode "$W/arch.tif" -o "$W/$name.tif" --maps --state "$W/${name}_state.tif" --no-preview -q \
    -c "$SRC/configs/particles-game.ini" --set water.rain=0.02 --set particles.density_log2=6 \
    --steps 8 "$@"
}
lay lmono --threads 1 --report "$W/lmono.json"
check "layered: droplets eroded and the identity is exact" \
  'python3 -c "import json; f=json.load(open(\"$W/lmono.json\"))[\"ledger\"][\"flows\"]; e=f[\"pt_erosion\"]+f[\"pt_sand_erosion\"]; assert e > 0 and f[\"rain\"] > 0; assert abs(e + f[\"pt_clamp\"] - f[\"pt_sand_deposit\"] - f[\"pt_outflow\"] - f[\"pt_lost\"]) <= 1e-12 * e"'
lay ltwo --threads 2
check "layered: 2 threads == 1 thread" 'same_as lmono ltwo'
lay lt37 --tile 37 --steps-per-exchange 2
check "layered: tile 37 K 2 == one piece" 'same_as lmono lt37'
lay ldisk --tile 48 --store "$W/lstore"
check "layered: disk store == one piece" 'same_as lmono ldisk'
check "layered: the arch spans" \
  'gdalinfo -mm "$W/lmono_columns.tif" | grep -q "Min/Max=1.000,2.000"'

echo "cli_particles: $pass passed, $fail failed"
[ $fail -eq 0 ]
