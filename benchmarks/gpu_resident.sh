#!/bin/sh
# gpu_resident.sh — one device-tool call's worth of checks and figures for
# tiles resident on the GPU (issue 20 item 1). Run inside a folder holding
# test_gpu and talus_bench built here (-DTALUS_CUDA=ON
# -DTALUS_CUDA_ARCHITECTURES=90, Release), their shared libraries (libzstd,
# libgomp, libjson-c) and a copy of configs/:
#   sh gpu_resident.sh [test|bench4096|bench8192]...
# Writes logs and JSON under $OUT (default /tmp/gpu_out); the JSON goes
# into one tarball (the device tool returns at most 8 files).
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT/json"
export LD_LIBRARY_PATH="$PWD:$LD_LIBRARY_PATH"
B="./talus_bench --configs configs --device cuda --threads 16 --stream-mib 64 --warmup 0 --repeat 1"
W="--workloads heightfield,rivers_rain"
for what in "$@"; do
  case $what in
  test) TALUS_SOURCE_DIR=. ./test_gpu > "$OUT/test_gpu.log" 2>&1
        echo "test_gpu rc=$?"; grep -E "tiled core|passed|FAIL" "$OUT/test_gpu.log" | tail -30 ;;
  bench4096) # one piece (long run), then 4 tiles of 2048²: host-staged vs resident
        $B --size 4096 --steps 250 $W -o "$OUT/json/one_4096.json"
        for K in 1 8; do
          for R in off on; do
            $B --size 4096 --tile 2048 --steps 16 --steps-per-exchange $K --resident $R $W \
               -o "$OUT/json/tiled_4096_k${K}_$R.json"
          done
          $B --size 4096 --tile 2048 --steps 250 --steps-per-exchange $K --resident on $W \
             -o "$OUT/json/tiled_4096_k${K}_on_long.json"
        done ;;
  bench8192) # 8192²: one piece, 4 tiles of 4096² resident (K 1, 8), host-staged at K 8;
        # sand.creep 0.002: the default 0.005 fails the creep stability check at
        # the bench's 8192² cell size (rivers_rain)
        C="$B --size 8192 $W --set sand.creep=0.002"
        $C --steps 50 -o "$OUT/json/one_8192.json"
        for K in 1 8; do
          $C --tile 4096 --steps 48 --steps-per-exchange $K --resident on \
             -o "$OUT/json/tiled_8192_k${K}_on.json"
        done
        $C --tile 4096 --steps 16 --steps-per-exchange 8 --resident off \
           -o "$OUT/json/tiled_8192_k8_off.json" ;;
  esac
done
tar -czf "$OUT/json.tar.gz" -C "$OUT" json && rm -rf "$OUT/json"
