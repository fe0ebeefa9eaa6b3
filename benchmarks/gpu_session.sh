#!/bin/sh
# gpu_session.sh — one device-tool call's worth of GPU checks and figures.
# Run from the repository root on the GPU machine, with .gpu/ carried:
#   bin.tar.xz   talus, benchmarks/talus_bench, tests/test_gpu built here
#                (-DCMAKE_BUILD_TYPE=Release -DTALUS_CUDA=ON -DTALUS_MPI=ON
#                -DTALUS_CUDA_ARCHITECTURES=90)
#   libs.tar.xz  their shared libraries but glibc's (GDAL and its needs)
#   (benchmarks/gpu_pack.sh BUILD makes the three archives)
#   root.tar.xz  proj.db and GDAL's data (usr/share/proj, usr/share/gdal),
#                unpacked into /; also Debian's OpenMPI, which is left
#                packed: the machine's own OpenMPI 4.1.6 (Ubuntu) serves
#                talus's libmpi.so.40, and mixing the two crashed mpirun
#   sh benchmarks/gpu_session.sh setup [test|mpi|device|bench|ooc|particles|particles8192|ncupt|ranks|ncu|gallery|big]...
# Each part appends to $OUT/session.log; JSON goes to $OUT/json.tar.gz (the
# device tool returns at most 8 files).
OUT=${OUT:-/tmp/gpu_out}
G=$PWD/.gpu
mkdir -p "$OUT/json"
export LD_LIBRARY_PATH="$G/lib:$LD_LIBRARY_PATH" PATH="$G/path:$PATH"
export TALUS_SOURCE_DIR=$PWD TALUS_BIN=$G/talus OMP_WAIT_POLICY=passive
B="timeout 120 $G/benchmarks/talus_bench --configs configs --device cuda --threads 16 --stream-mib 64 --repeat 1"
J=$OUT/json
N="timeout 120 ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --csv"
log() { echo "== $(date -u +%T) $*"; }
# secs REPORT: the run's erosion seconds from a --report JSON
secs() { grep -o '"seconds": [0-9.e+-]*' "$1" | head -1 | cut -d' ' -f2; }
for what in "$@"; do
  case $what in
  setup) mkdir -p "$G/lib" "$G/path"
        tar -xJf "$G/bin.tar.xz" -C "$G" && tar -xJf "$G/libs.tar.xz" -C "$G/lib" &&
          tar -xJf "$G/root.tar.xz" -C / --wildcards 'usr/share/proj/*' 'usr/share/gdal/*'
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
        "$G/talus" --version; mpirun --version | head -1 ;;
  test) log test_gpu; timeout 240 "$G/tests/test_gpu" > "$OUT/test_gpu.log" 2>&1
        echo "test_gpu rc=$?"; grep -E "accumulators|particles|tiled core 37|FAIL|passed" "$OUT/test_gpu.log" ;;
  mpi)  log cli_gpu_mpi; timeout 180 bash tests/cli_gpu_mpi.sh > "$OUT/cli_gpu_mpi.log" 2>&1
        echo "cli_gpu_mpi rc=$?"; tail -15 "$OUT/cli_gpu_mpi.log" ;;
  device) log cli_device; timeout 60 bash tests/cli_device.sh 2>&1 | tail -4 ;;
  bench) # one piece, long runs (upload/download amortised)
        log bench; $B --size 2048 --steps 1000 --warmup 5 -o "$J/long_2048.json"
        $B --size 4096 --steps 250 --warmup 5 --workloads heightfield,rivers_rain -o "$J/long_4096.json" ;;
  ooc)  # 4096², 4 tiles of 2048²: one piece, resident K 1, on disk (out of core) K 8
        log ooc; W="--size 4096 --warmup 0 --workloads heightfield,rivers_rain"
        $B $W --steps 100 -o "$J/one_4096.json"
        $B $W --steps 100 --tile 2048 --resident on -o "$J/res_4096_k1.json"
        $B $W --steps 32 --tile 2048 --steps-per-exchange 8 --store /tmp/ooc -o "$J/disk_4096_k8.json"
        grep -hE '"(workload|ms_per_step)"' "$J"/one_4096.json "$J"/res_4096_k1.json "$J"/disk_4096_k8.json ;;
  particles) # droplets: GPU against the machine's 16 CPU threads
        log particles; P="--size 2048 --steps 50 --warmup 5 --workloads particles,particles_layered"
        $B $P -o "$J/particles_gpu.json"
        timeout 120 $G/benchmarks/talus_bench --configs configs --device cpu --threads 16 --stream-mib 64 \
          --repeat 1 $P -o "$J/particles_cpu16.json"
        grep -hE '"(workload|device|ms_per_step|droplets_per_s)"' "$J"/particles_*.json ;;
  particles8192) # issue 17's GPU target: droplets/s at 8192² (erodr's parameters,
        # density 2^-8: 262 144 droplets a batch), heightfield and layered stacks
        log particles8192; P="--size 8192 --steps 10 --warmup 2"
        $B $P --workloads particles -o "$J/particles_8192.json"
        $B $P --workloads particles_layered -o "$J/particles_layered_8192.json"
        grep -hE '"(workload|ms_per_step|droplets_per_s|moves_per_s)"' "$J"/particles*_8192.json ;;
  ncupt) # the droplet kernel at 8192²
        log ncupt; $N --kernel-name-base demangled -k regex:pt_trace --launch-skip 1 --launch-count 1 \
          $B --size 8192 --steps 2 --warmup 0 --workloads particles > "$OUT/ncu_particles_8192.csv" 2>> "$OUT/ncu.err"
        echo "ncu rc=$?"; wc -l "$OUT"/ncu_particles_8192.csv ;;
  ranks) # 2 ranks sharing the GPU against one process, 2048² rivers-rain, 4 tiles
        log ranks; T="timeout 100 $G/talus"
        $T generate rivers-rain -o /tmp/r2048.tif --size 2048 --layers 4 -q
        A="-c configs/rivers-rain.ini --steps 200 --tile 1024 -q --no-preview --device cuda"
        $T erode /tmp/r2048.tif -o /tmp/one.tif -c configs/rivers-rain.ini --steps 200 -q \
          --no-preview --device cuda --report "$J/ranks_piece.json"
        $T erode /tmp/r2048.tif -o /tmp/p1.tif $A --report "$J/ranks_1.json"
        timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader,tcp \
          -np 2 $G/talus erode /tmp/r2048.tif -o /tmp/p2.tif $A --report "$J/ranks_2.json"
        cmp /tmp/one.tif /tmp/p1.tif && cmp /tmp/p1.tif /tmp/p2.tif && echo "ranks: outputs equal"
        echo "erosion s: one piece $(secs "$J/ranks_piece.json"), 1 process tiled $(secs "$J/ranks_1.json"), 2 ranks $(secs "$J/ranks_2.json")" ;;
  ncu)  # one step's kernels of each model, and the droplet kernels
        log ncu
        $N -k regex:stage_kernel --launch-skip 12 --launch-count 14 $B --size 2048 --steps 3 \
          --warmup 0 --workloads rivers_rain > "$OUT/ncu_rivers_rain.csv" 2>> "$OUT/ncu.err"
        $N -k regex:stage_kernel --launch-skip 10 --launch-count 8 $B --size 4096 --steps 3 \
          --warmup 0 --workloads heightfield > "$OUT/ncu_heightfield.csv" 2>> "$OUT/ncu.err"
        $N --kernel-name-base demangled -k regex:pt_ --launch-skip 6 --launch-count 6 $B --size 2048 --steps 3 --warmup 0 \
          --workloads particles > "$OUT/ncu_particles.csv" 2>> "$OUT/ncu.err"
        echo "ncu rc=$?"; wc -l "$OUT"/ncu_*.csv ;;
  gallery) # tools/gallery.sh's scenes on the GPU (the DEM ones need the data: skipped)
        log gallery; timeout 240 bash tools/gallery.sh "$G/talus" "$OUT/gallery" | tail -12
        tar -czf "$OUT/gallery.tar.gz" -C "$OUT" gallery && rm -rf "$OUT/gallery" ;;
  big)  # 8192² in one piece, both models (creep 0.002: the stability check at 8192² cells)
        log big; $B --size 8192 --steps 50 --warmup 5 --workloads heightfield,rivers_rain \
          --set sand.creep=0.002 -o "$J/one_8192.json" ;;
  esac
done
tar -czf "$OUT/json.tar.gz" -C "$OUT" json && rm -rf "$OUT/json"
