#!/usr/bin/env bash
# `talus erode` with the heightfield presets: on a generated noise terrain
# always (dem-heightfield, heightfield-default and thermal-only presets;
# --hardness and --rain-map rasters of another size, resampled; bad maps
# refused; 1 and 2 threads give the same bytes; the ledger closes), then
# with configs/dem-heightfield.ini on every DEM in $TALUS_TEST_DATA.
# Exit 77 (skipped) after the noise part when TALUS_TEST_DATA is unset.
source "$(dirname "$0")/lib_cli.sh"

# report_ok FILE: the run report says heightfield, a positive speed, and a
# ledger residual below 1e-6 of the material.
report_ok() {
  python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
L = r["ledger"]
ok = (r["parameters"]["simulation.model"] == "heightfield" and r["mcell_steps_per_s"] > 0
      and L["residual_relative_to_material"] < 1e-6
      and L["water_residual_relative_to_water_added"] < 1e-4)
sys.exit(0 if ok else 1)
EOF
}
# stage_ran FILE STAGE: the report timed STAGE (it was in the plan).
stage_ran() {
  python3 -c "import json,sys; sys.exit(0 if json.load(open('$1'))['stage_seconds']['$2'] > 0 else 1)"
}

Q="-q --no-preview"
"$T" generate noise -o "$W/n.tif" --size 96 --layers 1
# The preset's 1500-step water spin-up is skipped (erosion.spinup=0) so that
# a short run erodes (200 steps: the discharge must gather first).
NOSPIN="--set erosion.spinup=0"
"$T" erode "$W/n.tif" -o "$W/dem.tif" -c "$SRC/configs/dem-heightfield.ini" --steps 200 $Q \
  $NOSPIN --report "$W/dem.json" --maps
check "dem-heightfield on noise: report" 'report_ok "$W/dem.json"'
check "dem-heightfield ran advection and its crest-only thermal erosion" \
  'stage_ran "$W/dem.json" thermal_in && stage_ran "$W/dem.json" hf_advect'
# The load still suspended at the end is not in the surface: the report
# gives its share of the solid removed (as the flows booked it), the
# ledger's and the _sediment map's volume alike.
check "the report's suspended share is the ledger's and the _sediment map's" '/usr/bin/python3 -c "
import json
from osgeo import gdal
L = json.load(open(\"$W/dem.json\"))[\"ledger\"]
m = L[\"materials\"]
removed = sum(m[k][\"outflow\"] - m[k][\"inflow\"] for k in (\"bedrock\", \"sand\"))
d = gdal.Open(\"$W/dem_sediment.tif\")
cell = abs(d.GetGeoTransform()[1] * d.GetGeoTransform()[5])
v = float(d.ReadAsArray().astype(\"float64\").sum()) * cell
share = L[\"suspended_share_of_removed\"]
assert removed > 0 and share > 0, (removed, share)
assert abs(share - m[\"sediment\"][\"current\"] / removed) < 1e-5 * share, share
assert abs(v / removed - share) < 1e-3 * share, (v / removed, share)
"'
lowest=$(gdalinfo -stats "$W/dem_erosion.tif" | sed -n 's/.*STATISTICS_MINIMUM=//p')
check "the terrain was eroded" 'awk -v m="$lowest" "BEGIN { exit !(m < -1e-3) }"'

"$T" erode "$W/n.tif" -o "$W/t1.tif" -c "$SRC/configs/heightfield-default.ini" --steps 30 $Q \
  --threads 1 --report "$W/t1.json"
"$T" erode "$W/n.tif" -o "$W/t2.tif" -c "$SRC/configs/heightfield-default.ini" --steps 30 $Q \
  --threads 2
check "heightfield-default: report" 'report_ok "$W/t1.json"'
check "1 and 2 threads give the same bytes" 'cmp -s "$W/t1.tif" "$W/t2.tif"'

"$T" erode "$W/n.tif" -o "$W/th.tif" -c "$SRC/configs/thermal-only.ini" --steps 30 $Q \
  --report "$W/th.json"
check "thermal-only: ran, no water stages" \
  '[ -s "$W/th.tif" ] && stage_ran "$W/th.json" thermal_out && ! stage_ran "$W/th.json" hf_flux'

# Maps at half the grid's size, resampled onto it: hardness 0..1, rain 0..1 mm/s.
gdal_translate -q -b 1 -ot Float32 -scale 0 300 0 1 -outsize 48 48 "$W/n.tif" "$W/hard.tif"
gdal_translate -q -b 1 -ot Float32 -scale 0 300 0 0.001 -outsize 32 40 "$W/n.tif" "$W/rain.tif"
gdal_translate -q -b 1 -ot Float32 -scale 0 300 0 2 -outsize 48 48 "$W/n.tif" "$W/bad.tif"
"$T" erode "$W/n.tif" -o "$W/maps.tif" -c "$SRC/configs/dem-heightfield.ini" --steps 40 $Q \
  $NOSPIN --hardness "$W/hard.tif" --rain-map "$W/rain.tif" --report "$W/maps.json"
check "hardness and rain maps: report" 'report_ok "$W/maps.json"'
check "the maps changed the result" '! cmp -s "$W/maps.tif" "$W/dem.tif"'
err=$("$T" erode "$W/n.tif" -o "$W/x.tif" -c "$SRC/configs/dem-heightfield.ini" --steps 1 $Q \
  --hardness "$W/bad.tif" 2>&1)
rc=$?
check "hardness above 1 is refused" \
  '[ $rc -ne 0 ] && printf "%s" "$err" | grep -q "hardness .* outside \[0, 1\]" && [ ! -e "$W/x.tif" ]'
err=$("$T" erode "$W/n.tif" -o "$W/x.tif" --steps 1 $Q --rain-map "$W/rain.tif" 2>&1)
rc=$?
check "a rain map needs the heightfield model" \
  '[ $rc -ne 0 ] && printf "%s" "$err" | grep -q "needs the heightfield model"'

echo "cli_heightfield (noise): $pass passed, $fail failed"
[ $fail -eq 0 ] || exit 1

if [ -z "${TALUS_TEST_DATA:-}" ] || [ ! -d "$TALUS_TEST_DATA" ]; then
  echo "cli_heightfield: DEM part skipped: TALUS_TEST_DATA is not set"
  exit 77
fi
dems=0
for f in "$TALUS_TEST_DATA"/*; do
  case "$f" in *.md|*.hdr|*.txt|*.aux.xml) continue ;; esac
  name=$(basename "$f")
  dems=$((dems + 1))
  check "$name erodes with dem-heightfield.ini" \
    '"$T" erode "$f" -o "$W/$name.out.tif" -c "$SRC/configs/dem-heightfield.ini" --steps 20 $Q \
      --report "$W/$name.json" && report_ok "$W/$name.json"'
done
echo "cli_heightfield: $pass passed, $fail failed ($dems DEMs)"
[ $fail -eq 0 ] && [ $dems -gt 0 ]
