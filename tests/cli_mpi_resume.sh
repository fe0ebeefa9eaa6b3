#!/usr/bin/env bash
# A 3-rank run on a shared disk store, one of whose ranks is killed with
# SIGKILL mid-run (mpirun then stops the others), continued with
# `mpirun -np 3 ... --resume`, writes the bytes of an uninterrupted
# one-process run; a store of 3 ranks is refused by a resume with 2.
source "$(dirname "$0")/lib_cli.sh"
source "$SRC/tests/mpi_env.sh"

chasm_scene init
P=(-c "$SRC/configs/chasm-source.ini" --set water.rain=0.01 --set support.iterations=2 --steps 12
   -q --no-preview --maps --device cpu)
A=("${P[@]}" --tile 64 --steps-per-exchange 2)
"$T" erode "$W/init.tif" -o "$W/ref.tif" "${P[@]}"

"${MPIRUN[@]}" -np 3 "$T" erode "$W/init.tif" -o "$W/timed.tif" "${A[@]}" --store "$W/timed_store"
check "the 3-rank run equals one process" 'cmp -s "$W/ref.tif" "$W/timed.tif"'

# kill_rank RANK OP: starts 3 ranks; rank RANK SIGKILLs itself right after
# its OP-th store operation (TALUS_TEST_KILL_AT_OP, io/store.c), so the
# crash lands inside the run whatever the machine's load (mpirun then stops
# the others and exits 137); prints "killed" when it happened.
kill_rank() {
  local victim=$1 op=$2 ctx=() r
  for r in 0 1 2; do
    [ $r -gt 0 ] && ctx+=(:)
    ctx+=(-np 1)
    [ $r -eq "$victim" ] && ctx+=(env TALUS_TEST_KILL_AT_OP="$op")
    ctx+=("$T" erode "$W/init.tif" -o "$W/out.tif" "${A[@]}" --store "$W/store")
  done
  "${MPIRUN[@]}" "${ctx[@]}" >>"$W/kills.log" 2>&1
  [ $? -eq 137 ] && grep -q "rank $victim .*signal 9" "$W/kills.log" && echo killed
}

# Each rank makes a few hundred store operations in this run: a random
# rank dies at a random one of its first 120.
RANDOM=$$
victim=$((RANDOM % 3)) op=$((1 + RANDOM % 120))
r=$(kill_rank $victim $op)
echo "rank $victim killed at its store operation $op: ${r:-finished first}"
killed=0
[ "$r" = killed ] && killed=1
check "a rank was killed mid-way" '[ $killed -eq 1 ]'
check "the killed run wrote no output" '[ ! -e "$W/out.tif" ]'
"${MPIRUN[@]}" -np 2 "$T" erode "$W/init.tif" -o "$W/x.tif" "${A[@]}" --store "$W/store" \
  --resume 2>"$W/other.err"
check "a 3-rank store is refused by 2 ranks" '[ $? -ne 0 ] && grep -q "another run" "$W/other.err"'
"${MPIRUN[@]}" -np 3 "$T" erode "$W/init.tif" -o "$W/out.tif" "${A[@]}" --store "$W/store" \
  --resume --report "$W/resumed.json"
check "the resumed run reports it resumed" 'grep -q "\"resumed\": true" "$W/resumed.json"'
for s in '' _water _sand _sediment _columns _erosion _water_surface; do
  check "rank killed and resumed: out$s.tif == one process" 'cmp -s "$W/ref$s.tif" "$W/out$s.tif"'
done
check "the store is removed after the resumed run succeeds" '[ ! -e "$W/store" ]'

echo "cli_mpi_resume: $pass passed, $fail failed"
[ $fail -eq 0 ]
