#!/usr/bin/env bash
# The promise, end to end through the CLI: `talus erode` writes the same
# bytes (surface, every --maps file, the full --state) in one piece and
# tiled, for cores {37, 64, 100} x K {1, 2, 3} on maps they do not divide,
# in memory and on disk:
# - layered model, 300 x 200 cells cut from chasm-source and warmed up so
#   columns have split: rain, a source, splits and collapses all happen in
#   the compared steps, and a support cycle (ceil(8 m / (2 * 0.853 m * 2))
#   = 3 steps) ends inside generations of K = 2 and 3;
# - heightfield model with thermal erosion, 256 x 256 fBm noise;
# - a DEM with NoData holes under the outflow and wall policies.
source "$(dirname "$0")/lib_cli.sh"
# run NAME INPUT ARGS...: erode with every output, quietly.
run() {
  local name=$1 in=$2
  shift 2
  "$T" erode "$W/$in" -o "$W/$name.tif" --maps --state "$W/${name}_state.tif" --no-preview -q "$@"
}

# --- layered: everything on -------------------------------------------
layered_warm_state
run mono warm.tif "${LAY[@]}" --steps 6 --report "$W/mono.json"
check "layered: columns split in the compared steps" '[ "$(flow "$W/mono.json" split)" = True ]'
check "layered: columns collapse in the compared steps" '[ "$(flow "$W/mono.json" collapse)" = True ]'
check "layered: rain and the source add water" '[ "$(flow "$W/mono.json" rain)" = True ] && [ "$(flow "$W/mono.json" sources)" = True ]'
check "layered: the warm state has overhangs (columns band > 1)" \
  'gdalinfo -stats "$W/mono_columns.tif" | grep -q "STATISTICS_MAXIMUM=[2-9]"'
for core in 37 64 100; do
  for K in 1 2 3; do
    run "t${core}k$K" warm.tif "${LAY[@]}" --steps 6 --tile $core --steps-per-exchange $K --report "$W/t.json"
    check "layered: tile $core K $K == one piece" 'same_as mono "t${core}k$K"'
  done
done
check "layered: the tiled report names tiles, halo and K" \
  'python3 -c "import json; t=json.load(open(\"$W/t.json\"))[\"tiling\"]; assert t[\"tiles\"]==6 and t[\"core\"]==100 and t[\"steps_per_exchange\"]==3 and t[\"halo_width\"]>0 and t[\"store\"]==\"memory\""'
run disk warm.tif "${LAY[@]}" --steps 6 --tile 64 --steps-per-exchange 2 --store "$W/store" --report "$W/disk.json"
check "layered: disk store == one piece" 'same_as mono disk'
check "layered: the disk store is removed after success" '[ ! -e "$W/store" ]'
check "layered: the disk report counts compressed bytes" \
  'python3 -c "import json; t=json.load(open(\"$W/disk.json\"))[\"tiling\"]; assert t[\"store\"]==\"disk\" and 0 < t[\"bytes_written\"] < t[\"raw_bytes_written\"] and t[\"compression_ratio\"] > 1 and t[\"bytes_read\"] > 0"'

# --- heightfield with thermal erosion ---------------------------------
"$T" generate noise -o "$W/noise.tif" --size 256 --layers 1
HF=(--set simulation.model=heightfield --set thermal.enable=true --set water.rain=0.02)
run hmono noise.tif "${HF[@]}" --steps 8 --report "$W/hmono.json"
# Thermal moves bedrock within bedrock (no ledger flow): it must change the result.
"$T" erode "$W/noise.tif" -o "$W/hcold.tif" "${HF[@]}" --set thermal.enable=false --steps 8 -q --no-preview
check "heightfield: thermal erosion changes the terrain" '! cmp -s "$W/hmono.tif" "$W/hcold.tif"'
for core in 37 64 100; do
  for K in 1 2 3; do
    run "h${core}k$K" noise.tif "${HF[@]}" --steps 8 --tile $core --steps-per-exchange $K
    check "heightfield: tile $core K $K == one piece" 'same_as hmono "h${core}k$K"'
  done
done
run hdisk noise.tif "${HF[@]}" --steps 8 --tile 100 --store "$W/hstore"
check "heightfield: disk store == one piece" 'same_as hmono hdisk'
# thermal.bank_angle: each cell sheds what the run cut of its steps, read
# from the accumulators (persistent planes the halos and the store carry)
HB=("${HF[@]}" --set thermal.bank_angle=10)
run bmono noise.tif "${HB[@]}" --steps 8
check "heightfield: the bank rule changes the terrain" '! cmp -s "$W/bmono.tif" "$W/hmono.tif"'
for core in 37 100; do
  run "b${core}" noise.tif "${HB[@]}" --steps 8 --tile $core --steps-per-exchange 3
  check "heightfield, bank rule: tile $core K 3 == one piece" 'same_as bmono "b${core}"'
done
run bdisk noise.tif "${HB[@]}" --steps 8 --tile 64 --steps-per-exchange 2 --store "$W/bstore"
check "heightfield, bank rule: disk store == one piece" 'same_as bmono bdisk'
check "the outputs differ from the input (the runs did something)" '! cmp -s "$W/hmono.tif" "$W/noise.tif"'

# --- a DEM (not a state) with NoData holes, both NoData policies -------
# The noise surface as Int16 heights in [-20, 20]; cells that round to 0
# (about 3 %) are NoData.
gdal_translate -q -b 1 -ot Int16 -scale 164 213 -20 20 -a_nodata 0 -mo TALUS_STATE=0 \
  "$W/noise.tif" "$W/dem.tif"
check "the DEM has NoData cells" 'gdalinfo -stats "$W/dem.tif" | grep -q "VALID_PERCENT=9[0-9]"'
for policy in outflow wall; do
  # 1 m cells: dt 0.2 s, inside the stable limit sqrt(1 / (2 g)) = 0.226 s
  D=(-c "$SRC/configs/dem-default.ini" --nodata $policy --steps 6 --set simulation.dt=0.2)
  run "dm_$policy" dem.tif "${D[@]}"
  run "dt_$policy" dem.tif "${D[@]}" --tile 37 --steps-per-exchange 3 --store "$W/dstore"
  check "DEM, NoData $policy: tile 37 K 3 on disk == one piece" 'same_as "dm_$policy" "dt_$policy"'
done
# erosion.base_level (the layered model holds the bedrock of cells beside
# an outflow face: the map's edge, the NoData sinks): eroding from step 0
# under heavy rain, tiled on disk == one piece, and the rule holds cells
# the run without it lowers.
L=(-c "$SRC/configs/dem-default.ini" --steps 12 --set simulation.dt=0.2 --set erosion.spinup=0
   --set water.rain=0.05 --set erosion.base_level=true)
run lb_mono dem.tif "${L[@]}"
run lb_tile dem.tif "${L[@]}" --tile 37 --steps-per-exchange 3 --store "$W/lstore"
check "DEM, erosion.base_level: tile 37 K 3 on disk == one piece" 'same_as lb_mono lb_tile'
run lb_off dem.tif "${L[@]}" --set erosion.base_level=false
check "DEM, erosion.base_level: the rule changes the result" '! cmp -s "$W/lb_mono.tif" "$W/lb_off.tif"'

echo "cli_tiles: $pass passed, $fail failed"
[ $fail -eq 0 ]
