#!/usr/bin/env bash
# The automatic choice of `talus erode`: a map that does not fit --mem-limit
# in one piece runs tiled, on disk when its tiles do not fit in memory
# either, stays under the limit (peak RSS), removes its store, and writes
# the bytes of a run in one piece; without a limit it runs in one piece.
source "$(dirname "$0")/lib_cli.sh"
tiling() { python3 -c "import json; print(json.load(open('$1'))['tiling']['$2'])"; }

# 1500 x 1500 cells, 4 layers (dem-default, erosion from step 0, so
# horizontal erosion may split every column: the plan counts all 4 layers
# (tiler/plan.h); within the spin-up it would count one and fit): ~1.4 GiB
# in one piece by talus's estimate, ~0.9 GiB tiled.
"$T" generate noise -o "$W/noise.tif" --size 1500 --layers 1
gdal_translate -q -b 1 -mo TALUS_STATE=0 "$W/noise.tif" "$W/dem.tif"
A=(-c "$SRC/configs/dem-default.ini" --set erosion.spinup=0 --cell-size 30 --steps 2 --no-preview
  --maps)

"$T" erode "$W/dem.tif" -o "$W/one.tif" "${A[@]}" -q --report "$W/one.json"
check "no limit: the map runs in one piece" '[ "$(tiling "$W/one.json" store)" = none ]'

TIME=()
[ -x /usr/bin/time ] && TIME=(/usr/bin/time -f "%M" -o "$W/rss")
"${TIME[@]}" "$T" erode "$W/dem.tif" -o "$W/auto.tif" "${A[@]}" --mem-limit 1G \
  --report "$W/auto.json" 2>"$W/auto.err"
check "--mem-limit 1G: the run says why it is tiled" 'grep -q "running tiled" "$W/auto.err"'
check "--mem-limit 1G: tiled on disk" '[ "$(tiling "$W/auto.json" store)" = disk ]'
check "--mem-limit 1G: several tiles" '[ "$(tiling "$W/auto.json" tiles)" -gt 1 ]'
check "--mem-limit 1G: the default store is removed after success" '[ ! -e "$W/auto.store" ]'
for s in '' _water _sand _sediment _columns _erosion _water_surface; do
  check "--mem-limit 1G: auto$s.tif == one piece" 'cmp -s "$W/one$s.tif" "$W/auto$s.tif"'
done
if [ -s "$W/rss" ]; then
  rss=$(tail -1 "$W/rss")
  echo "peak RSS tiled: $rss kB"
  check "--mem-limit 1G: peak RSS $rss kB <= 1 GiB" '[ "$rss" -le 1048576 ]'
fi

# Steps per exchange: core / (32 R) up to 8 with a memory store (resident
# tiles exchange only strips), core / (8 R) up to 32 with a disk store (a
# generation there costs a pass through zstd and the file system); both
# give the bytes of the run in one piece.
H=(-c "$SRC/configs/heightfield-default.ini" --steps 20 --no-preview -q)
"$T" erode "$W/dem.tif" -o "$W/h_one.tif" "${H[@]}"
"$T" erode "$W/dem.tif" -o "$W/h_mem.tif" "${H[@]}" --tile 768 --report "$W/h_mem.json"
"$T" erode "$W/dem.tif" -o "$W/h_disk.tif" "${H[@]}" --tile 768 --store "$W/hstore" \
  --report "$W/h_disk.json"
auto_k() { # JSON DIV CAP: the K the rule gives for the run's core and halo
  python3 -c "import json; t=json.load(open('$1'))['tiling']; K=t['steps_per_exchange']; \
R=t['halo_width']//K; print(K, min($3, max(1, t['core']//($2*R))))"
}
read -r km want_m <<<"$(auto_k "$W/h_mem.json" 32 8)"
read -r kd want_d <<<"$(auto_k "$W/h_disk.json" 8 32)"
check "memory store: K $km = core / (32 R) capped at 8 ($want_m)" '[ "$km" = "$want_m" ]'
check "disk store: K $kd = core / (8 R) capped at 32 ($want_d), above 8" \
  '[ "$kd" = "$want_d" ] && [ "$kd" -gt 8 ]'
check "memory store: heightfield output == one piece" 'cmp -s "$W/h_one.tif" "$W/h_mem.tif"'
check "disk store: heightfield output == one piece" 'cmp -s "$W/h_one.tif" "$W/h_disk.tif"'

echo "cli_tiles_auto: $pass passed, $fail failed"
[ $fail -eq 0 ]
