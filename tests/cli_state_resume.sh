#!/usr/bin/env bash
# A run continued from a saved layered state gives exactly the bytes of an
# uninterrupted run (surface and full state), on a scene that splits
# columns (chasm-source) so every per-column field matters; with the run
# accumulators (simulation.masks) too, which a state that holds them keeps
# summing without the key being repeated.
source "$(dirname "$0")/lib_cli.sh"

C="-c $SRC/configs/chasm-source.ini -q --no-preview"
"$T" generate chasm-source -o "$W/init.tif" --size 64 --layers 8
"$T" erode "$W/init.tif" -o "$W/half.tif" $C --steps 37 --state "$W/half_state.tif"
"$T" erode "$W/half_state.tif" -o "$W/resumed.tif" $C --steps 43 --state "$W/resumed_state.tif"
"$T" erode "$W/init.tif" -o "$W/straight.tif" $C --steps 80 --state "$W/straight_state.tif"

check "all outputs written" '[ -s "$W/resumed.tif" ] && [ -s "$W/straight.tif" ]'
check "resumed surface == uninterrupted surface" 'cmp -s "$W/resumed.tif" "$W/straight.tif"'
check "resumed state == uninterrupted state" 'cmp -s "$W/resumed_state.tif" "$W/straight_state.tif"'
check "the run changed the terrain" '! cmp -s "$W/half.tif" "$W/straight.tif"'
check "state records the global step" 'gdalinfo "$W/resumed_state.tif" | grep -q "TALUS_STEP=80"'
check "no accumulators without simulation.masks" '! gdalinfo "$W/straight_state.tif" | grep -q acc.flow'

M="$C --set simulation.masks=true"
"$T" erode "$W/init.tif" -o "$W/mhalf.tif" $M --steps 37 --state "$W/mhalf_state.tif"
"$T" erode "$W/mhalf_state.tif" -o "$W/mresumed.tif" $C --steps 43 --state "$W/mresumed_state.tif"
"$T" erode "$W/init.tif" -o "$W/mstraight.tif" $M --steps 80 --state "$W/mstraight_state.tif"
check "masks: resumed surface == uninterrupted surface" 'cmp -s "$W/mresumed.tif" "$W/mstraight.tif"'
check "masks: summing changes no other output" 'cmp -s "$W/mstraight.tif" "$W/straight.tif"'
check "masks: resumed state (accumulators included) == uninterrupted state" \
  'cmp -s "$W/mresumed_state.tif" "$W/mstraight_state.tif"'
check "masks: the resumed state's accumulators grew past the half-way state's" \
  '/usr/bin/python3 -c "
from osgeo import gdal
def acc(p):
    d = gdal.Open(p)
    b = {d.GetRasterBand(i).GetDescription(): i for i in range(1, d.RasterCount + 1)}
    return [float(d.GetRasterBand(b[n]).ReadAsArray().astype(\"float64\").sum()) for n in (\"acc.flow\", \"acc.wear\", \"acc.deposition\")]
h, r = acc(\"$W/mhalf_state.tif\"), acc(\"$W/mresumed_state.tif\")
assert all(x > 0 for x in h) and all(b > a for a, b in zip(h, r)), (h, r)
"'
echo "cli_state_resume: $pass passed, $fail failed"
[ $fail -eq 0 ]
