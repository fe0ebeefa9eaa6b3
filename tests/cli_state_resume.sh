#!/usr/bin/env bash
# A run continued from a saved layered state gives exactly the bytes of an
# uninterrupted run (surface and full state), on a scene that splits
# columns (chasm-source) so every per-column field matters; with the run
# accumulators (simulation.masks) too, which a state that holds them keeps
# summing without the key being repeated. And the bare DEM command
# (dem-heightfield: pipes and droplets after a spin-up) continued from its
# state with no -c: the state records its run's parameters and its
# hardness, which the run softens where it deposits; tiled too, across the
# spin-up's end, where the droplets widen the step's radius.
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
# The bare DEM command. A 30 m DEM cut from the chasm-rain scene, its
# relief raised tenfold (a plateau 250 m above its plain: cliffs where
# the rivers deposit and soften the hardness, which then changes what they
# cut: a resume without the stored hardness differs); droplets of 20
# moves (radius 26) so 48-cell tiles hold them; erosion from step 20;
# droplets that start with a full unit of water (the preset's start nearly
# dry and gather it along their path, which in 20 batches softens nothing).
"$T" generate chasm-rain -o "$W/n.tif" --size 96 --layers 1 -q
gdal_translate -q -b 1 "$W/n.tif" "$W/n_dem.tif"
B=(-q --no-preview --cell-size 30 --set input.z_scale=10 --set erosion.spinup=20
   --set particles.path_length=600 --set particles.initial_water=1)
"$T" erode "$W/n_dem.tif" -o "$W/bhalf.tif" "${B[@]}" --steps 60 --state "$W/bhalf_state.tif"
"$T" erode "$W/bhalf_state.tif" -o "$W/bres.tif" -q --no-preview --steps 40 \
  --state "$W/bres_state.tif"
"$T" erode "$W/n_dem.tif" -o "$W/bstraight.tif" "${B[@]}" --steps 100 \
  --state "$W/bstraight_state.tif"
check "DEM: the state records the run's parameters" \
  'gdalinfo "$W/bhalf_state.tif" | grep -q "model = heightfield"'
check "DEM: the run softened the hardness it stores" '/usr/bin/python3 -c "
from osgeo import gdal
d = gdal.Open(\"$W/bhalf_state.tif\")
b = {d.GetRasterBand(i).GetDescription(): i for i in range(1, d.RasterCount + 1)}
h = d.GetRasterBand(b[\"hardness\"]).ReadAsArray()
assert h.min() < h.max(), (h.min(), h.max())
"'
check "DEM: the state keeps the input's drop (heightfield.grade_share)" \
  'gdalinfo "$W/bhalf_state.tif" | grep -q "Description = hf.input_drop"'
check "DEM: resumed with no -c == uninterrupted (surface)" 'cmp -s "$W/bres.tif" "$W/bstraight.tif"'
check "DEM: resumed with no -c == uninterrupted (state)" \
  'cmp -s "$W/bres_state.tif" "$W/bstraight_state.tif"'
"$T" erode "$W/bhalf_state.tif" -o "$W/bres_t.tif" -q --no-preview --steps 40 --tile 48
check "DEM: resumed tiled == uninterrupted" 'cmp -s "$W/bres_t.tif" "$W/bstraight.tif"'
"$T" erode "$W/n_dem.tif" -o "$W/btiled.tif" "${B[@]}" --steps 100 --tile 48
check "DEM: tiled across the spin-up's end == one piece" 'cmp -s "$W/btiled.tif" "$W/bstraight.tif"'
"$T" erode "$W/bhalf_state.tif" -o "$W/bstr.tif" -q --no-preview --strength light \
  --state "$W/bstr_state.tif"
check "DEM: a state past its spin-up continues for the strength's batches alone (60 + 1000 x every 2)" \
  'gdalinfo "$W/bstr_state.tif" | grep -q "TALUS_STEP=2060"'
gdal_translate -q -b 1 -scale 0 1000 0.2 0.2 -ot Float32 "$W/n.tif" "$W/hard.tif"
msg=$("$T" erode "$W/bhalf_state.tif" -o "$W/bres_h.tif" --no-preview --steps 40 \
  --hardness "$W/hard.tif" 2>&1)
check "DEM: --hardness on a state that holds its hardness: ignored, saying so" \
  '[[ "$msg" == *"--hardness"*"ignored"* ]] && cmp -s "$W/bres_h.tif" "$W/bstraight.tif"'

# heightfield.grade_share keeps the first input's drops (a static input
# plane, state band hf.input_drop). A knick 20 m tall three cells above
# the east-edge outlet of a 1 % valley (test_heightfield's knick_heights),
# the pipes alone: the preset's share (0.35, noise 2 m) holds 6.4 m of it
# (0.35 x 18.3) where the bare command without it cuts it to 0.9 m in 3000
# steps; a resume from step 1500, in
# one piece or tiled, continues exactly, and the control (the band
# renamed, so the resume reads the drops of its own half-cut terrain)
# continues differently.
/usr/bin/python3 -c "
from osgeo import gdal
import numpy as np
nx, ny = 40, 15
x = np.arange(nx)[None, :]; y = np.arange(ny)[:, None]
h = 300.0 + 0.3 * (nx - 1 - x) + np.where(x < nx - 3, 20.0, 0.0) + 3.0 * np.abs(y - ny // 2)
d = gdal.GetDriverByName('GTiff').Create('$W/knick.tif', nx, ny, 1, gdal.GDT_Float32)
d.GetRasterBand(1).WriteArray(h.astype('float32'))
"
K=(-q --no-preview --cell-size 30 --set particles.enable=false --set erosion.spinup=0
   --set water.rain=0.01)
"$T" erode "$W/knick.tif" -o "$W/kstraight.tif" "${K[@]}" --steps 3000
"$T" erode "$W/knick.tif" -o "$W/kflat.tif" "${K[@]}" --steps 3000 --set heightfield.grade_share=0
check "knick: the share keeps it (6.4 m of 20.3; without it 0.9 m)" '/usr/bin/python3 -c "
from osgeo import gdal
a = gdal.Open(\"$W/kstraight.tif\").ReadAsArray(); b = gdal.Open(\"$W/kflat.tif\").ReadAsArray()
assert a[7, -4] - a[7, -3] >= 6.35 and b[7, -4] - b[7, -3] <= 2.0, (a[7, -4] - a[7, -3], b[7, -4] - b[7, -3])
"'
"$T" erode "$W/knick.tif" -o "$W/khalf.tif" "${K[@]}" --steps 1500 --state "$W/khalf_state.tif"
"$T" erode "$W/khalf_state.tif" -o "$W/kres.tif" -q --no-preview --steps 1500
check "knick: resumed == uninterrupted" 'cmp -s "$W/kres.tif" "$W/kstraight.tif"'
"$T" erode "$W/khalf_state.tif" -o "$W/kres_t.tif" -q --no-preview --steps 1500 --tile 16
check "knick: resumed tiled == uninterrupted" 'cmp -s "$W/kres_t.tif" "$W/kstraight.tif"'
"$T" erode "$W/knick.tif" -o "$W/ktiled.tif" "${K[@]}" --steps 3000 --tile 16
check "knick: tiled == one piece" 'cmp -s "$W/ktiled.tif" "$W/kstraight.tif"'
cp "$W/khalf_state.tif" "$W/knoband_state.tif"
/usr/bin/python3 -c "
from osgeo import gdal
d = gdal.Open('$W/knoband_state.tif', gdal.GA_Update)
for i in range(1, d.RasterCount + 1):
    if d.GetRasterBand(i).GetDescription() == 'hf.input_drop':
        d.GetRasterBand(i).SetDescription('unused')
"
"$T" erode "$W/knoband_state.tif" -o "$W/knoband.tif" -q --no-preview --steps 1500
"$T" erode "$W/knoband_state.tif" -o "$W/knoband_t.tif" -q --no-preview --steps 1500 --tile 16
check "knick: a state without the band continues differently (the control)" \
  '[ -s "$W/knoband.tif" ] && ! cmp -s "$W/knoband.tif" "$W/kstraight.tif"'
check "knick: a state without the band, tiled == one piece" 'cmp -s "$W/knoband_t.tif" "$W/knoband.tif"'

# water.finest_cell on a grid finer than it (chasm-source's 4 m cells at
# 64², under 8 m): the water of 8 m cells, dt halved. --seconds counts the
# steps of that dt (3 s = 120 steps of 0.025 s), the run is the recipe's
# (the pin and dt set by hand) byte for byte, and a state continues with
# the same shortened dt, as one run would.
F="$C --set water.finest_cell=8"
msg=$("$T" erode "$W/init.tif" -o "$W/f2.tif" ${F/-q/} --seconds 2 --state "$W/f2_state.tif" \
  --report "$W/f2.json" 2>&1)
check "finest_cell: said, and --seconds 2 is 80 steps of 0.025 s" \
  '[[ "$msg" == *"finest_cell = 8 m on 4 m cells"*"steps of 0.025 s"* ]] && gdalinfo "$W/f2_state.tif" | grep -q "TALUS_STEP=80"'
check "finest_cell: the report gives the step's dt and the seconds run" \
  '/usr/bin/python3 -c "import json; r = json.load(open(\"$W/f2.json\")); assert r[\"dt_s\"] == 0.025 and r[\"simulated_s\"] == 2.0, r"'
"$T" erode "$W/init.tif" -o "$W/fr.tif" $C --set water.reference_cell=8 --set simulation.dt=0.025 --steps 80
check "finest_cell: the same bytes as the pin and dt set by hand" 'cmp -s "$W/f2.tif" "$W/fr.tif"'
check "finest_cell: not the run without it" '! cmp -s "$W/f2.tif" "$W/straight.tif"'
"$T" erode "$W/f2_state.tif" -o "$W/f3r.tif" -q --no-preview --seconds 1 --state "$W/f3r_state.tif"
"$T" erode "$W/init.tif" -o "$W/f3.tif" $F --seconds 3
check "finest_cell: a state continued 1 s == 3 s in one run" \
  'gdalinfo "$W/f3r_state.tif" | grep -q "TALUS_STEP=120" && cmp -s "$W/f3r.tif" "$W/f3.tif"'
# --seconds on a float dt: 3.5 s of 0.35 s steps (0.35 as a float is
# 0.34999999) are 10 steps, not 11; 3.6 s (10.3 steps) are 11.
"$T" erode "$W/init.tif" -o "$W/s7.tif" $C --set simulation.dt=0.35 --seconds 3.5 \
  --state "$W/s7_state.tif"
"$T" erode "$W/init.tif" -o "$W/s7b.tif" $C --set simulation.dt=0.35 --seconds 3.6 \
  --state "$W/s7b_state.tif"
check "--seconds 3.5 of 0.35 s steps is 10 steps; 3.6 s is 11" \
  'gdalinfo "$W/s7_state.tif" | grep -qw "TALUS_STEP=10" && gdalinfo "$W/s7b_state.tif" | grep -qw "TALUS_STEP=11"'

echo "cli_state_resume: $pass passed, $fail failed"
[ $fail -eq 0 ]
