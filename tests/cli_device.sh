#!/usr/bin/env bash
# --device auto|cpu|cuda of `talus erode`, in one piece and tiled: a bad
# value is refused before anything is written; `cuda` without a usable GPU
# fails with the driver's reason and leaves no output; `auto` without one
# says so in one line and gives the bytes of `--device cpu`; `talus
# --version` lists the backends built. On a machine with a GPU the `cuda`
# and `auto` runs must succeed instead (their agreement with the CPU is
# checked by the gpu-labelled tests, within tolerance).
source "$(dirname "$0")/lib_cli.sh"
nothing_written() { [ -z "$(ls "$W/out" 2>/dev/null)" ]; }

"$T" generate rivers-rain -o "$W/terrain.tif" --size 96 --seed 3
A=(-c "$SRC/configs/rivers-rain.ini" --steps 20)
R=(--report "$W/out/run.json")
mkdir -p "$W/out"

version=$("$T" --version)
check "--version lists the CPU backend" '[[ "$version" == *"backends: cpu/openmp"* ]]'
cuda_built=0
[[ "$version" == *cuda* ]] && cuda_built=1
echo "cuda backend built: $cuda_built"

"$T" erode "$W/terrain.tif" -o "$W/out/x.tif" "${A[@]}" "${R[@]}" --device tpu 2>"$W/bad.err"
check "--device tpu: non-zero exit" '[ $? -ne 0 ]'
check "--device tpu: the message names the option and the value" \
  'grep -q -- "--device must be auto, cpu or cuda, not .tpu." "$W/bad.err"'
check "--device tpu: nothing written" nothing_written

"$T" erode "$W/terrain.tif" -o "$W/cpu.tif" "${A[@]}" --device cpu -q
check "--device cpu: runs" '[ $? -eq 0 ] && [ -s "$W/cpu.tif" ]'

# Without a usable GPU (this build has no CUDA, or no driver or device).
if "$T" erode "$W/terrain.tif" -o "$W/out/gpu.tif" "${A[@]}" "${R[@]}" --device cuda -q 2>"$W/cuda.err"; then
  echo "a GPU is usable here: $(head -1 "$W/cuda.err")"
  check "--device cuda with a GPU: output written" '[ -s "$W/out/gpu.tif" ]'
  rm -rf "$W/out"/*
  have_gpu=1
else
  have_gpu=0
  cat "$W/cuda.err"
  check "--device cuda without a GPU: one error line saying why" \
    'grep -Eq "CUDA|GPU|driver|device" "$W/cuda.err" && [ "$(wc -l <"$W/cuda.err")" -le 2 ]'
  check "--device cuda without a GPU: nothing written" nothing_written
  "$T" erode "$W/terrain.tif" -o "$W/out/t.tif" "${A[@]}" "${R[@]}" --device cuda --tile 48 \
    --store "$W/out/store" -q 2>"$W/cudat.err"
  check "--device cuda --tile without a GPU: non-zero exit" '[ $? -ne 0 ]'
  check "--device cuda --tile without a GPU: nothing written, no store" nothing_written
fi

for mode in one tiled; do
  extra=()
  [ $mode = tiled ] && extra=(--tile 48 --steps-per-exchange 2)
  "$T" erode "$W/terrain.tif" -o "$W/auto_$mode.tif" "${A[@]}" \
    --device auto "${extra[@]}" 2>"$W/auto.err"
  check "--device auto ($mode): runs" '[ $? -eq 0 ] && [ -s "$W/auto_$mode.tif" ]'
  if [ $have_gpu = 0 ]; then
    check "--device auto ($mode): same bytes as --device cpu" 'cmp -s "$W/cpu.tif" "$W/auto_$mode.tif"'
    if [ $cuda_built = 1 ]; then
      check "--device auto ($mode) without a GPU: one line, then the CPU" \
        '[ "$(grep -c -- "--device auto: .*; running on the CPU" "$W/auto.err")" -eq 1 ]'
    else
      check "--device auto ($mode), no CUDA built: no line about devices" \
        '! grep -q -- "--device" "$W/auto.err"'
    fi
  fi
done

echo "cli_device: $pass passed, $fail failed"
[ $fail -eq 0 ]
