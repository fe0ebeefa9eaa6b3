#!/usr/bin/env bash
# bench_mpi.sh — 2 ranks × 1 thread vs 1 process × 1 thread, the same tiles,
# at N² for both models (issue 5). Prints one line per run: model, ranks,
# repeat, erosion seconds (the report's "seconds": rank 0's generation loop,
# which waits for the slowest rank), whole-command wall seconds, and the strip
# bytes exchanged per generation (rank 0's log).
# usage: benchmarks/bench_mpi.sh [BUILD_DIR] [N] [REPEATS]
set -eu
B=$(cd "${1:-build}" && pwd)
N=${2:-2048}
REP=${3:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$B/talus
W=${BENCH_DIR:-$(mktemp -d)}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --bind-to none --mca mpi_yield_when_idle 1
        -x OMP_NUM_THREADS -x OMP_WAIT_POLICY)
[ -e "$W/noise$N.tif" ] || "$T" generate noise -o "$W/noise$N.tif" --size "$N" --layers 1
[ -e "$W/rivers$N.tif" ] || "$T" generate rivers-rain -o "$W/rivers$N.tif" --size "$N" --layers 4
HF=("$W/noise$N.tif" -c "$SRC/configs/heightfield-default.ini" --set thermal.enable=true
    --steps 20 --tile $((N / 2)))
LAY=("$W/rivers$N.tif" -c "$SRC/configs/rivers-rain.ini" --steps 4 --tile $((N / 2)))
one() { # MODEL RANKS REPEAT ARGS...
  local model=$1 np=$2 rep=$3
  shift 3
  local cmd=("$T" erode "$@" -o "$W/out_${model}_$np.tif" --no-preview --device cpu
             --report "$W/r.json")
  [ "$np" -gt 1 ] && cmd=("${MPIRUN[@]}" -np "$np" "${cmd[@]}")
  local t0 t1
  t0=$(date +%s.%N)
  "${cmd[@]}" 2>"$W/log"
  t1=$(date +%s.%N)
  local er per
  er=$(python3 -c "import json; print(json.load(open('$W/r.json'))['seconds'])")
  per=$(sed -n 's/.*(\([0-9.]*\) MB per generation).*/\1/p' "$W/log")
  printf '%s ranks=%d rep=%d erosion_s=%.2f wall_s=%.2f MB_per_generation=%s\n' \
    "$model" "$np" "$rep" "$er" "$(echo "$t1 - $t0" | bc)" "${per:-0}"
}
for r in $(seq "$REP"); do
  for np in 1 2; do one heightfield_thermal $np $r "${HF[@]}"; done
  for np in 1 2; do one layered_rivers_rain $np $r "${LAY[@]}"; done
done
cmp "$W/out_heightfield_thermal_1.tif" "$W/out_heightfield_thermal_2.tif" &&
  cmp "$W/out_layered_rivers_rain_1.tif" "$W/out_layered_rivers_rain_2.tif" &&
  echo "outputs: 2 ranks == 1 process, byte for byte"
