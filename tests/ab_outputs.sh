#!/usr/bin/env bash
# ab_outputs.sh — the A/B of a refactor: every output of the demo, the
# paper's scenes and the DEMs, written by one talus binary, then compared
# with another binary's. Not run by ctest (it needs two builds).
#   tests/ab_outputs.sh run TALUS_BIN DIR    write all outputs into DIR
#   tests/ab_outputs.sh compare DIR_A DIR_B  every raster, PNG and text byte
#                                            for byte; reports value for value
#                                            (timings, memory and paths aside)
# Uses $TALUS_TEST_DATA for the DEM cases (skipped when unset).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)

run_all() {
  local T D
  T=$(realpath "$1") D=$2
  mkdir -p "$D"
  D=$(realpath "$D")
  local q=(-q --device cpu)
  # the demo, exactly as `make demo`
  "$T" generate rivers-rain -o "$D/demo_terrain.tif" --size 512 --seed 7
  "$T" erode "$D/demo_terrain.tif" -o "$D/demo_eroded.tif" -c "$SRC/configs/rivers-rain.ini" \
    --steps 1500 --maps --preview "$D/demo_preview.png" --report "$D/demo_run.json" "${q[@]}"
  # every scene with its preset, in one piece, then tiled in memory and on disk
  local scenes="bridges chasm-rain chasm-source arches cave rivers-rain rivers-source"
  for s in $scenes noise; do
    "$T" generate "$s" -o "$D/scene_$s.tif" --size 128 --seed 3
  done
  for s in $scenes; do
    "$T" erode "$D/scene_$s.tif" -o "$D/${s}_one.tif" -c "$SRC/configs/$s.ini" --steps 120 \
      --maps --state "$D/${s}_state.tif" --preview "$D/${s}_one.png" --report "$D/${s}_one.json" "${q[@]}"
    "$T" erode "$D/scene_$s.tif" -o "$D/${s}_mem.tif" -c "$SRC/configs/$s.ini" --steps 120 \
      --tile 64 --maps --no-preview --report "$D/${s}_mem.json" "${q[@]}"
    "$T" erode "$D/${s}_state.tif" -o "$D/${s}_cont.tif" -c "$SRC/configs/$s.ini" --steps 30 \
      --tile 64 --store "$D/${s}.store" --state "$D/${s}_cont_state.tif" --no-preview "${q[@]}"
  done
  for c in heightfield-default thermal-only game-terrain; do
    "$T" erode "$D/scene_noise.tif" -o "$D/noise_$c.tif" -c "$SRC/configs/$c.ini" --steps 150 \
      --maps --state "$D/noise_${c}_state.tif" --preview "$D/noise_$c.png" \
      --report "$D/noise_$c.json" "${q[@]}"
    "$T" erode "$D/scene_noise.tif" -o "$D/noise_${c}_disk.tif" -c "$SRC/configs/$c.ini" \
      --steps 150 --tile 64 --store "$D/noise_$c.store" --maps --no-preview "${q[@]}"
  done
  if [ -n "${TALUS_TEST_DATA:-}" ] && [ -d "$TALUS_TEST_DATA" ]; then
    for f in "$TALUS_TEST_DATA"/*; do
      case "$f" in *.md | *.hdr | *.txt | *.aux.xml) continue ;; esac
      local n; n=$(basename "$f")
      for c in dem-default dem-heightfield; do
        "$T" erode "$f" -o "$D/dem_${n}_$c.tif" -c "$SRC/configs/$c.ini" --steps 40 --maps \
          --state "$D/dem_${n}_${c}_state.tif" --preview "$D/dem_${n}_$c.png" \
          --report "$D/dem_${n}_$c.json" "${q[@]}"
      done
    done
  fi
  "$T" params > "$D/params.txt"
  (cd "$D" && "$T" info scene_cave.tif >info_cave.txt 2>&1) || true
}

# report_values FILE: the report less what differs between two identical runs.
report_values() {
  python3 - "$1" <<'PY'
import json, sys
SKIP = ("time", "seconds", "_s", "per_s", "rss", "memory", "peak", "path", "input", "output",
        "threads", "version", "host", "date", "store")
def walk(v, key=""):
    if isinstance(v, dict):
        for k in sorted(v):
            if k == "talus" or any(s in k.lower() for s in SKIP): continue
            yield from walk(v[k], key + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v): yield from walk(x, f"{key}[{i}]")
    else:
        yield f"{key} = {v!r}"
print("\n".join(walk(json.load(open(sys.argv[1])))))
PY
}

compare_all() {
  local A=$1 B=$2 bad=0 n=0
  for a in "$A"/*; do
    local f; f=$(basename "$a")
    [ -f "$a" ] || continue
    n=$((n + 1))
    if [ ! -f "$B/$f" ]; then echo "MISSING in B: $f"; bad=$((bad + 1)); continue; fi
    case "$f" in
    *.json) diff <(report_values "$a") <(report_values "$B/$f") >/dev/null ||
      { echo "REPORT DIFFERS: $f"; { diff <(report_values "$a") <(report_values "$B/$f") || true; } | head -4; bad=$((bad + 1)); } ;;
    *) cmp -s "$a" "$B/$f" || { echo "DIFFERS: $f"; bad=$((bad + 1)); } ;;
    esac
  done
  for b in "$B"/*; do [ -e "$A/$(basename "$b")" ] || { echo "EXTRA in B: $(basename "$b")"; bad=$((bad + 1)); }; done
  echo "ab_outputs: $((n - bad)) identical, $bad differ"
  [ $bad -eq 0 ]
}

case "${1:-}" in
run) run_all "$2" "$3" ;;
compare) compare_all "$2" "$3" ;;
*) sed -n '2,9p' "$0"; exit 2 ;;
esac
