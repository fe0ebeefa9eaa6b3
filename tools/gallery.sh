#!/usr/bin/env bash
# gallery.sh — renders the README's gallery: every scene in configs/ that
# `talus generate` makes, eroded with its own preset, and one real DEM,
# each as the before | after preview (water blue, overhangs orange) in
# OUT/<scene>.png. Intermediate rasters go to a scratch directory that is
# removed at the end.
#   tools/gallery.sh [TALUS_BIN [OUT_DIR]]   defaults: build/talus, gallery/
# The DEM is bigtujunga_srtm30m_utm11.tif from $TALUS_TEST_DATA (else
# ../shared/data/dem); without it the DEM picture is skipped, with a note.
# Sizes and steps keep each run under ~2 minutes on 2 cores: the pictures
# show what each preset does at that length, not its converged state.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(realpath "${1:-$SRC/build/talus}")
OUT=${2:-$SRC/gallery}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
W=$(mktemp -d "${TMPDIR:-/tmp}/talus_gallery.XXXXXX")
trap 'rm -rf "$W"' EXIT

# Simulated seconds per scene (each preset's dt is 0.05 s: 20 steps a
# second at 256², where the paper's 256 m wide scenes have 1 m cells; on a
# finer grid, TALUS_GALLERY_SIZE=512, the presets with water.finest_cell
# take steps of 0.025 s and the same seconds). arches rains for 6000 steps
# and is dry by 16500 (825 s; its preset's water.rain_steps); its
# horizontal erosion erodes alike on any grid (configs/arches.ini), so it
# runs at 256² like the rest: the longest run (about 4 CPU-minutes); bridges shows its
# collapses within a few support cycles; rivers-rain runs its preset's
# suggested 3500 steps (rain, then the dry-out); the rest get 1500-3000
# steps.
SIZE=${TALUS_GALLERY_SIZE:-256}
seconds_of() {
  case "$1" in
    bridges) echo 15 ;;
    arches) echo 825 ;;
    cave) echo 150 ;; # the tunnel widens and its stream reaches the plain
    rivers-rain) echo 175 ;; # 75 s of heavy rain, then the dry-out
    chasm-rain) echo 400 ;; # channels and their ridge; its fall: chasm-rain-mesh.png, below
    chasm-source) echo 75 ;;
    rivers-source) echo 300 ;; # the lakes below the sources spill and reach the east edge
  esac
}

# The scenes `talus generate --help` lists that have a preset in configs/.
scenes() {
  local s
  for s in $("$T" generate --help | sed -n 's/^ *SCENE *one of: *//p'); do
    [ -f "$SRC/configs/$s.ini" ] && echo "$s"
  done
}

# render NAME INPUT PRESET STEPS [--seconds]: erodes INPUT for STEPS steps
# (or seconds) and writes OUT/NAME.png.
render() {
  local t0=$SECONDS unit=${5:---steps}
  "$T" erode "$2" -o "$W/$1_eroded.tif" -c "$SRC/configs/$3.ini" "$unit" "$4" \
    --preview "$OUT/$1.png" -q
  echo "gallery: $1.png ($3, $4 ${unit#--}, $((SECONDS - t0)) s)"
}

n=0
for s in $(scenes); do
  "$T" generate "$s" -o "$W/$s.tif" --size "$SIZE" --seed 7
  render "$s" "$W/$s.tif" "$s" "$(seconds_of "$s")" --seconds
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "gallery: no scene found (is $T built?)" >&2; exit 1; }

# chasm-rain's ridge falling, from the generated terrain with its own
# preset: the fin between the two channels (x 126-186 m, y 122-134 m, the
# walls cut away) as a mesh after 600 s (12 000 steps at 256²) and after
# 900 s (resumed from the first state), side by side
# (OUT/chasm-rain-mesh.png).
t0=$SECONDS
"$T" erode "$W/chasm-rain.tif" -o "$W/fin12.tif" -c "$SRC/configs/chasm-rain.ini" --seconds 600 \
  --state "$W/fin12_state.tif" --no-preview -q
"$T" erode "$W/fin12_state.tif" -o "$W/fin18.tif" -c "$SRC/configs/chasm-rain.ini" --seconds 300 \
  --state "$W/fin18_state.tif" --no-preview -q
m() { echo $(($1 * SIZE / 256)); } # metres of the 256 m scene as cells
for s in fin12 fin18; do
  "$T" export "$W/${s}_state.tif" --crop "$(m 126),$(m 122),$(m 60),$(m 12)" -o "$W/$s.obj" -q
done
python3 "$SRC/tools/render_mesh.py" "$W/fin12.obj" "$W/fin18.obj" "$OUT/chasm-rain-mesh.png" \
  --azimuth 210 --elevation 12 --width 560
echo "gallery: chasm-rain-mesh.png (chasm-rain, 12000 | 18000 steps, $((SECONDS - t0)) s)"

# The heightfield model on generated 1 m hills (no overhangs, no layers).
"$T" generate noise -o "$W/noise.tif" --size "$SIZE" --seed 7
render heightfield-noise "$W/noise.tif" heightfield-default 2000

# A real DEM: a 360² window (11 km) of the San Gabriel Mountains around Big
# Tujunga canyon, SRTM 30 m (360², not 512², keeps the PNG under 400 KB:
# hillshaded relief compresses poorly).
DATA=${TALUS_TEST_DATA:-$SRC/../shared/data/dem}
DEM=$DATA/bigtujunga_srtm30m_utm11.tif
if [ -f "$DEM" ]; then
  gdal_translate -q -srcwin 300 50 360 360 "$DEM" "$W/dem.tif"
  # Both DEM presets, each for its suggested run (--strength medium):
  # 1500 steps of water spin-up, then 2500 droplet batches, one every 2
  # steps (dem-heightfield), or 2500 steps of stream-power erosion
  # (dem-default).
  render dem-bigtujunga "$W/dem.tif" dem-heightfield 6500
  render dem-bigtujunga-layered "$W/dem.tif" dem-default 4000
  # Droplets alone (configs/particles.ini): 2000 batches, ~8 per cell.
  render dem-bigtujunga-particles "$W/dem.tif" particles 2000
  # The range front south-west of it (the canyon's mouth onto the San
  # Fernando Valley): the layered preset's fans, drawn as dz over the
  # hillshade (tools/render_dz.py: red lowered, blue raised, full at 3 m).
  gdal_translate -q -srcwin 0 283 400 360 "$DEM" "$W/front.tif"
  render dem-rangefront "$W/front.tif" dem-default 4000
  python3 "$SRC/tools/render_dz.py" "$W/front.tif" "$W/dem-rangefront_eroded.tif" \
    "$OUT/dem-rangefront_dz.png" --clip 3
  # The bare command (dem-heightfield) on the same front: the load its
  # rivers lay where the water spreads in the open (the wash, the side
  # streams' fans), its droplets' gullies.
  "$T" erode "$W/front.tif" -o "$W/dem-rangefront-bare_eroded.tif" \
    -c "$SRC/configs/dem-heightfield.ini" --steps 6500 --no-preview -q
  python3 "$SRC/tools/render_dz.py" "$W/front.tif" "$W/dem-rangefront-bare_eroded.tif" \
    "$OUT/dem-rangefront-bare_dz.png" --clip 3
else
  echo "gallery: $DEM not found: DEM picture skipped (set TALUS_TEST_DATA)"
fi
