#!/usr/bin/env bash
# The CPU's fast paths (kernels/cpu/cpu.c: layered single live columns,
# rows without stacked columns, the heightfield's live runs) give the
# bytes of the general path: every scene runs once as built and once with
# TALUS_CPU_GENERAL=1 (general path everywhere), and the full states must
# be identical. Scenes with stacked
# columns (cave, arches, bridges) mix both paths within a row; a tiled run
# puts tile edges next to fast cells; a DEM with NoData (when
# $TALUS_TEST_DATA is set) adds masked neighbours and outflow sinks.
# Likewise every instruction-set variant of the stages (TALUS_CPU_ISA=base
# and v3 against the widest this CPU runs) gives the same states, surfaces
# and ledgers.
source "$(dirname "$0")/lib_cli.sh"

# same NAME VAR=VALUE INPUT CONFIG ARGS...: a run as built and one with the
# environment variable set write identical states, surfaces and ledgers.
same() {
  local n=$1 env=$2 in=$3 cfg=$4
  shift 4
  "$T" erode "$in" -o "$W/$n.a.tif" -c "$SRC/configs/$cfg.ini" --state "$W/$n.a.state.tif" \
    --report "$W/$n.a.json" --no-preview -q --threads 2 "$@"
  env "$env" "$T" erode "$in" -o "$W/$n.b.tif" -c "$SRC/configs/$cfg.ini" \
    --state "$W/$n.b.state.tif" --report "$W/$n.b.json" --no-preview -q --threads 2 "$@"
  check "$n: state written" '[ -s "$W/$n.a.state.tif" ]'
  check "$n: $env gives the same state" 'cmp -s "$W/$n.a.state.tif" "$W/$n.b.state.tif"'
  check "$n: surface identical" 'cmp -s "$W/$n.a.tif" "$W/$n.b.tif"'
  check "$n: ledger identical" \
    'diff <(sed -n "/\"ledger\"/,\$p" "$W/$n.a.json") <(sed -n "/\"ledger\"/,\$p" "$W/$n.b.json") >/dev/null'
}

for s in rivers-rain cave arches bridges chasm-source; do
  "$T" generate $s -o "$W/$s.tif" --size 64 --seed 5 >/dev/null
done
G=TALUS_CPU_GENERAL=1
same rivers-rain $G "$W/rivers-rain.tif" rivers-rain --steps 60
same cave $G "$W/cave.tif" cave --steps 60
same arches $G "$W/arches.tif" arches --steps 60
same bridges $G "$W/bridges.tif" bridges --steps 60
same chasm-source $G "$W/chasm-source.tif" chasm-source --steps 60
same rivers-tiled $G "$W/rivers-rain.tif" rivers-rain --steps 40 --tile 32
# the pipes and transport vector loops are compiled once with diagonal
# slippage and once without (cpu_vary_diag): the paper's 4 neighbours, no
# slippage at all, and the stream-power law's energy slope take the other
# loop or other selects
same rivers-4nb $G "$W/rivers-rain.tif" rivers-rain --steps 60 --set sand.neighbours=4
same rivers-noslip $G "$W/rivers-rain.tif" rivers-rain --steps 60 --set sand.slippage=false
same rivers-stream $G "$W/rivers-rain.tif" rivers-rain --steps 60 --set erosion.law=stream_power
# pipes multiply by the slippage range's reciprocal when it is a power of
# two (the presets' 1 m; cpu_vary_pipes), transport and horizontal by the
# cell size's (the scenes' 256 m / 2^k cells; cpu_vary_transport,
# cpu_vary_horizontal): the other copies divide, as the general path does
same rivers-range $G "$W/rivers-rain.tif" rivers-rain --steps 60 --set sand.slippage_range=0.7
same rivers-cell $G "$W/rivers-rain.tif" rivers-rain --steps 60 --cell-size 3
same arches-cell $G "$W/arches.tif" arches --steps 60 --cell-size 0.3
# the heightfield's vector loops (rain, erode, advect, settle) and its
# thermal runs (thermal_out_live, thermal_in_live; crests_only as the
# loop's constant; at 5 degrees the noise has crests to shed) against the
# cell-by-cell bodies; a tiled run and a DEM with NoData put general cells
# next to the live runs
"$T" generate noise -o "$W/noise.tif" --size 96 --seed 3 >/dev/null
same heightfield $G "$W/noise.tif" heightfield-default --steps 150 --set thermal.enable=true
same heightfield-crests $G "$W/noise.tif" heightfield-default --steps 150 \
  --set thermal.crests_only=true --set thermal.talus_angle=5
# thermal.bank_angle: the accumulators' live runs (acc_begin_live,
# acc_end_live) and the bank rule in thermal_out_live (the hydraulic run's
# millimetres of cutting give it steps to shed at 10 degrees)
same heightfield-banks $G "$W/noise.tif" heightfield-default --steps 150 \
  --set thermal.enable=true --set thermal.crests_only=true --set thermal.talus_angle=5 \
  --set thermal.bank_angle=10
same heightfield-tiled $G "$W/noise.tif" heightfield-default --steps 60 --tile 32
# heightfield.sheet_capacity < 1 runs hf_open, whose live run (cells
# sheet_reach inside the map, no NoData at its 8 ends) is one vector loop
same heightfield-open $G "$W/noise.tif" heightfield-default --steps 60 --tile 32 \
  --set heightfield.sheet_capacity=0.3
dem=${TALUS_TEST_DATA:-}/austria_srtm30s.tif
if [ -n "${TALUS_TEST_DATA:-}" ] && [ -f "$dem" ]; then
  same dem-outflow $G "$dem" dem-default --steps 30
  same dem-wall $G "$dem" dem-default --steps 30 --nodata wall
  # erosion.base_level: the edge cells take the general body (cpu_vertical_run_end)
  same dem-base $G "$dem" dem-default --steps 30 --set erosion.spinup=0 --set water.rain=0.01 \
    --set erosion.base_level=true
  same dem-heightfield $G "$dem" dem-heightfield --steps 30 --set erosion.spinup=0
fi

# split's scan passes over NoData cells (cpu_split_next): the chasm-rain
# terrain as a DEM whose plain (0 m) is NoData, cut under by game-terrain's
# horizontal erosion (~600 m3 of columns split by 1000 steps) beside it
"$T" generate chasm-rain -o "$W/chasm.tif" --size 64 --seed 5 >/dev/null
gdal_translate -q -b 1 -ot Int16 -a_nodata 0 -mo TALUS_STATE=0 "$W/chasm.tif" "$W/chasm_dem.tif"
same dem-splits $G "$W/chasm_dem.tif" game-terrain --steps 1000 --nodata outflow
check "dem-splits: columns split" \
  'grep -q "\"split\": [1-9]" "$W/dem-splits.a.json"'

for isa in base v3; do
  I=TALUS_CPU_ISA=$isa
  same rivers-rain-$isa $I "$W/rivers-rain.tif" rivers-rain --steps 60
  same cave-$isa $I "$W/cave.tif" cave --steps 60
  same chasm-source-$isa $I "$W/chasm-source.tif" chasm-source --steps 60
  same heightfield-$isa $I "$W/noise.tif" heightfield-default --steps 150 --set thermal.enable=true
  if [ -n "${TALUS_TEST_DATA:-}" ] && [ -f "$dem" ]; then
    same dem-$isa $I "$dem" dem-default --steps 30
  fi
done

echo "cli_fastpath: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
