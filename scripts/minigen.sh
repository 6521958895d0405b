#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (run as root, or with sudo available):
#   bash scripts/minigen.sh run    install what is missing, build, install minigen (see below), answer one question
#                                  with the shipped chat model and run `minigen lab` (the course module's experiment)
#                                  into lab-report/
#   bash scripts/minigen.sh test   install what is missing, build, install minigen, run the whole test suite (ctest)
# Both install with `cmake --install` under PREFIX (default /usr/local): the program in PREFIX/bin (on the PATH), the
# shipped models, tokenizers and examples in PREFIX/share/minigen, and the Python module where Debian's python3 finds
# it (PREFIX/lib/python3.X/dist-packages); a python3 earlier on the PATH (pyenv) of the same version gets a link to it.
# The sanitizer build (MINIGEN_SANITIZE=1) is not installed: it tests, it is not the program people run.
# Environment: BUILD_DIR (default build), JOBS (default: cores), MINIGEN_SANITIZE=1 for the Debug build with ASan+UBSan,
# CTEST_EXCLUDE (a ctest -E regex) or CTEST_EXCLUDE_LABEL (a ctest -LE label, e.g. heavy) to leave tests out, LAB_FLAGS (e.g. --quick) for the run's lab.
# PREFIX (default /usr/local): where to install.
set -euo pipefail
cd "$(dirname "$0")/.."

command_name="${1:-}"
case "$command_name" in
  run | test) ;;
  *) echo "usage: bash scripts/minigen.sh run|test" >&2; exit 2 ;;
esac

# shellcheck source=scripts/install_packages.sh
source scripts/install_packages.sh
# ccache: a rebuild of the same checkout (CI's next run at the same path, ~/.ccache kept) compiles only what changed.
# A clone at another path misses: the compile lines carry the source path (-I, -DMINIGEN_SOURCE_DIR).
install_missing build-essential ccache cmake ninja-build pkg-config libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev \
  libhwy-dev libboost-dev libcpp-httplib-dev libcli11-dev nlohmann-json3-dev libicu-dev zlib1g-dev gnuplot-nox chromium curl nginx \
  pybind11-dev python3-dev python3-numpy python3-pytest python3-jinja2

build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"
cmake_flags=(-S . -B "$build_dir" -G Ninja)
if [[ "${MINIGEN_SANITIZE:-0}" == 1 ]]; then
  # Debug: no NDEBUG, so the assertions are checked too (CMakeLists.txt keeps it at -O1 with line tables).
  cmake_flags+=(-DCMAKE_BUILD_TYPE=Debug -DMINIGEN_SANITIZE=ON)
else
  cmake_flags+=(-DCMAKE_BUILD_TYPE=Release)
fi
prefix="${PREFIX:-/usr/local}"
cmake_flags+=(-DCMAKE_INSTALL_PREFIX="$prefix")
cmake "${cmake_flags[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs"

if [[ "${MINIGEN_SANITIZE:-0}" != 1 ]]; then
  # shellcheck source=scripts/install_minigen.sh
  source scripts/install_minigen.sh
  install_minigen "$build_dir" "$prefix"
fi

if [[ "$command_name" == test ]]; then
  ctest_flags=(--test-dir "$build_dir" --output-on-failure -j "$jobs")
  [[ -z "${CTEST_EXCLUDE:-}" ]] || ctest_flags+=(-E "$CTEST_EXCLUDE")
  [[ -z "${CTEST_EXCLUDE_LABEL:-}" ]] || ctest_flags+=(-LE "$CTEST_EXCLUDE_LABEL")
  # A test that runs `minigen …` by name runs the program just built (the installed one, or the sanitizer build).
  PATH="$PWD/$build_dir:$PATH" ctest "${ctest_flags[@]}"
  exit
fi

# The main job: the shipped chat model answers a question, then `minigen lab` runs the course module's experiment
# on the shipped base and SFT models and writes lab-report/report.md (LAB_FLAGS=--quick for the one-minute version).
# From here on `minigen` is the installed program, found on the PATH as a user will find it.
minigen info minigen-tiny-sft
echo
echo "\$ minigen generate --chat \"What does 'river' mean?\" --greedy"
minigen generate --chat "What does 'river' mean?" --greedy
echo
echo "\$ minigen lab --out lab-report --force ${LAB_FLAGS:-}"
# --force: lab-report is this job's own folder, so running the job again replaces the report it wrote before.
# shellcheck disable=SC2086  # LAB_FLAGS is a list of flags
minigen lab --out lab-report --force ${LAB_FLAGS:-}
