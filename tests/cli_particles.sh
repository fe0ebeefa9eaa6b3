#!/usr/bin/env bash
# Droplets end to end through the CLI (configs/particles.ini, kernels/
# particles.h): on a 200 x 150 window of a DEM (or the fBm noise scene
# when $TALUS_TEST_DATA is unset), `talus erode` writes the same bytes in
# one piece, on 1 and 2 threads, tiled (cores 37 and 64, K 1 and 2, their
# halo K x (L + r + 1) = K x 67) and on a disk store; the report books the
# droplets' flows with eroded = deposited + outflow + lost.
source "$(dirname "$0")/lib_cli.sh"
run() {
  local name=$1
  shift
  "$T" erode "$W/in.tif" -o "$W/$name.tif" --maps --state "$W/${name}_state.tif" --no-preview -q \
    -c "$SRC/configs/particles.ini" --steps 12 "$@"
}

DEM=${TALUS_TEST_DATA:-$SRC/../shared/data/dem}/bigtujunga_srtm30m_utm11.tif
if [ -f "$DEM" ]; then
  gdal_translate -q -srcwin 400 100 200 150 "$DEM" "$W/in.tif"
else
  "$T" generate noise -o "$W/noise.tif" --size 160 -q
  # a DEM, not a state: without the state's TALUS_* metadata
  gdal_translate -q -b 1 -co PROFILE=GeoTIFF --config GDAL_PAM_ENABLED NO "$W/noise.tif" "$W/in.tif"
fi

run mono --threads 1 --report "$W/mono.json"
check "droplets eroded and the identity is exact" \
  'python3 -c "import json; f=json.load(open(\"$W/mono.json\"))[\"ledger\"][\"flows\"]; assert f[\"pt_erosion\"] > 0; assert abs(f[\"pt_erosion\"] - f[\"pt_deposit\"] - f[\"pt_outflow\"] - f[\"pt_lost\"]) <= 1e-9 * f[\"pt_erosion\"]"'
run two --threads 2
check "2 threads == 1 thread" 'same_as mono two'
for core in 37 64; do
  for K in 1 2; do
    run "t${core}k$K" --tile $core --steps-per-exchange $K
    check "tile $core K $K == one piece" 'same_as mono "t${core}k$K"'
  done
done
run disk --tile 64 --steps-per-exchange 2 --store "$W/store"
check "disk store == one piece" 'same_as mono disk'

echo "cli_particles: $pass passed, $fail failed"
[ $fail -eq 0 ]
