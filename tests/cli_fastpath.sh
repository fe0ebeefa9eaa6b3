#!/usr/bin/env bash
# The CPU's layered fast paths (kernels/cpu/cpu.c: single live columns,
# rows without stacked columns) give the bytes of the general path: every
# scene runs once as built and once with TALUS_CPU_GENERAL=1 (general path
# everywhere), and the full states must be identical. Scenes with stacked
# columns (cave, arches, bridges) mix both paths within a row; a tiled run
# puts tile edges next to fast cells; a DEM with NoData (when
# $TALUS_TEST_DATA is set) adds masked neighbours and outflow sinks.
source "$(dirname "$0")/lib_cli.sh"

# same NAME INPUT CONFIG ARGS...: fast and general runs write identical states.
same() {
  local n=$1 in=$2 cfg=$3
  shift 3
  "$T" erode "$in" -o "$W/$n.fast.tif" -c "$SRC/configs/$cfg.ini" --state "$W/$n.fast.state.tif" \
    --no-preview -q --threads 2 "$@"
  TALUS_CPU_GENERAL=1 "$T" erode "$in" -o "$W/$n.gen.tif" -c "$SRC/configs/$cfg.ini" \
    --state "$W/$n.gen.state.tif" --no-preview -q --threads 2 "$@"
  check "$n: state written" '[ -s "$W/$n.fast.state.tif" ]'
  check "$n: fast path == general path" 'cmp -s "$W/$n.fast.state.tif" "$W/$n.gen.state.tif"'
  check "$n: surface identical" 'cmp -s "$W/$n.fast.tif" "$W/$n.gen.tif"'
}

for s in rivers-rain cave arches bridges chasm-source; do
  "$T" generate $s -o "$W/$s.tif" --size 64 --seed 5 >/dev/null
done
same rivers-rain "$W/rivers-rain.tif" rivers-rain --steps 60
same cave "$W/cave.tif" cave --steps 60
same arches "$W/arches.tif" arches --steps 60
same bridges "$W/bridges.tif" bridges --steps 60
same chasm-source "$W/chasm-source.tif" chasm-source --steps 60
same rivers-tiled "$W/rivers-rain.tif" rivers-rain --steps 40 --tile 32
dem=${TALUS_TEST_DATA:-}/austria_srtm30s.tif
if [ -n "${TALUS_TEST_DATA:-}" ] && [ -f "$dem" ]; then
  same dem-outflow "$dem" dem-default --steps 30
  same dem-wall "$dem" dem-default --steps 30 --nodata wall
fi

echo "cli_fastpath: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
