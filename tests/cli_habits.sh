#!/usr/bin/env bash
# The habits of GIS, game and cluster users: presets by name (talus presets,
# -c NAME), a DEM run without -c saying which preset it chose, help and
# version on every command, -q, `talus info --json`, progress as whole
# lines in a batch log, and signals: SIGTERM stops a --store run cleanly
# (exit 143, the store kept, a message saying how to --resume) and the
# resumed run writes the bytes of an uninterrupted one.
source "$(dirname "$0")/lib_cli.sh"

# Presets by name: listed one per line, loaded by name from anywhere.
"$T" presets >"$W/presets.txt"
n=$(ls "$SRC"/configs/*.ini | wc -l)
check "talus presets lists every configs/*.ini ($n)" \
  '[ $(wc -l <"$W/presets.txt") -eq $n ] && ! grep -qv "^[a-z-]* \+[^ ]" "$W/presets.txt"'
(cd "$W" && "$T" params --ini -c rivers-rain >by_name.ini)
"$T" params --ini -c "$SRC/configs/rivers-rain.ini" >"$W/by_path.ini"
check "-c rivers-rain loads configs/rivers-rain.ini (same effective INI)" \
  'cmp -s "$W/by_name.ini" "$W/by_path.ini" && ! cmp -s "$W/by_name.ini" <("$T" params --ini)'
(cd "$W" && "$T" params --ini -c rivers-rain.ini >by_name2.ini)
check "-c rivers-rain.ini works too" 'cmp -s "$W/by_name.ini" "$W/by_name2.ini"'
"$T" params --ini -c no-such-preset >/dev/null 2>"$W/np.err"
check "an unknown preset name fails, listing the presets" \
  '[ $? -ne 0 ] && grep -q "no preset of that name" "$W/np.err" && grep -q "rivers-rain" "$W/np.err"'

# A DEM without -c: the preset chosen by cell size, said with the cell size.
"$T" generate rivers-rain -o "$W/scene.tif" --size 48 -q
gdal_translate -q -b 1 -co PROFILE=GeoTIFF --config GDAL_PAM_ENABLED NO -a_srs EPSG:32611 -a_ullr 500000 4000000 501440 3998560 "$W/scene.tif" "$W/dem.tif"
"$T" erode "$W/dem.tif" -o "$W/dem_out.tif" --steps 2 --no-preview 2>"$W/dem.err"
check "a DEM without -c names its cell size and preset" \
  'grep -q "a DEM of 30 m cells and no -c preset: running the built-in preset dem-heightfield" "$W/dem.err"'
"$T" erode "$W/dem.tif" -o "$W/dem_out.tif" --steps 2 --no-preview --cell-size 900 2>"$W/dem9.err"
check "outside the preset's checked cell sizes: a warning" 'grep -q "warning: preset dem-heightfield was checked on cells of 1 to 150 m, not 900 m" "$W/dem9.err"'

# A band cut from a state keeps its TALUS_* metadata: it is read as a DEM.
gdal_translate -q -b 1 "$W/scene.tif" "$W/cut.tif"
"$T" erode "$W/cut.tif" -o "$W/cut_out.tif" --steps 2 --no-preview 2>"$W/cut.err"
check "a band cut from a state erodes as a DEM" \
  '[ -s "$W/cut_out.tif" ] && grep -q "no -c preset: running the built-in preset" "$W/cut.err"'

# Help and version everywhere; -q on every command.
for c in erode generate presets params info export; do
  check "talus help $c == talus $c --help == -h" \
    'cmp -s <("$T" help $c) <("$T" $c --help) && cmp -s <("$T" $c -h) <("$T" $c --help) && "$T" $c -h | grep -q "^usage: talus $c"'
  check "talus $c --version" '"$T" $c --version | grep -q "^talus [0-9]"'
done
check "talus version" '"$T" version | grep -q "^talus [0-9].*backends"'
check "talus help nosuch fails" '! "$T" help nosuch 2>/dev/null'
"$T" generate cave -o "$W/cave.tif" --size 32 -q >"$W/gq.out" 2>&1
check "generate -q writes the scene and nothing else" '[ -s "$W/cave.tif" ] && [ ! -s "$W/gq.out" ]'

# talus info --json: valid JSON for any path, the facts of the text form.
mkdir -p "$W/a \"quoted\" dir\\x"
cp "$W/cave.tif" "$W/a \"quoted\" dir\\x/c.tif"
"$T" info --json "$W/a \"quoted\" dir\\x/c.tif" >"$W/info.json"
check "info --json: valid JSON naming the file, 32 x 32, bands" \
  'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"file\"].endswith(\"dir\\\\x/c.tif\") and d[\"width\"]==32 and d[\"height\"]==32 and d[\"cell_size_m\"]==8 and d[\"bands\"][0][\"description\"]==\"surface\"" "$W/info.json"'

# Map types: float maps take NaN as NoData whatever the input's (a UInt16
# DEM's 65535 would read as a height), column counts are a Byte band with
# NoData 0.
gdal_translate -q -ot UInt16 -scale 0 60 100 2000 -a_nodata 65535 \
  "$W/dem.tif" "$W/u16.tif"
"$T" erode "$W/u16.tif" -o "$W/u.tif" --steps 2 --maps -q --no-preview
check "UInt16 DEM: the surface and float maps have NoData NaN" \
  '( for m in "" _water _sand _erosion; do gdalinfo "$W/u$m.tif" | grep -q "NoData Value=nan" || exit 1; done )'
check "the column counts are a Byte band with NoData 0" \
  'gdalinfo "$W/u_columns.tif" | grep -q "Type=Byte" && gdalinfo "$W/u_columns.tif" | grep -q "NoData Value=0"'

# Progress in a batch log: whole lines, each 10 %, ending at 100 %.
"$T" erode "$W/cave.tif" -o "$W/p.tif" -c cave --steps 20 --no-preview 2>"$W/p.err"
check "batch log: progress as lines, 10 % apart, up to 100 %" \
  '[ $(grep -c "^talus: eroding .*steps/s" "$W/p.err") -eq 10 ] && grep -q "eroding 100% 20/20 steps" "$W/p.err" && ! grep -q $'"'"'\r'"'"' "$W/p.err"'
"$T" erode "$W/cave.tif" -o "$W/p.tif" -c cave --steps 20 --no-preview -q 2>"$W/pq.err"
check "-q: no progress lines" '! grep -q eroding "$W/pq.err"'

# SIGTERM (a scheduler's pre-emption) on a disk-store run: raised from
# inside the run at a chosen store operation (TALUS_TEST_KILL_SIGNAL, as
# the kill tests do), once in the set-up and once mid-run.
chasm_scene init
A=(-c chasm-source --set water.rain=0.01 --steps 12 --tile 64 --steps-per-exchange 2 --no-preview --maps)
"$T" erode "$W/init.tif" -o "$W/ref.tif" "${A[@]}" -q
for op in 30 600; do
  rm -rf "$W/store" "$W"/out*.tif
  TALUS_TEST_KILL_AT_OP=$op TALUS_TEST_KILL_SIGNAL=15 "$T" erode "$W/init.tif" -o "$W/out.tif" \
    "${A[@]}" --store "$W/store" 2>"$W/term.err"
  rc=$?
  check "SIGTERM at store op $op: exit 143 ($rc)" '[ $rc -eq 143 ]'
  check "SIGTERM at op $op: says how to resume, keeps the store, writes nothing" \
    'grep -q "terminated (SIGTERM).*--store $W/store --resume" "$W/term.err" && [ -d "$W/store" ] && [ -z "$(ls "$W"/out*.tif 2>/dev/null)" ]'
  "$T" erode "$W/init.tif" -o "$W/out.tif" "${A[@]}" --store "$W/store" --resume -q
  for s in '' _water _sand _sediment _columns _erosion _water_surface; do
    check "SIGTERM at op $op, --resume: out$s.tif == the uninterrupted run's" \
      'cmp -s "$W/ref$s.tif" "$W/out$s.tif"'
  done
done
grep -h "cancelled at step" "$W/term.err" | sed 's/^/  last SIGTERM: /'

echo "cli_habits: $pass passed, $fail failed"
[ $fail -eq 0 ]
