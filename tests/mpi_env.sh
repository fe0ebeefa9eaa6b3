# mpi_env.sh — sourced by the cli_mpi*.sh tests: finds mpirun and a talus
# built with MPI, or exits 77 (skipped) saying why. Sets MPIRUN (an array):
# oversubscribed, root allowed (CI runs as root on 2 cores), one OpenMP
# thread per rank, ranks yield when idle (they outnumber the cores).
MPIRUN_BIN=$(command -v mpirun) || { echo "skipped: no mpirun" >&2; exit 77; }
"$TALUS_BIN" --version | grep -qi "mpi" || { echo "skipped: talus built without MPI" >&2; exit 77; }
export OMP_NUM_THREADS=1
MPIRUN=("$MPIRUN_BIN" --oversubscribe --allow-run-as-root --bind-to none
        --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp -x OMP_NUM_THREADS)
"${MPIRUN[@]}" -np 2 true >/dev/null 2>&1 || { echo "skipped: mpirun -np 2 does not start here" >&2; exit 77; }
