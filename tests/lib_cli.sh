# lib_cli.sh — sourced first by the tests/cli_*.sh tests: the talus binary
# ($T, from TALUS_BIN), the source tree ($SRC, from TALUS_SOURCE_DIR), a
# scratch directory ($W, removed at exit) and `check NAME EXPR`, which
# evaluates EXPR and counts it in $pass or $fail (printing NAME on failure),
# and same_as REF RUN, which compares two runs' output sets in $W.
# A test ends with its tally: echo "NAME: $pass passed, $fail failed" and
# [ $fail -eq 0 ] as its exit status.
set -u
T=${TALUS_BIN:?TALUS_BIN not set}
SRC=${TALUS_SOURCE_DIR:?TALUS_SOURCE_DIR not set}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $1" >&2; fi; }

# same_as REF RUN: every output file of RUN equals REF's, byte for byte.
same_as() {
  local s
  for s in '' _water _sand _sediment _columns _erosion _water_surface _state; do
    cmp -s "$W/$1$s.tif" "$W/$2$s.tif" || { echo "  $2$s.tif differs from $1$s.tif" >&2; return 1; }
  done
}

# chasm_scene NAME: the 300 x 200 chasm-source terrain (8 layers) of the
# tiled and MPI tests, written to $W/NAME.tif.
chasm_scene() {
  "$T" generate chasm-source -o "$W/c300.tif" --size 300 --layers 8
  gdal_translate -q -srcwin 0 50 300 200 "$W/c300.tif" "$W/$1.tif"
}

# LAY: chasm-source with every layered process busy (rain, a source,
# splits, collapses); layered_warm_state writes $W/warm.tif, 40 steps of it
# on chasm_scene, a state where those processes act within a few steps.
LAY=(-c "$SRC/configs/chasm-source.ini" --set simulation.dt=0.15 --set water.rain=0.01
     --set source1.x=200 --set source1.y=85 --set source1.radius=8 --set horizontal.strength=3
     --set horizontal.split_size=0.25 --set support.iterations=2
     --set support.max_propagation_distance=8 --set simulation.masks=true)
layered_warm_state() {
  chasm_scene c200
  "$T" erode "$W/c200.tif" -o "$W/warmup.tif" "${LAY[@]}" -q --no-preview --steps 40 \
    --state "$W/warm.tif"
}

# flow REPORT NAME: prints True when run report REPORT books flow NAME > 0.
flow() { python3 -c "import json,sys; print(json.load(open('$1'))['ledger']['flows']['$2'] > 0)"; }
