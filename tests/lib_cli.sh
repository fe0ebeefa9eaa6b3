# lib_cli.sh — sourced first by the tests/cli_*.sh tests: the talus binary
# ($T, from TALUS_BIN), the source tree ($SRC, from TALUS_SOURCE_DIR), a
# scratch directory ($W, removed at exit) and `check NAME EXPR`, which
# evaluates EXPR and counts it in $pass or $fail (printing NAME on failure),
# and same_as REF RUN, which compares two runs' output sets in $W.
# A test ends with its tally: echo "NAME: $pass passed, $fail failed" and
# [ $fail -eq 0 ] as its exit status.
set -u
T=${TALUS_BIN:?TALUS_BIN not set}
SRC=${TALUS_SOURCE_DIR:?TALUS_SOURCE_DIR not set}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $1" >&2; fi; }

# same_as REF RUN: every output file of RUN equals REF's, byte for byte.
same_as() {
  local s
  for s in '' _water _sand _sediment _columns _erosion _state; do
    cmp -s "$W/$1$s.tif" "$W/$2$s.tif" || { echo "  $2$s.tif differs from $1$s.tif" >&2; return 1; }
  done
}
