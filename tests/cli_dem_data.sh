#!/usr/bin/env bash
# Every DEM in $TALUS_TEST_DATA erodes 50 steps with the DEM preset and keeps
# its georeferencing: same size, geotransform and CRS as the input, and
# NoData where the input has it, as NaN (the outputs are Float32: an
# integer DEM's 65535 or 32767 would read as a height there).
# Skipped (exit 77) when TALUS_TEST_DATA is unset.
source "$(dirname "$0")/lib_cli.sh"
if [ -z "${TALUS_TEST_DATA:-}" ] || [ ! -d "$TALUS_TEST_DATA" ]; then
  echo "cli_dem_data: skipped: TALUS_TEST_DATA is not set"
  exit 77
fi
# georef FILE: size, geotransform, CRS (as PROJJSON-free WKT) and NoData.
georef() {
  gdalinfo -json "$1" | tr -d ' \n' |
    grep -oE '"size":\[[0-9,]+\]|"geoTransform":\[[^]]*\]|"noDataValue":[^,}]*' | sort
  gdalsrsinfo -o wkt1 "$1" 2>/dev/null | tr -d ' \n'
}
for f in "$TALUS_TEST_DATA"/*; do
  case "$f" in *.md|*.hdr|*.txt|*.aux.xml) continue ;; esac
  name=$(basename "$f")
  if ! "$T" erode "$f" -o "$W/$name.out.tif" -c "$SRC/configs/dem-default.ini" --steps 50 -q \
      --report "$W/$name.json"; then
    fail=$((fail + 1)); echo "FAILED: $name did not erode" >&2; continue
  fi
  a=$(georef "$f"); b=$(georef "$W/$name.out.tif")
  # Same numbers, same text: any NoData value becomes NaN, and a rotation
  # term of -0.0 reads back as 0.0.
  norm() { sed -E 's/"noDataValue":[^,}"]*("NaN")?/"noDataValue":nan/; s/([[,])-0\.0([],])/\10.0\2/g'; }
  a=$(printf '%s' "$a" | norm)
  b=$(printf '%s' "$b" | norm)
  if [ "$a" = "$b" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAILED: $name georeferencing changed:" >&2
    diff <(echo "$a") <(echo "$b") >&2
  fi
done
echo "cli_dem_data: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
