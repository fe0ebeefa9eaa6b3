#!/usr/bin/env bash
# Bad input of every kind gives a clear message naming the problem, a
# non-zero exit, and leaves no output file behind.
set -u
T=${TALUS_BIN:?TALUS_BIN not set}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $1" >&2; fi; }

# expect_fail NAME PATTERN -- talus args...: exit != 0, stderr matches PATTERN,
# and none of $W/out* exists afterwards.
expect_fail() {
  local name=$1 pattern=$2
  shift 3
  local err rc
  # Bad input must be refused at once, not after a long run: a hang fails.
  err=$(timeout 60 "$T" "$@" 2>&1 >/dev/null)
  rc=$?
  local left
  left=$(find "$W" -maxdepth 2 -name 'out*' | head -1)
  if [ $rc -ne 0 ] && printf '%s' "$err" | grep -qiE -- "$pattern" && [ -z "$left" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAILED: $name: rc=$rc left='$left' stderr: $err" >&2
  fi
  rm -f "$W"/out*
}

gdal_create -q -of GTiff -outsize 16 16 -ot Float32 -burn 100 -a_srs EPSG:32611 \
  -a_ullr 0 480 480 0 "$W/good.tif"
gdal_create -q -of GTiff -outsize 8 8 -ot Float32 -burn -9999 -a_nodata -9999 "$W/allnodata.tif"
gdal_create -q -of GTiff -outsize 8 8 -ot Float32 -burn nan "$W/nan.tif"
echo "this is not a raster" > "$W/text.tif"
cat > "$W/huge.vrt" <<VRT
<VRTDataset rasterXSize="2000000" rasterYSize="2000000">
  <VRTRasterBand dataType="Float32" band="1"/>
</VRTDataset>
VRT
cat > "$W/zero.vrt" <<VRT
<VRTDataset rasterXSize="0" rasterYSize="0">
  <VRTRasterBand dataType="Float32" band="1"/>
</VRTDataset>
VRT
mkdir "$W/repdir"
# Every output a run can write, so that "nothing left behind" covers them all.
ALL=(--maps --state "$W/out_state.tif" --report "$W/out_report.json")
printf '[water]\nrian = 0.1\n' > "$W/unknown.ini"
printf '[water]\nrain = -5\n' > "$W/range.ini"

expect_fail "missing file" "no such file|cannot open|does not exist" -- erode "$W/nope.tif" -o "$W/out.tif" --steps 1 -q "${ALL[@]}"
expect_fail "not a raster" "not a (recognised|recognized|supported)? ?raster|not recognized|format" -- erode "$W/text.tif" -o "$W/out.tif" --steps 1 -q "${ALL[@]}"
expect_fail "absurd size" "too large|absurd|cells" -- erode "$W/huge.vrt" -o "$W/out.tif" --steps 1 -q "${ALL[@]}"
expect_fail "zero size" "0 x 0|raster size" -- erode "$W/zero.vrt" -o "$W/out.tif" --steps 1 -q "${ALL[@]}"
expect_fail "all nodata" "nodata" -- erode "$W/allnodata.tif" -o "$W/out.tif" --steps 1 -q "${ALL[@]}"
expect_fail "nan heights" "nan|not a number|finite" -- erode "$W/nan.tif" -o "$W/out.tif" --steps 1 -q "${ALL[@]}"
expect_fail "-o with a non-GeoTIFF name" "GeoTIFF only.*\.tif" -- erode "$W/good.tif" -o "$W/out.png" --steps 1 -q "${ALL[@]}"
expect_fail "--state with a non-GeoTIFF name" "--state.*GeoTIFF only" -- erode "$W/good.tif" -o "$W/out.tif" --state "$W/out.npy" --steps 1 -q
expect_fail "generate -o with a non-GeoTIFF name" "GeoTIFF only" -- generate noise -o "$W/out.png" --size 16
expect_fail "unknown key" "did you mean.*water.rain" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q -c "$W/unknown.ini"
expect_fail "unknown --set key" "did you mean" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --set water.rian=1
expect_fail "out of range key" "water.rain.*\[" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q -c "$W/range.ini"
expect_fail "missing config" "no such file|cannot open|cannot read" -- erode "$W/good.tif" -o "$W/out.tif" -q -c "$W/none.ini"
expect_fail "unwritable output" "cannot write|directory" -- erode "$W/good.tif" -o "$W/nodir/out.tif" --steps 1 -q
expect_fail "report path is a directory" "directory" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q "${ALL[@]}" --report "$W/repdir"
expect_fail "state overwrites the surface" "same file" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --state "$W/out.tif"
expect_fail "preview overwrites the surface" "same file" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --preview "$W/./out.tif"
expect_fail "state overwrites a map" "same file" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --maps --state "$W/out_water.tif"
expect_fail "output overwrites the input" "overwrite the input" -- erode "$W/good.tif" -o "$W/./good.tif" --steps 1 -q
# /proc passes the pre-run check as root but refuses new files: the report
# fails after the surface and maps were written, and they must go too.
expect_fail "write fails after the run" "cannot write" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --maps --state "$W/out_state.tif" --report /proc/out_report.json
expect_fail "bad steps" "steps" -- erode "$W/good.tif" -o "$W/out.tif" --steps -3 -q
expect_fail "unknown option" "unknown option" -- erode "$W/good.tif" -o "$W/out.tif" --stepz 3
expect_fail "bad -co" "creation option|FOO" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q -co FOO=BAR
expect_fail "unknown scene" "unknown scene|bridges" -- generate nowhere -o "$W/out.tif"
expect_fail "unknown command" "unknown command" -- frobnicate
expect_fail "thermal.creep on the layered model" "thermal.creep.*heightfield model.*sand.creep" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --set simulation.model=layered --set thermal.enable=true --set thermal.creep=0.01
expect_fail "thermal.creep unstable" "thermal.creep.*unstable.*<= 0.1" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --set simulation.model=heightfield --set thermal.enable=true --set thermal.creep=1e5
expect_fail "bad strength" "strength.*light, medium or heavy" -- erode "$W/good.tif" -o "$W/out.tif" --strength brutal -q
expect_fail "--seconds with --steps" "seconds counts the steps.*without --steps" -- erode "$W/good.tif" -o "$W/out.tif" --seconds 5 --steps 3 -q
expect_fail "--seconds not positive" "seconds" -- erode "$W/good.tif" -o "$W/out.tif" --seconds 0 -q
# dt against the cell size (30 m cells: sqrt(30 / (2 g)) = 1.24 s): refused
# at 4x the limit, in the tiled run as in the one-piece run, and warned of
# (not refused) just above it.
expect_fail "dt far too large" "simulation.dt = 6 s.*stable limit 1.24 s of 30 m" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --set simulation.dt=6
expect_fail "dt far too large, tiled" "simulation.dt = 6 s.*stable limit" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --tile 8 --set simulation.dt=6
expect_fail "dt far too large, 10 m cells" "stable limit 0.714 s of 10 m" -- erode "$W/good.tif" -o "$W/out.tif" --steps 1 -q --cell-size 10 --set simulation.dt=3
warn=$("$T" erode "$W/good.tif" -o "$W/dt.tif" --steps 1 --no-preview --set simulation.dt=2 2>&1 >/dev/null)
check "dt above the limit warns" 'printf "%s" "$warn" | grep -q "warning: simulation.dt = 2 s exceeds the stable limit 1.24 s" && [ -s "$W/dt.tif" ]'
quiet=$("$T" erode "$W/good.tif" -o "$W/dt.tif" --steps 1 --no-preview --set simulation.dt=1 2>&1 >/dev/null)
check "dt below the limit does not warn" '! printf "%s" "$quiet" | grep -q "stable limit"'

# The good input works, so the failures above are about the input.
if "$T" erode "$W/good.tif" -o "$W/ok.tif" --steps 2 -q && [ -s "$W/ok.tif" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAILED: good input did not erode" >&2
fi
echo "cli_errors: $pass passed, $fail failed"
[ $fail -eq 0 ]
