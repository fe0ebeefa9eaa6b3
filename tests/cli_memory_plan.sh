#!/usr/bin/env bash
# The memory plan matches reality: for map sizes, tile sizes, both models,
# both stores and a state input with every output, the peak the plan
# predicts (the report's predicted_peak_bytes, tiler/plan.h's model) is
# within 1.5x of the peak RSS the run measured (getrusage, the report's
# peak_rss_bytes; a layered DEM in one piece that may split its columns: the bound, see below). A --mem-limit the plan accepts is kept, and --dry-run
# prints the plan and writes nothing; its disk figure is the raw bytes a
# disk store's run of one generation writes.
source "$(dirname "$0")/lib_cli.sh"

# dem N: an N x N Float32 DEM of 30 m cells (the noise scene's surface).
dem() {
  "$T" generate noise -o "$W/n$1.tif" --size "$1" --layers 1 -q
  gdal_translate -q -b 1 -co PROFILE=GeoTIFF --config GDAL_PAM_ENABLED NO -a_srs EPSG:32611 \
    -a_ullr 500000 $((4000000 + 30 * $1)) $((500000 + 30 * $1)) 4000000 "$W/n$1.tif" "$W/d$1.tif"
}
dem 512
dem 1024
dem 2048
"$T" generate rivers-rain -o "$W/r512.tif" --size 512 --layers 4 -q

# sweep NAME INPUT ARGS...: runs 2 steps and prints "NAME predicted measured ratio".
sweep() {
  local n=$1 in=$2
  shift 2
  "$T" erode "$W/$in.tif" -o "$W/o_$n.tif" --steps 2 -q --no-preview --report "$W/$n.json" "$@" ||
    return 1
  python3 - "$W/$n.json" "$n" <<'PY' | tee -a "$W/sweep.txt"
import json, sys
r = json.load(open(sys.argv[1]))
p, m = r["predicted_peak_bytes"], r["peak_rss_bytes"]
t = r["tiling"]
print("%-16s %-6s core %4d  predicted %6.0f MiB  measured %6.0f MiB  ratio %.2f"
      % (sys.argv[2], t["store"], t["core"], p / 2**20, m / 2**20, p / m))
PY
  rm -rf "$W"/o_"$n"* "$W/st"
}
sweep hf512 d512
sweep hf1024 d1024
sweep hf2048 d2048
sweep hf2048_t256 d2048 --tile 256
# K 2 given: the droplets' radius (137 cells at 30 m, after the spin-up)
# alone would make K 1, and the disk figure below needs one exchange.
sweep hf2048_t512d d2048 --tile 512 --steps-per-exchange 2 --store "$W/st"
sweep lay512 d512 -c dem-default
sweep lay512_grow d512 -c dem-default --set erosion.spinup=0
sweep lay1024_t256 d1024 -c dem-default --tile 256
sweep lay1024_t256d d1024 -c dem-default --tile 256 --store "$W/st"
# rivers-rain without its droplets: at 0.5 m cells their stage radius is
# 266 cells, and --tile 128 then plans halos of 266 around each tile that
# a step barely writes (predicted 3.8x the measured peak: over, the safe
# side); these cases check the layered stages' plan
sweep state512_all r512 -c rivers-rain --set particles.enable=false --maps \
  --state "$W/o_state512_all_state.tif"
sweep state512_t128 r512 -c rivers-rain --set particles.enable=false --tile 128
n=$(wc -l <"$W/sweep.txt")
check "the sweep ran every case ($n of 11)" '[ $n -eq 11 ]'
# A layered run in one piece touches the layers its columns use (a tile's
# planes are zero pages until written), and the plan counts the layers its
# cells can reach (tiler/plan.h): a DEM's run of 2 steps within the
# spin-up cannot split a column, so lay512 counts one layer and is held to
# 1.5x like the rest (it counted 4 before: 2.1x). With the spin-up at 0 the
# same run may split every column twice (4 layers): the plan is the bound
# for every layer, above the measured peak, which touches one, within 2.5x.
while read -r name rest; do
  r=${rest##*ratio }
  lo=0.6667 hi=1.5
  [ "$name" = lay512_grow ] && lo=1 hi=2.5
  check "$name: predicted within [$lo, $hi] x the measured peak ($r)" \
    'python3 -c "import sys; r=float(sys.argv[1]); sys.exit(not ($lo <= r <= $hi))" $r'
done <"$W/sweep.txt"

# The disk figure of --dry-run (tiler/plan.h's disk model): a run of one
# generation (2 steps, K >= 2) writes the store's peak once, the cores and
# strips at its start and at its end; its raw bytes (the report's) are the
# plan's figure for the layers in use (a DEM: one column a cell; the
# ledgers besides) and at most the bound (every layer).
disk_figure() {
  local n=$1 in=$2
  shift 2
  "$T" erode "$W/$in.tif" -o "$W/dry.tif" --steps 2 --dry-run "$@" >"$W/$n.dry" 2>&1
  python3 - "$W/$n.dry" "$W/$n.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
unit = {"MiB": 2**20, "GiB": 2**30}
size = lambda m: float(m.group(1)) * unit[m.group(2)]
K = int(re.search(r"(\d+) steps per exchange", text).group(1))
most = size(re.search(r"at most ([\d.]+) (MiB|GiB) in the store before zstd", text))
one = re.search(r"([\d.]+) (MiB|GiB) before zstd while the cells keep", text)
start = size(one) if one else most
raw = json.load(open(sys.argv[2]))["tiling"]["raw_bytes_written"]
print("K %d, at most %.0f MiB, start %.0f MiB, written %.0f MiB" % (K, most / 2**20, start / 2**20, raw / 2**20))
sys.exit(not (K >= 2 and 0.99 * start <= raw <= 1.01 * start + 2**20 and raw <= most * 1.01))
PY
}
check "hf2048_t512d: the store's raw bytes are the disk figure" \
  'disk_figure hf2048_t512d d2048 --tile 512 --steps-per-exchange 2 --store "$W/st"'
check "lay1024_t256d: the store's raw bytes are the DEM's figure (one layer of 4), under the bound" \
  'disk_figure lay1024_t256d d1024 -c dem-default --tile 256 --store "$W/st"'
check "--dry-run of a layered DEM: the bound, the DEM's start, the typical store" \
  'grep -q "^disk: *at most .* before zstd (two generations of cores and strips, 4 layers a cell)" "$W/lay1024_t256d.dry" && grep -q "before zstd while the cells keep the DEM.s one column" "$W/lay1024_t256d.dry" && grep -q "typically .* to .* after zstd" "$W/lay1024_t256d.dry"'

# The limit a user gives is kept (the issue's case: 2048² at 200M).
"$T" erode "$W/d2048.tif" -o "$W/lim.tif" --steps 2 -q --no-preview --mem-limit 200M \
  --report "$W/lim.json"
check "--mem-limit 200M on 2048²: runs, and its peak stays under 200 MiB" \
  'python3 -c "import json; r=json.load(open(\"$W/lim.json\")); assert r[\"peak_rss_bytes\"] < 200 * 2**20, r[\"peak_rss_bytes\"]"'

# --dry-run: the plan, nothing written, nothing run.
"$T" erode "$W/d2048.tif" -o "$W/dry.tif" --mem-limit 200M --dry-run >"$W/dry.txt" 2>&1
check "--dry-run prints tiles, K, halo, store, memory and disk" \
  'grep -q "^plan: .*tiles of .* steps per exchange, halo .* disk store" "$W/dry.txt" && grep -q "^memory: .*about" "$W/dry.txt" && grep -q "^disk: " "$W/dry.txt"'
check "--dry-run writes nothing" '[ ! -e "$W/dry.tif" ] && [ ! -e "$W/dry.store" ] && [ ! -e "$W/dry_preview.png" ]'
"$T" erode "$W/d512.tif" -o "$W/dry.tif" --dry-run --tile 64 --steps-per-exchange 1000 >"$W/dry2.txt" 2>&1
rc=$?
# The step radius R comes from the preset's stages (dem-heightfield: 137 at
# 30 m, the droplets' after the spin-up):
# the halo is 1000 R, and the largest K keeps it within 4 tiles of 64.
R=$(sed -n 's/^steps: .*step radius \([0-9]*\) cells.*/\1/p' "$W/dry2.txt")
check "--dry-run of an absurd halo: the plan, then refused (step radius $R)" \
  '[ $rc -ne 0 ] && [ -n "$R" ] && grep -q "halo $((1000 * R)) cells" "$W/dry2.txt" && grep -q "refused" "$W/dry2.txt"'
"$T" erode "$W/d512.tif" -o "$W/x.tif" --tile 64 --steps-per-exchange 1000 -q 2>"$W/halo.err"
check "an absurd halo is refused, naming the option and the largest K" \
  '[ $? -ne 0 ] && grep -q "steps-per-exchange 1000 makes a halo of $((1000 * R)) cells around tiles of 64.*at most $((4 * 64 / R)) steps" "$W/halo.err" && [ ! -e "$W/x.tif" ]'

echo "cli_memory_plan: $pass passed, $fail failed"
[ $fail -eq 0 ]
