#!/usr/bin/env bash
# A full disk: writing outputs (talus erode, talus generate) or a tile store
# onto a small tmpfs fails with a message saying the disk is full, a
# non-zero exit and nothing half-written; a tiled run whose store filled up
# (while loading tiles, or in a later generation) resumes with --resume once
# there is room and gives the bytes of an uninterrupted run. Needs a tmpfs
# mount (root, as CI runs): skipped (77) where mounting is not allowed.
source "$(dirname "$0")/lib_cli.sh"
M="$W/mnt"
mkdir -p "$M"
cleanup() { umount "$M" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
if ! mount -t tmpfs -o size=600k tmpfs "$M" 2>/dev/null; then
  echo "cli_full_disk: cannot mount a tmpfs here (not root?): skipped"
  exit 77
fi
resize() { mount -o remount,size="$1" "$M"; }
empty_mnt() { [ -z "$(ls -A "$M")" ]; }

"$T" generate rivers-rain -o "$W/t.tif" --size 256 --seed 3
A=(-c "$SRC/configs/rivers-rain.ini" --steps 6 -q)

# Outputs of a run in one piece do not fit (surface, 5 maps, preview, report).
"$T" erode "$W/t.tif" -o "$M/out.tif" "${A[@]}" --maps --report "$M/run.json" 2>"$W/e1"
check "erode onto a full disk: non-zero exit" '[ $? -ne 0 ]'
check "erode onto a full disk: the message says the disk is full" \
  'grep -q "the disk holding .* is full" "$W/e1"'
check "erode onto a full disk: nothing left behind" empty_mnt
cat "$W/e1"

"$T" generate rivers-rain -o "$M/g.tif" --size 512 2>"$W/e2"
check "generate onto a full disk: non-zero exit" '[ $? -ne 0 ]'
check "generate onto a full disk: the message says the disk is full" 'grep -q "is full" "$W/e2"'
check "generate onto a full disk: nothing left behind" empty_mnt

# The reference: the same tiled run with room to spare.
B=("${A[@]}" --no-preview --tile 64 --steps-per-exchange 1)
"$T" erode "$W/t.tif" -o "$W/ref.tif" "${B[@]}"
# The store fills up while tiles are loaded (600k), then in a later
# generation (1600k); each time: a clear error, the store kept, no output;
# then --resume with room gives the reference bytes.
for size in 600k 1600k; do
  resize "$size"
  rm -rf "$M/st" "$W/out.tif"
  "$T" erode "$W/t.tif" -o "$W/out.tif" "${B[@]}" --store "$M/st" 2>"$W/e3"
  check "store on a full disk ($size): non-zero exit" '[ $? -ne 0 ]'
  check "store on a full disk ($size): 'No space left' and how to resume" \
    'grep -q "No space left on device" "$W/e3" && grep -q -- "--resume" "$W/e3"'
  check "store on a full disk ($size): no output" '[ ! -e "$W/out.tif" ]'
  cat "$W/e3"
  resize 64m
  "$T" erode "$W/t.tif" -o "$W/out.tif" "${B[@]}" --store "$M/st" --resume
  check "store on a full disk ($size): --resume with room succeeds" '[ $? -eq 0 ]'
  check "store on a full disk ($size): resumed == uninterrupted" 'cmp -s "$W/ref.tif" "$W/out.tif"'
done

echo "cli_full_disk: $pass passed, $fail failed"
[ $fail -eq 0 ]
