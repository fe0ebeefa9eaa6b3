#!/bin/sh
# kern session, call 2: launch-bound variants of one experimental build
# (exp/: KERN_SUPPORT_MINB 1|5|8, KERN_TRANSPORT_MINB 2|3|4 picked at run time).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD TALUS_SOURCE_DIR=$PWD
OUT=${OUT:-/tmp/kern_out}; mkdir -p "$OUT/json2"
L="$OUT/session2.log"
date -u >> "$L"
for v in "5 3" "8 3" "1 4" "5 4"; do
  set -- $v
  KERN_SUPPORT_MINB=$1 KERN_TRANSPORT_MINB=$2 timeout 120 exp/test_gpu > "$OUT/json2/test_gpu_s$1_t$2.log" 2>&1
  echo "test_gpu s$1 t$2 rc=$? $(tail -1 "$OUT/json2/test_gpu_s$1_t$2.log")" >> "$L"
  grep -c "bitwise-equal 100.0%" "$OUT/json2/test_gpu_s$1_t$2.log" >> "$L"
done
for r in 1 2; do
  for v in "1 2" "1 3" "5 3" "8 3" "1 4"; do
    set -- $v
    KERN_SUPPORT_MINB=$1 KERN_TRANSPORT_MINB=$2 timeout 150 exp/talus_bench --configs configs --device cuda \
      --threads 16 --stream-mib 64 --size 2048 --steps 1000 --warmup 5 --repeat 1 \
      --workloads rivers_rain,chasm_source -o "$OUT/json2/exp_s$1_t$2_r$r.json" > "$OUT/json2/exp_s$1_t$2_r$r.out" 2>&1
    echo "bench s$1 t$2 r$r rc=$?" >> "$L"
  done
done
date -u >> "$L"
for v in "5 3" "8 4"; do
  set -- $v
  KERN_SUPPORT_MINB=$1 KERN_TRANSPORT_MINB=$2 timeout 120 ncu --clock-control none --section SpeedOfLight \
    --section LaunchStats --section Occupancy -k regex:stage_kernel --launch-skip 12 --launch-count 20 --csv \
    exp/talus_bench --configs configs --device cuda --threads 16 --stream-mib 64 --size 2048 --steps 3 \
    --warmup 0 --repeat 1 --workloads rivers_rain > "$OUT/ncu_s$1_t$2.csv" 2> "$OUT/json2/ncu_s$1_t$2.err"
  echo "ncu s$1 t$2 rc=$?" >> "$L"
done
date -u >> "$L"
tar -czf "$OUT/raw2.tar.gz" -C "$OUT" json2 && rm -rf "$OUT/json2"
cat "$L"
