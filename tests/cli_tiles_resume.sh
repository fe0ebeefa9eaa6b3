#!/usr/bin/env bash
# A tiled run on a disk store killed with SIGKILL at random points and
# continued with --resume (each run at another --store-level) writes the
# bytes of an uninterrupted run (its --state with the run accumulators of
# simulation.masks included); a corrupted tile file is caught by its
# checksum (clear error, non-zero exit, no output); bad tiling options,
# an out-of-range --store-level and a store of another run are refused
# with a message naming the problem.
source "$(dirname "$0")/lib_cli.sh"

chasm_scene init
A=(-c "$SRC/configs/chasm-source.ini" --set water.rain=0.01 --set support.iterations=2
   --set simulation.masks=true --steps 12 --tile 64 --steps-per-exchange 2 -q --no-preview --maps)
"$T" erode "$W/init.tif" -o "$W/ref.tif" -c "$SRC/configs/chasm-source.ini" --set water.rain=0.01 \
  --set support.iterations=2 --set simulation.masks=true --steps 12 -q --no-preview --maps \
  --state "$W/ref_state.tif"

"$T" erode "$W/init.tif" -o "$W/timed.tif" "${A[@]}" --store "$W/timed_store"
check "the tiled run equals the one-piece run" 'cmp -s "$W/ref.tif" "$W/timed.tif"'

# kill_at OP ARGS...: runs talus, which SIGKILLs itself right after its
# OP-th store operation (TALUS_TEST_KILL_AT_OP, io/store.c): a crash at a
# reproducible point, whatever the machine's load; prints "killed" when it
# died so (exit 137), nothing when the run finished first.
kill_at() {
  local op=$1
  shift
  TALUS_TEST_KILL_AT_OP=$op "$T" erode "$W/init.tif" -o "$W/out.tif" "${A[@]}" \
    --state "$W/out_state.tif" --store "$W/store" "$@" 2>>"$W/kills.log"
  [ $? -eq 137 ] && echo killed
}

# The run makes 1000-2000 store operations (puts, commits, drops). Three
# kills at random operations among the first 300 of each run, each run
# resuming from the store the last one left: together they stay inside
# the work (a resumed run redoes at most its open generation).
# Each run compresses its tiles at another --store-level (zstd's level
# changes the files, never the blobs read back): the output must not care.
RANDOM=$$
kills=0 resume=() levels=(1 -5 9)
for i in 1 2 3; do
  op=$(( 1 + RANDOM % 300 ))
  r=$(kill_at $op --store-level ${levels[i - 1]} "${resume[@]}")
  echo "kill $i at store operation $op: ${r:-finished first}"
  if [ "$r" = killed ]; then kills=$((kills + 1)); else break; fi
  resume=(--resume)
done
check "three runs were killed mid-way ($kills)" '[ $kills -eq 3 ]'
if [ ! -e "$W/out.tif" ]; then
  "$T" erode "$W/init.tif" -o "$W/out.tif" "${A[@]}" --state "$W/out_state.tif" --store "$W/store" \
    --resume --report "$W/resumed.json" --store-level 3
  check "the resumed run reports it resumed" 'grep -q "\"resumed\": true" "$W/resumed.json"'
fi
for s in '' _water _sand _sediment _columns _erosion _water_surface _state; do
  check "killed and resumed: out$s.tif == uninterrupted" 'cmp -s "$W/ref$s.tif" "$W/out$s.tif"'
done
check "the store is removed after the resumed run succeeds" '[ ! -e "$W/store" ]'

# A corrupted tile file: caught by its checksum, never used.
r=$(kill_at 600)
if [ "$r" = killed ]; then
  for f in "$W"/store/t*_p0.tzst; do
    printf '\xff' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") / 2 )) conv=notrunc status=none
  done
  "$T" erode "$W/init.tif" -o "$W/bad.tif" "${A[@]}" --store "$W/store" --resume 2>"$W/bad.err"
  rc=$?
  check "a corrupt tile file fails the run (exit $rc)" '[ $rc -ne 0 ]'
  check "the error names the corrupt file and the checksum" \
    'grep -q "corrupt" "$W/bad.err" && grep -qi "crc\|checksum" "$W/bad.err"'
  check "no output is written from a corrupt store" '[ ! -e "$W/bad.tif" ]'
  "$T" erode "$W/init.tif" -o "$W/x.tif" "${A[@]}" --steps 13 --store "$W/store" --resume 2>"$W/other.err"
  check "a store of another run (--steps differs) is refused" \
    '[ $? -ne 0 ] && grep -q "another run" "$W/other.err"'
else
  echo "corruption case skipped: the run finished before the kill" >&2
fi

# Bad values get a message naming the option.
bad() { "$T" erode "$W/init.tif" -o "$W/y.tif" -q --steps 1 "$@" 2>"$W/e.err" && return 1; grep -q -- "$1" "$W/e.err"; }
check "--tile 0 is refused" 'bad --tile 0'
check "--steps-per-exchange 0 is refused" 'bad --steps-per-exchange 0'
check "--mem-limit 4Q is refused" 'bad --mem-limit 4Q'
check "--store-level 20 is refused, naming the range" \
  'bad --store-level 20 && grep -q -- "--store-level expects an integer in \[-7, 19\]" "$W/e.err"'
check "--resume without --store is refused" 'bad --resume && grep -q -- "--store" "$W/e.err"'
check "a too small --mem-limit for the tile is refused" 'bad --mem-limit 100M --tile 1024'

echo "cli_tiles_resume: $pass passed, $fail failed"
[ $fail -eq 0 ]
