#!/usr/bin/env bash
# cli_params.sh — `talus params`: the key table, --section, the effective
# configuration as INI (which must load back to itself), every preset in
# configs/, and the error messages a user sees for bad keys and values.
set -u
bin=${TALUS_BIN:-}
src=${TALUS_SOURCE_DIR:-}
if [[ -z $bin || ! -x $bin || -z $src ]]; then
  echo "cli_params: skipped: TALUS_BIN or TALUS_SOURCE_DIR unset"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAILED: $*" >&2; fails=$((fails + 1)); }

# The table: every section, one line per key.
"$bin" params >"$tmp/table" || fail "talus params exited $?"
keys=$(grep -c '^  [a-z0-9_]*\.[a-z0-9_]* ' "$tmp/table")
((keys >= 70)) || fail "table lists $keys keys"
for s in simulation water sand erosion horizontal support input source1 source4; do
  grep -q "^\[$s\]" "$tmp/table" || fail "section [$s] missing from the table"
done
grep -q '^  water.rain  *real  *0.07  *\[0, 10\]  *m/s ' "$tmp/table" ||
  fail "water.rain line lacks type/default/range/unit"
n=$("$bin" params --section water | grep -c '^  water\.')
((n == 10)) || fail "--section water lists $n keys"

# The effective configuration as INI round-trips through -c.
"$bin" params --ini -c "$src/configs/rivers-source.ini" --set water.rain=0.0125 \
  >"$tmp/a.ini" || fail "--ini exited $?"
grep -q '^rain = 0.0125 ' "$tmp/a.ini" || fail "--set not reflected in --ini"
"$bin" params --ini -c "$tmp/a.ini" >"$tmp/b.ini" || fail "reloading --ini output failed"
cmp -s "$tmp/a.ini" "$tmp/b.ini" || fail "--ini output does not reload to itself"

# Every preset loads.
for f in "$src"/configs/*.ini; do
  "$bin" params --ini -c "$f" >/dev/null 2>"$tmp/err" || fail "$(basename "$f"): $(cat "$tmp/err")"
done

# Errors name the key, suggest, give the range, and the file:line.
expect_error() { # expected-text args...
  local want=$1
  shift
  if "$bin" params --ini "$@" >/dev/null 2>"$tmp/err"; then
    fail "params $* succeeded"
  elif ! grep -qF -- "$want" "$tmp/err"; then
    fail "params $*: expected '$want' in: $(cat "$tmp/err")"
  fi
}
expect_error "did you mean 'water.rain'?" --set water.rian=1
expect_error "did you mean 'horizontal.split_size'?" --set erosion.split_size=1
expect_error "outside [0, 10] m/s" --set water.rain=11
expect_error "not a finite number" --set water.rain=nan
expect_error "not a boolean" --set water.outflow_border=maybe
expect_error "not one of layered|heightfield" --set simulation.model=voxel
printf '[water]\nrain = 0.01\n[watr]\n' >"$tmp/bad.ini"
expect_error "$tmp/bad.ini:3: unknown section [watr]; did you mean [water]?" -c "$tmp/bad.ini"
expect_error "cannot open '$tmp/missing.ini'" -c "$tmp/missing.ini"

if ((fails)); then
  echo "cli_params: $fails failed"
  exit 1
fi
echo "cli_params: passed"
