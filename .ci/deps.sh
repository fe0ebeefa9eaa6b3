#!/usr/bin/env bash
# Installs the Debian packages talus needs to build and test. As root it runs
# apt-get; otherwise it prints the exact command and fails.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libgdal-dev gdal-bin libzstd-dev libtiff-dev
      libjson-c-dev libopenmpi-dev openmpi-bin python3 binutils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "talus: missing packages: ${missing[*]}" >&2
  echo "talus: run as root:  $cmd" >&2
  exit 1
fi
echo "talus: installing ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
