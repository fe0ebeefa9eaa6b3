#!/usr/bin/env bash
# A 3-rank run on a shared disk store, one of whose ranks is killed with
# SIGKILL mid-run (mpirun then stops the others), continued with
# `mpirun -np 3 ... --resume`, writes the bytes of an uninterrupted
# one-process run; a store of 3 ranks is refused by a resume with 2.
set -u
T=${TALUS_BIN:?TALUS_BIN not set}
SRC=${TALUS_SOURCE_DIR:?TALUS_SOURCE_DIR not set}
source "$SRC/tests/mpi_env.sh"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $1" >&2; fi; }

"$T" generate chasm-source -o "$W/c300.tif" --size 300 --layers 8
gdal_translate -q -srcwin 0 50 300 200 "$W/c300.tif" "$W/init.tif"
P=(-c "$SRC/configs/chasm-source.ini" --set water.rain=0.01 --set support.iterations=2 --steps 12
   -q --no-preview --maps --device cpu)
A=("${P[@]}" --tile 64 --steps-per-exchange 2)
"$T" erode "$W/init.tif" -o "$W/ref.tif" "${P[@]}"

# The 3-rank run's length on this machine now, to aim the kill inside it.
t0=$(date +%s%N)
"${MPIRUN[@]}" -np 3 "$T" erode "$W/init.tif" -o "$W/timed.tif" "${A[@]}" --store "$W/timed_store"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "the 3-rank run equals one process" 'cmp -s "$W/ref.tif" "$W/timed.tif"'

# kill_rank MS ARGS...: starts 3 ranks, SIGKILLs one of them (chosen at
# random) after MS ms; prints "killed" when it was still running.
kill_rank() {
  local ms=$1
  shift
  "${MPIRUN[@]}" -np 3 "$T" erode "$W/init.tif" -o "$W/out.tif" "${A[@]}" --store "$W/store" \
    "$@" >>"$W/kills.log" 2>&1 &
  local pid=$! ranks
  sleep "$(awk "BEGIN {print $ms / 1000}")"
  mapfile -t ranks < <(ps -o pid= --ppid $pid)
  if [ ${#ranks[@]} -gt 0 ] && kill -9 ${ranks[RANDOM % ${#ranks[@]}]} 2>/dev/null; then
    echo killed
  fi
  wait $pid 2>/dev/null
}

RANDOM=$$
killed=0
for i in 1 2 3; do
  rm -f "$W/out.tif"
  at=$(( ms / 3 + RANDOM % (ms / 2 + 1) ))
  r=$(kill_rank $at)
  echo "try $i: kill after $at ms of a ${ms} ms run: ${r:-finished first}"
  if [ "$r" = killed ]; then killed=1; break; fi
done
check "a rank was killed mid-way" '[ $killed -eq 1 ]'
check "the killed run wrote no output" '[ ! -e "$W/out.tif" ]'
"${MPIRUN[@]}" -np 2 "$T" erode "$W/init.tif" -o "$W/x.tif" "${A[@]}" --store "$W/store" \
  --resume 2>"$W/other.err"
check "a 3-rank store is refused by 2 ranks" '[ $? -ne 0 ] && grep -q "another run" "$W/other.err"'
"${MPIRUN[@]}" -np 3 "$T" erode "$W/init.tif" -o "$W/out.tif" "${A[@]}" --store "$W/store" \
  --resume --report "$W/resumed.json"
check "the resumed run reports it resumed" 'grep -q "\"resumed\": true" "$W/resumed.json"'
for s in '' _water _sand _sediment _columns _erosion; do
  check "rank killed and resumed: out$s.tif == one process" 'cmp -s "$W/ref$s.tif" "$W/out$s.tif"'
done
check "the store is removed after the resumed run succeeds" '[ ! -e "$W/store" ]'

echo "cli_mpi_resume: $pass passed, $fail failed"
[ $fail -eq 0 ]
