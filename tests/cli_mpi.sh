#!/usr/bin/env bash
# Rank invariance, end to end: `mpirun -np N talus erode` writes the bytes
# of one process (surface, every --maps file, the full --state) for
# N ∈ {1, 2, 3, 4} and several tile sizes (cores that do not divide the
# map, ranks that own unequal blocks, a rank with no tile), in memory and
# on a shared disk store, for both models:
# - layered: 300 x 200 cut from chasm-source, warmed up so columns have
#   split; rain, a source, splits and collapses happen in the compared steps;
# - heightfield with thermal erosion: 200 x 200 fBm noise;
# - droplets on layered stacks with rain (particles-game.ini, gully-arch 96²);
# the first two with the run accumulators of simulation.masks in the state.
# Also: an error on one rank (a rank's store cannot be written) stops every
# rank with the message and no output.
source "$(dirname "$0")/lib_cli.sh"
source "$SRC/tests/mpi_env.sh"
# run NAME INPUT ARGS...: one process; mrun NP NAME INPUT ARGS...: NP ranks.
run() {
  local name=$1 in=$2
  shift 2
  "$T" erode "$W/$in" -o "$W/$name.tif" --maps --state "$W/${name}_state.tif" --no-preview -q \
    --device cpu "$@"
}
mrun() {
  local np=$1 name=$2 in=$3
  shift 3
  "${MPIRUN[@]}" -np "$np" "$T" erode "$W/$in" -o "$W/$name.tif" --maps \
    --state "$W/${name}_state.tif" --no-preview -q --device cpu "$@"
}

# --- layered ----------------------------------------------------------
layered_warm_state
run mono warm.tif "${LAY[@]}" --steps 4 --report "$W/mono.json"
check "layered: columns split and collapse in the compared steps" \
  '[ "$(flow "$W/mono.json" split)" = True ] && [ "$(flow "$W/mono.json" collapse)" = True ]'
for np in 1 2 3 4; do
  for tk in "64 2" "100 1"; do
    read -r tile K <<<"$tk"
    mrun $np "l${np}t$tile" warm.tif "${LAY[@]}" --steps 4 --tile $tile --steps-per-exchange $K \
      --report "$W/l.json"
    check "layered: $np ranks, tile $tile K $K == one process" 'same_as mono "l${np}t$tile"'
  done
done
# The preview and its cross-section: rank 0 draws them from every rank's cores.
"$T" erode "$W/warm.tif" -o "$W/pv1.tif" "${LAY[@]}" --steps 4 -q --device cpu
"${MPIRUN[@]}" -np 3 "$T" erode "$W/warm.tif" -o "$W/pv3.tif" "${LAY[@]}" --steps 4 -q \
  --device cpu --tile 64 --steps-per-exchange 2
check "layered: 3 ranks' preview and cross-section == one process's" \
  '[ -s "$W/pv1_preview_section.png" ] && cmp -s "$W/pv1_preview.png" "$W/pv3_preview.png" &&
   cmp -s "$W/pv1_preview_section.png" "$W/pv3_preview_section.png"'
run t100 warm.tif "${LAY[@]}" --steps 4 --tile 100 --steps-per-exchange 1 --report "$W/t100.json"
check "layered: 4 ranks report the ledger of one process with the same tiles, bit for bit" \
  'python3 -c "import json; a=json.load(open(\"$W/t100.json\"))[\"ledger\"]; b=json.load(open(\"$W/l.json\"))[\"ledger\"]; assert a==b, (a, b)"'
check "4 ranks: the report times each rank (compute, exchange wait, store I/O)" \
  'python3 -c "import json; r=json.load(open(\"$W/l.json\"))[\"ranks\"]; assert [x[\"rank\"] for x in r]==[0,1,2,3] and all(x[\"compute_s\"]>0 and x[\"exchange_wait_s\"]>=0 and x[\"store_io_s\"]>=0 for x in r), r"'
check "one process: no per-rank timings" \
  'python3 -c "import json; assert \"ranks\" not in json.load(open(\"$W/t100.json\"))"'
mrun 3 ldisk warm.tif "${LAY[@]}" --steps 4 --tile 37 --steps-per-exchange 2 --store "$W/store" \
  --report "$W/ldisk.json"
check "layered: 3 ranks, tile 37, shared disk store == one process" 'same_as mono ldisk'
check "3 ranks on disk: each rank's store I/O is timed" \
  'python3 -c "import json; r=json.load(open(\"$W/ldisk.json\"))[\"ranks\"]; assert len(r)==3 and all(x[\"store_io_s\"]>0 for x in r), r"'
check "layered: the shared store is removed after success" '[ ! -e "$W/store" ]'

# --- heightfield with thermal erosion ---------------------------------
"$T" generate noise -o "$W/noise.tif" --size 200 --layers 1
# thermal.bank_angle reads the accumulators' net change of the neighbours
# across rank boundaries (10 degrees: the noise's slopes shed what the
# run's millimetres of cutting made of them)
HF=(--set simulation.model=heightfield --set thermal.enable=true --set water.rain=0.02
    --set simulation.masks=true --set thermal.bank_angle=10)
run hmono noise.tif "${HF[@]}" --steps 6
check "heightfield: the run changed the terrain" '! cmp -s "$W/hmono.tif" "$W/noise.tif"'
for np in 1 2 3 4; do
  for tk in "37 3" "150 1"; do
    read -r tile K <<<"$tk"
    mrun $np "h${np}t$tile" noise.tif "${HF[@]}" --steps 6 --tile $tile --steps-per-exchange $K
    check "heightfield: $np ranks, tile $tile K $K == one process" 'same_as hmono "h${np}t$tile"'
  done
done

# --- droplets on layered stacks with the layered pipes ---------------
"$T" generate gully-arch -o "$W/arch.tif" --size 96
PT=(-c "$SRC/configs/particles-game.ini" --set water.rain=0.02 --set particles.density_log2=6)
run pmono arch.tif "${PT[@]}" --steps 6
for np in 2 3; do
  mrun $np "p${np}" arch.tif "${PT[@]}" --steps 6 --tile 37 --steps-per-exchange 2
  check "droplets, layered: $np ranks, tile 37 K 2 == one process" 'same_as pmono "p${np}"'
done

# --- an error on one rank stops all ----------------------------------
mkdir -p "$W/bad/rank1"
touch "$W/bad/rank1/not-a-store"
timeout 60 "${MPIRUN[@]}" -np 3 "$T" erode "$W/noise.tif" -o "$W/bad.tif" "${HF[@]}" --steps 6 \
  --tile 64 --store "$W/bad" -q --no-preview --device cpu 2>"$W/bad.err"
rc=$?
check "a failing rank fails the run (exit $rc, not a hang)" '[ $rc -ne 0 ] && [ $rc -ne 124 ]'
check "the failing rank's message is shown, naming the rank" 'grep -q "rank 1" "$W/bad.err"'
check "the error is shown once (by rank 0)" '[ "$(grep -c "error:" "$W/bad.err")" -eq 1 ]'
check "no output is written" '[ ! -e "$W/bad.tif" ]'

# --- memory planning per rank ----------------------------------------
# Under --mem-limit each rank plans for the tiles it keeps, not the whole
# map: 2000² heightfield in 4 tiles keeps ~260 MiB of resident tiles and
# strips in one process (with ~480 MiB of working set: disk under 700M) and
# ~130 MiB per rank with 2 ranks (memory). The bytes stay those of one
# process.
"$T" generate noise -o "$W/n2000.tif" --size 2000 --layers 1
M=(-c "$SRC/configs/heightfield-default.ini" --steps 1 --tile 1000 --no-preview -q --device cpu
   --mem-limit 700M)
store_of() { python3 -c "import json; print(json.load(open('$1'))['tiling']['store'])"; }
"$T" erode "$W/n2000.tif" -o "$W/plan1.tif" "${M[@]}" --report "$W/plan1.json"
"${MPIRUN[@]}" -np 2 "$T" erode "$W/n2000.tif" -o "$W/plan2.tif" "${M[@]}" --report "$W/plan2.json"
check "--mem-limit 700M, one process: the 2000² map's tiles go to disk" \
  '[ "$(store_of "$W/plan1.json")" = disk ]'
check "--mem-limit 700M, 2 ranks: each rank's half fits in memory" \
  '[ "$(store_of "$W/plan2.json")" = memory ]'
check "--mem-limit 700M: 2 ranks (memory) == one process (disk)" 'cmp -s "$W/plan1.tif" "$W/plan2.tif"'

# -of COG: rank 0 copies the streamed GeoTIFFs into COGs, the bytes of one
# process's -of COG run (surface and --maps).
"$T" generate rivers-rain -o "$W/cog_in.tif" --size 64 --seed 3
C=(-of COG --maps --steps 12 --no-preview -q --device cpu)
"$T" erode "$W/cog_in.tif" -o "$W/cog1.tif" "${C[@]}"
"${MPIRUN[@]}" -np 3 "$T" erode "$W/cog_in.tif" -o "$W/cog3.tif" "${C[@]}" --tile 24
for s in '' _water _columns _erosion; do
  check "-of COG$s: 3 ranks == one process" \
    'gdalinfo "$W/cog3$s.tif" | grep -q LAYOUT=COG && cmp -s "$W/cog1$s.tif" "$W/cog3$s.tif"'
done

# --rain-map: each rank's tile buffers read their windows of the map, halo
# included: 3 ranks write one process's bytes.
"$T" generate noise -o "$W/rdem.tif" --size 32 --layers 1
/usr/bin/python3 - "$W" <<'PY'
import sys
import numpy as np
from osgeo import gdal
y, x = np.mgrid[0:20, 0:24]
d = gdal.GetDriverByName("GTiff").Create(sys.argv[1] + "/rmap.tif", 24, 20, 1, gdal.GDT_Float32)
d.GetRasterBand(1).WriteArray((0.0005 + 0.001 * x / 23.0 * (0.5 + 0.5 * np.sin(y / 3.0))).astype(np.float32))
d = None
PY
RM=(--set simulation.model=heightfield --steps 12 --maps --no-preview -q --device cpu
    --rain-map "$W/rmap.tif")
"$T" erode "$W/rdem.tif" -o "$W/rain1.tif" "${RM[@]}"
"${MPIRUN[@]}" -np 3 "$T" erode "$W/rdem.tif" -o "$W/rain3.tif" "${RM[@]}" --tile 12
check "--rain-map: 3 ranks == one process" \
  'cmp -s "$W/rain1.tif" "$W/rain3.tif" && cmp -s "$W/rain1_water.tif" "$W/rain3_water.tif"'

# heightfield.grade_share: each rank's tile buffers read the input's drop
# over their windows (a static input): a knick 20 m tall above the east
# edge's outlet (cli_state_resume's), the pipes alone, 3 ranks write one
# process's bytes.
/usr/bin/python3 - "$W" <<'PY'
import sys
import numpy as np
from osgeo import gdal
nx, ny = 40, 15
x = np.arange(nx)[None, :]; y = np.arange(ny)[:, None]
h = 300.0 + 0.3 * (nx - 1 - x) + np.where(x < nx - 3, 20.0, 0.0) + 3.0 * np.abs(y - ny // 2)
d = gdal.GetDriverByName("GTiff").Create(sys.argv[1] + "/knick.tif", nx, ny, 1, gdal.GDT_Float32)
d.GetRasterBand(1).WriteArray(h.astype(np.float32))
d = None
PY
KN=(--cell-size 30 --set particles.enable=false --set erosion.spinup=0 --set water.rain=0.01
    --steps 2000 --no-preview -q --device cpu)
"$T" erode "$W/knick.tif" -o "$W/knick1.tif" "${KN[@]}"
"${MPIRUN[@]}" -np 3 "$T" erode "$W/knick.tif" -o "$W/knick3.tif" "${KN[@]}" --tile 14
check "grade_share: 3 ranks == one process" 'cmp -s "$W/knick1.tif" "$W/knick3.tif"'

echo "cli_mpi: $pass passed, $fail failed"
[ $fail -eq 0 ]
