#!/usr/bin/env bash
# A run continued from a saved layered state gives exactly the bytes of an
# uninterrupted run (surface and full state), on a scene that splits
# columns (chasm-source) so every per-column field matters.
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
echo "cli_state_resume: $pass passed, $fail failed"
[ $fail -eq 0 ]
