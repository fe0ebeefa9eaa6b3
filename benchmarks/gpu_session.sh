#!/bin/sh
# gpu_session.sh — one device-tool call's worth of GPU checks and figures.
# Run from the repository root on the GPU machine with the binaries built
# here (-DTALUS_CUDA=ON -DTALUS_CUDA_ARCHITECTURES=90, Release) copied
# into .gpu/ with their shared libraries (libzstd, libgomp, libjson-c):
#   sh benchmarks/gpu_session.sh [test|bench|ab|ncu]...
# Writes logs and JSON under $OUT (default /tmp/gpu_out).
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.gpu:$LD_LIBRARY_PATH"
B=".gpu/talus_bench --configs configs --device cuda --threads 16 --stream-mib 64"
for what in "$@"; do
  case $what in
  test) TALUS_SOURCE_DIR=. .gpu/test_gpu > "$OUT/test_gpu.log" 2>&1
        echo "test_gpu rc=$?"; tail -4 "$OUT/test_gpu.log" ;;
  bench) # one piece, long runs (upload/download amortised)
        $B --size 2048 --steps 1000 --warmup 5 --repeat 1 -o "$OUT/long_2048.json"
        $B --size 4096 --steps 250 --warmup 5 --repeat 1 \
           --workloads heightfield,rivers_rain -o "$OUT/long_4096.json" ;;
  ab)   # 8-neighbour sand slippage against the paper's 4, one piece, interleaved
        for r in 1 2; do
          for nb in 4 8; do
            $B --size 4096 --steps 100 --warmup 5 --repeat 1 --workloads rivers_rain,chasm_source \
               --set sand.neighbours=$nb -o "$OUT/nb${nb}_r$r.json"
          done
        done ;;
  ncu)  ncu --clock-control none --section SpeedOfLight --section LaunchStats \
            --section Occupancy --section MemoryWorkloadAnalysis \
            -k regex:stage_kernel --launch-skip 12 --launch-count 14 --csv \
            $B --size 2048 --steps 3 --warmup 0 --repeat 1 --workloads rivers_rain \
            > "$OUT/ncu_rivers_rain.csv" 2> "$OUT/ncu.err"; echo "ncu rc=$?" ;;
  esac
done
