#!/bin/sh
# kern session: before/after builds of issue 20 item 4 on one GPU.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TALUS_SOURCE_DIR=$PWD
OUT=${OUT:-/tmp/kern_out}; mkdir -p "$OUT/json"
L="$OUT/session.log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$L" 2>&1
date -u >> "$L"
echo "== test_gpu (after)" >> "$L"
timeout 120 after/test_gpu > "$OUT/test_gpu_after.log" 2>&1; echo "test_gpu after rc=$?" >> "$L"
tail -2 "$OUT/test_gpu_after.log" >> "$L"
for v in $VARIANTS_TEST; do
  timeout 120 $v/test_gpu > "$OUT/json/test_gpu_$v.log" 2>&1; echo "test_gpu $v rc=$?" >> "$L"; tail -1 "$OUT/json/test_gpu_$v.log" >> "$L"
done
bench() { # build tag size steps workloads
  timeout 150 $1/talus_bench --configs configs --device cuda --threads 16 --stream-mib 64 --size $3 --steps $4 \
    --warmup 5 --repeat 1 --workloads $5 -o "$OUT/json/$2.json" > "$OUT/json/$2.out" 2>&1
  echo "bench $2 rc=$?" >> "$L"
}
for r in 1 2; do
  bench before before_2048_r$r 2048 1000 rivers_rain,chasm_source
  bench after after_2048_r$r 2048 1000 rivers_rain,chasm_source
done
for v in $VARIANTS_BENCH; do bench $v ${v}_2048_r1 2048 1000 rivers_rain,chasm_source; done
bench before before_4096 4096 250 rivers_rain
bench after after_4096 4096 250 rivers_rain
date -u >> "$L"
for b in before after; do
  timeout 150 ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy \
    -k regex:stage_kernel --launch-skip 12 --launch-count 20 --csv \
    $b/talus_bench --configs configs --device cuda --threads 16 --stream-mib 64 --size 2048 --steps 3 \
    --warmup 0 --repeat 1 --workloads rivers_rain > "$OUT/ncu_$b.csv" 2> "$OUT/json/ncu_$b.err"
  echo "ncu $b rc=$?" >> "$L"
done
date -u >> "$L"
tar -czf "$OUT/raw.tar.gz" -C "$OUT" json && rm -rf "$OUT/json"
cat "$L"
