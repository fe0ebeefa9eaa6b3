#!/bin/sh
# gpu_pack.sh — packs what benchmarks/gpu_session.sh unpacks on the device
# machine, into .gpu/ (ignored: add "/.gpu/" to .git/info/exclude), from a
# CUDA + MPI build made here:
#   cmake -S . -B /tmp/build-gpu -DCMAKE_BUILD_TYPE=Release -DTALUS_CUDA=ON \
#     -DTALUS_MPI=ON -DTALUS_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc
#   cmake --build /tmp/build-gpu -j2 --target talus talus_bench test_gpu
#   sh benchmarks/gpu_pack.sh /tmp/build-gpu
# The libraries are the binaries' needs less glibc's and less OpenMPI's
# closure: the device machine's own OpenMPI 4.1.6 serves libmpi.so.40, and
# Debian's copies of its needs loaded beside it crashed mpirun (2026-11-26).
set -eu
B=${1:-/tmp/build-gpu}
G=.gpu
rm -rf "$G" && mkdir -p "$G/stage/benchmarks" "$G/stage/tests" "$G/lib"
cp "$B/talus" "$G/stage/" && cp "$B/benchmarks/talus_bench" "$G/stage/benchmarks/"
cp "$B/tests/test_gpu" "$G/stage/tests/"
libs_of() { ldd "$@" | awk '/=> \//{print $3}' | sort -u; }
libs_of "$G/stage/talus" "$G/stage/benchmarks/talus_bench" "$G/stage/tests/test_gpu" > "$G/all"
mpi=$(awk '/libmpi.so/{print; exit}' "$G/all")
{ [ -n "$mpi" ] && { echo "$mpi"; libs_of "$mpi"; }; } | sort -u > "$G/skip" || true
grep -vxFf "$G/skip" "$G/all" | grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*|libcuda)\.so' \
  | while read -r l; do cp -L "$l" "$G/lib/"; done
tar -cJf "$G/bin.tar.xz" -C "$G/stage" talus benchmarks/talus_bench tests/test_gpu
tar -cJf "$G/libs.tar.xz" -C "$G/lib" .
tar -cJf "$G/root.tar.xz" -C / usr/share/proj usr/share/gdal
rm -rf "$G/stage" "$G/lib" "$G/all" "$G/skip"
du -ch "$G"/*.tar.xz
