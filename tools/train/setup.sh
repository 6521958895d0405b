#!/usr/bin/env bash
# Installs what tools/train needs beyond Debian's python3-torch and python3-numpy: OpenBLAS (libopenblas0-openmp).
#
#   bash tools/train/setup.sh        (as root)
#
# Installing OpenBLAS makes Debian switch the system-wide libblas.so.3/liblapack.so.3 alternatives to it, which would
# change numpy's and torch's results for every other program on the machine (tools/reference's fixtures among them).
# This script puts the alternatives back as they were; the training scripts load OpenBLAS for their own process only
# (runtime.py puts its directory first on LD_LIBRARY_PATH).
set -euo pipefail

for package in python3-torch python3-numpy python3-regex; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    echo "note: $package is not installed (apt-get install $package)" >&2
done
if dpkg-query -W -f='${Status}' libopenblas0-openmp 2>/dev/null | grep -q "install ok installed"; then
  echo "libopenblas0-openmp is installed"
  exit 0
fi
[[ $(id -u) -eq 0 ]] || { echo "error: run as root" >&2; exit 1; }

declare -A before
for name in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
  before[$name]="$(update-alternatives --query "$name" 2>/dev/null | sed -n 's/^Value: //p')"
done
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libopenblas0-openmp >/dev/null
for name in "${!before[@]}"; do
  if [[ -n "${before[$name]}" ]]; then
    update-alternatives --set "$name" "${before[$name]}"
  fi
done
echo "installed libopenblas0-openmp in /usr/lib/x86_64-linux-gnu/openblas-openmp; system BLAS left as it was"
