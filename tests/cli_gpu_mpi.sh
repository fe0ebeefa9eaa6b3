#!/usr/bin/env bash
# `talus erode --device cuda` keeps the promise on the GPU: tiled in memory,
# tiled on disk, killed and resumed, and split over MPI ranks that share the
# GPU (`mpirun -np N ... --device cuda`), every run writes the bytes of the
# one-piece GPU run. Two models: the layered chasm-source with every process
# busy (rain, a source, splits, collapses, masks) and droplets on a
# heightfield (configs/particles.ini). Skipped (exit 77) without a usable
# GPU; the MPI part is skipped, and says so, without mpirun or MPI.
source "$(dirname "$0")/lib_cli.sh"
"$T" --version | grep -q cuda || { echo "skipped: talus built without CUDA" >&2; exit 77; }
"$T" generate chasm-source -o "$W/lay.tif" --size 160 --layers 8 -q
"$T" generate rivers-rain -o "$W/hf.tif" --size 160 --layers 1 -q
"$T" erode "$W/lay.tif" -o "$W/probe.tif" -c "$SRC/configs/chasm-source.ini" --steps 1 -q \
  --no-preview --device cuda 2>"$W/probe.err" ||
  { echo "skipped: no usable GPU: $(head -1 "$W/probe.err")" >&2; exit 77; }

LAY=(-c "$SRC/configs/chasm-source.ini" --set simulation.dt=0.15 --set water.rain=0.01
     --set source1.x=120 --set source1.y=80 --set source1.radius=8 --set horizontal.strength=3
     --set horizontal.split_size=0.25 --set support.iterations=2 --set simulation.masks=true
     --steps 16 -q --no-preview --maps --device cuda)
HF=(-c "$SRC/configs/particles.ini" --set particles.path_length=64 --set particles.brush_radius=2 --steps 16 -q --no-preview --maps --device cuda)

# same_outputs REF RUN: RUN wrote every file REF wrote, byte for byte.
same_outputs() {
  local f n=0
  for f in "$W/$1"*.tif; do
    n=$((n + 1))
    cmp -s "$f" "$W/$2${f#"$W/$1"}" || { echo "  ${f#"$W/"} differs in $2" >&2; return 1; }
  done
  [ $n -gt 1 ]
}

# kill_at OP NAME ARGS...: runs talus erode ARGS with SIGKILL at its OP-th
# store operation (TALUS_TEST_KILL_AT_OP, io/store.c); true when it died so.
kill_at() {
  local op=$1
  shift
  TALUS_TEST_KILL_AT_OP=$op "$T" erode "$@" >/dev/null 2>&1
  [ $? -eq 137 ]
}

for m in lay hf; do
  # droplets live 64 moves here: a halo of 67 cells a step, so K 1 on disk
  if [ $m = lay ]; then A=("${LAY[@]}") K=3; else A=("${HF[@]}") K=1; fi
  "$T" erode "$W/$m.tif" -o "$W/${m}_ref.tif" "${A[@]}"
  check "$m: one piece on the GPU" '[ $? -eq 0 ] && [ -s "$W/${m}_ref.tif" ]'
  "$T" erode "$W/$m.tif" -o "$W/${m}_mem.tif" "${A[@]}" --tile 64 --steps-per-exchange 2
  check "$m: GPU tiled in memory == GPU one piece" 'same_outputs ${m}_ref ${m}_mem'
  "$T" erode "$W/$m.tif" -o "$W/${m}_disk.tif" "${A[@]}" --tile 48 --steps-per-exchange $K \
    --store "$W/${m}_store"
  check "$m: GPU tiled on disk == GPU one piece" 'same_outputs ${m}_ref ${m}_disk'
  D=("$W/$m.tif" -o "$W/${m}_res.tif" "${A[@]}" --tile 64 --steps-per-exchange 2 --store "$W/${m}_rs")
  killed=0
  kill_at 40 "${D[@]}" && killed=1
  check "$m: a GPU run was killed mid-way, no output" '[ $killed -eq 1 ] && [ ! -e "$W/${m}_res.tif" ]'
  "$T" erode "${D[@]}" --resume
  check "$m: killed and resumed on the GPU == GPU one piece" 'same_outputs ${m}_ref ${m}_res'
done

if ! (source "$SRC/tests/mpi_env.sh") >"$W/mpi.log" 2>&1; then
  echo "MPI part skipped: $(cat "$W/mpi.log")"
else
  source "$SRC/tests/mpi_env.sh"
  for m in lay hf; do
    if [ $m = lay ]; then A=("${LAY[@]}"); else A=("${HF[@]}"); fi
    for np in 2 3; do
      "${MPIRUN[@]}" -np $np "$T" erode "$W/$m.tif" -o "$W/${m}_np$np.tif" "${A[@]}" --tile 64 \
        --steps-per-exchange 2
      check "$m: $np ranks on the GPU == GPU one piece" 'same_outputs ${m}_ref ${m}_np$np'
    done
  done
  # Rank 1 of 2 dies at its 30th store operation (mpirun then stops rank 0);
  # 2 ranks resume the shared store.
  A=("$W/lay.tif" -o "$W/lay_mk.tif" "${LAY[@]}" --tile 64 --steps-per-exchange 2 --store "$W/mk")
  "${MPIRUN[@]}" -np 1 "$T" erode "${A[@]}" : -np 1 env TALUS_TEST_KILL_AT_OP=30 "$T" erode \
    "${A[@]}" >"$W/mk.log" 2>&1
  check "2 GPU ranks: rank 1 killed mid-way, no output" '[ $? -eq 137 ] && [ ! -e "$W/lay_mk.tif" ]'
  "${MPIRUN[@]}" -np 2 "$T" erode "${A[@]}" --resume
  check "2 GPU ranks killed and resumed == GPU one piece" 'same_outputs lay_ref lay_mk'
fi

echo "cli_gpu_mpi: $pass passed, $fail failed"
[ $fail -eq 0 ]
