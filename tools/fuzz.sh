#!/usr/bin/env bash
# Runs each libFuzzer target (tests/fuzz/fuzz_<area>.c) for FUZZ_SECONDS, one
# after another, so that a 2-core machine stays usable. Each target keeps its
# own corpus (seeded from the target's fuzz_seeds and tests/fuzz/corpus/<area>/)
# and its crash inputs under $FUZZ_BUILD; exits non-zero if any target failed.
#   FUZZ_SECONDS=600 tools/fuzz.sh [area...]
set -uo pipefail
secs=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-build-fuzz}
cc=${FUZZ_CC:-clang}
jobs=${JOBS:-2}

if ! command -v "$cc" >/dev/null; then
  echo "talus: make fuzz needs clang with libFuzzer ('$cc' not found); install clang or set FUZZ_CC" >&2
  exit 2
fi
# The fuzz build is its own tree: the whole library with ASan, UBSan and
# libFuzzer's coverage, no CUDA and no MPI (they read no untrusted bytes).
CC=$cc cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALUS_FUZZ=ON \
  -DTALUS_CUDA=OFF -DTALUS_MPI=OFF >/dev/null || exit 1

areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then
  for src in tests/fuzz/fuzz_*.c; do
    a=$(basename "$src" .c)
    a=${a#fuzz_}
    [ "$a" = driver ] || [ "$a" = util ] || areas+=("$a")
  done
fi
# Each area's plain driver too: it writes the target's seeds (-w).
targets=()
for a in "${areas[@]}"; do targets+=("fuzz_$a" "fuzz_${a}_libfuzzer"); done
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >/dev/null || exit 1

failed=()
for a in "${areas[@]}"; do
  t=fuzz_$a
  corpus=$build/fuzz/corpus/$a
  crashes=$build/fuzz/crashes/$a
  log=$build/fuzz/$a.log
  mkdir -p "$corpus" "$crashes"
  "$build/tests/fuzz/$t" -n 0 -w "$corpus" >/dev/null || { failed+=("$a (seeds)"); continue; }
  [ -d "tests/fuzz/corpus/$a" ] && cp -n "tests/fuzz/corpus/$a"/* "$corpus"/ 2>/dev/null
  echo "talus: fuzzing $a for ${secs}s (corpus $corpus, log $log)"
  # -timeout: an input that takes 30 s is a hang worth saving, not a slow case.
  if "$build/tests/fuzz/${t}_libfuzzer" -max_total_time="$secs" -timeout=30 \
    -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" >"$log" 2>&1; then
    grep -E '^#[0-9]+ +DONE|^stat::number_of_executed_units|^stat::peak_rss' "$log" | sed 's/^/  /'
  else
    failed+=("$a")
    tail -n 40 "$log" >&2
    echo "talus: $a failed; inputs saved in $crashes" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "talus: fuzz targets failed: ${failed[*]}" >&2
  exit 1
fi
echo "talus: ${#areas[@]} fuzz targets ran ${secs}s each without a failure"
