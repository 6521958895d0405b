#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root, or with sudo available):
#   bash scripts/minigen.sh run    install what is missing, build, generate with the shipped default model
#   bash scripts/minigen.sh test   install what is missing, build, run the whole test suite through ctest
# Environment: BUILD_DIR (default build), JOBS (default: cores), MINIGEN_SANITIZE=1 for an ASan+UBSan build,
# CTEST_EXCLUDE (a ctest -E regex) to leave tests out.
set -euo pipefail
cd "$(dirname "$0")/.."

command_name="${1:-}"
case "$command_name" in
  run | test) ;;
  *) echo "usage: bash scripts/minigen.sh run|test" >&2; exit 2 ;;
esac

packages=(build-essential cmake ninja-build pkg-config libgtest-dev libgmock-dev libbenchmark-dev libhwy-dev
  libcli11-dev nlohmann-json3-dev libicu-dev zlib1g-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "[minigen] installing missing Debian packages: ${missing[*]}" >&2
  as_root=()
  [[ $(id -u) -eq 0 ]] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"
cmake_flags=(-S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release)
if [[ "${MINIGEN_SANITIZE:-0}" == 1 ]]; then
  cmake_flags+=(-DMINIGEN_SANITIZE=ON)
fi
cmake "${cmake_flags[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs"

if [[ "$command_name" == test ]]; then
  ctest_flags=(--test-dir "$build_dir" --output-on-failure -j "$jobs")
  [[ -z "${CTEST_EXCLUDE:-}" ]] || ctest_flags+=(-E "$CTEST_EXCLUDE")
  ctest "${ctest_flags[@]}"
  exit
fi

model=models/minigen-tiny-sft
if [[ ! -d "$model" ]]; then
  # Until minigen ships trained weights, the run uses a deterministic random tiny model: the numbers are real,
  # the words are noise.
  model="$build_dir/random-tiny"
  [[ -d "$model" ]] || "$build_dir/minigen" init-random --family tiny --seed 1 --out "$model"
fi
"$build_dir/minigen" info "$model"
echo
echo "\$ minigen generate -m $model -p 'In the beginning' --greedy -n 32"
"$build_dir/minigen" generate -m "$model" -p "In the beginning" --greedy -n 32
# The course module's experiment: a 183-token prompt, 64 new tokens, with and without the KV cache.
for cache_flag in "" --no-cache; do
  echo
  echo "\$ minigen generate -m $model -f examples/genesis-183.txt --greedy --ignore-eos -n 64 $cache_flag"
  "$build_dir/minigen" generate -m "$model" -f examples/genesis-183.txt --greedy --ignore-eos -n 64 $cache_flag \
    >/dev/null
done
