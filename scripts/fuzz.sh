#!/usr/bin/env bash
# Builds minigen's libFuzzer targets (fuzz/fuzz_*.cpp) with clang-14 and runs each one for SECONDS seconds on a
# scratch copy of its committed corpus (fuzz/corpus/<target>/ is never modified), with its dictionary when it has
# one (fuzz/dict/<target>.dict). Exits non-zero if any target crashes, breaks an invariant, times out or runs out of
# memory; the input that did it is kept in BUILD_DIR/fuzz-artifacts/.
#   bash scripts/fuzz.sh [SECONDS]    run every target (default 25 s each), JOBS of them at a time
#   bash scripts/fuzz.sh --list       print the targets
# Environment: BUILD_DIR (default build-fuzz), JOBS (default: cores). Installs what is missing (clang-14 and
# libclang-rt-14-dev for libFuzzer, and the libraries of the normal build) on Debian 12, as root or through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=()
for source in fuzz/fuzz_*.cpp; do
  name="$(basename "$source" .cpp)"
  targets+=("$name")
done

if [[ "${1:-}" == --list ]]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
seconds="${1:-25}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: bash scripts/fuzz.sh [SECONDS | --list]  (SECONDS: a whole number >= 1, got '$seconds')" >&2
  exit 2
fi
# shellcheck source=scripts/install_packages.sh
source scripts/install_packages.sh
install_missing build-essential cmake ninja-build pkg-config clang-14 libclang-rt-14-dev libhwy-dev \
  libboost-dev libcpp-httplib-dev libcli11-dev nlohmann-json3-dev libicu-dev zlib1g-dev

build_dir="${BUILD_DIR:-build-fuzz}"
jobs="${JOBS:-$(nproc)}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

echo "[fuzz] building ${#targets[@]} targets in $build_dir" >&2
if ! CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja -DMINIGEN_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$scratch/configure.log" 2>&1; then
  cat "$scratch/configure.log" >&2
  echo "scripts/fuzz.sh: configuring the fuzz build failed (is libclang-rt-14-dev installed?)" >&2
  exit 2
fi
# Only the fuzz targets and the libraries they link (fuzz_api_server links the serving stack; the lab is never built).
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >&2
artifacts="$build_dir/fuzz-artifacts"
mkdir -p "$artifacts"

# One target: its own copy of the corpus (new inputs land there, not in fuzz/corpus), its log, its exit code.
run_target() {
  local name="$1"
  local corpus="$scratch/corpus/$name"
  mkdir -p "$corpus"
  if [[ -d "fuzz/corpus/$name" ]]; then cp -R "fuzz/corpus/$name/." "$corpus/"; fi
  local options=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$artifacts/$name-")
  if [[ -f "fuzz/dict/$name.dict" ]]; then options+=(-dict="fuzz/dict/$name.dict"); fi
  local status=0
  "$build_dir/$name" "${options[@]}" "$corpus" >"$scratch/$name.log" 2>&1 || status=$?
  echo "$status" >"$scratch/$name.status"
}

echo "[fuzz] running each target for $seconds s, $jobs at a time" >&2
running=0
for name in "${targets[@]}"; do
  run_target "$name" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=0
printf '%-22s %12s %10s %8s  %s\n' target executions exec/s cov result
for name in "${targets[@]}"; do
  status="$(cat "$scratch/$name.status")"
  log="$scratch/$name.log"
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  coverage="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
  result=ok
  if [[ "$status" != 0 ]]; then
    result="FAILED (exit $status; log below, input in $artifacts/)"
    failed=1
  fi
  printf '%-22s %12s %10s %8s  %s\n' "$name" "${runs:-?}" "${speed:-?}" "${coverage:-?}" "$result"
done
if ((failed)); then
  for name in "${targets[@]}"; do
    if [[ "$(cat "$scratch/$name.status")" != 0 ]]; then
      echo "----- $name" >&2
      grep -v '^#[0-9]' "$scratch/$name.log" | tail -40 >&2
    fi
  done
  exit 1
fi
